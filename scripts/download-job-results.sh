#!/usr/bin/env bash
# download-job-results.sh <job> [rlvr download flags…] — thin wrapper over `rlvr download`.
set -euo pipefail
exec node "$(dirname "$0")/../bin/rlvr.js" download "$@"
