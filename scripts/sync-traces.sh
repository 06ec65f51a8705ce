#!/usr/bin/env bash
# sync-traces.sh <job-or-name-fragment> [interval-seconds] — thin wrapper over `rlvr sync-traces`.
set -euo pipefail
exec node "$(dirname "$0")/../bin/rlvr.js" sync-traces "$@"
