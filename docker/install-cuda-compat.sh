#!/bin/sh
# Step 1 of the Dockerfile: CUDA forward compatibility. The base's CUDA needs a host driver at least as new
# as it (570.26 for 12.8); NVIDIA's cuda-compat package of the same CUDA (a newer user-mode libcuda in
# /usr/local/cuda/compat) lets it run on an older driver, on datacenter GPUs. Installed here unless the
# base has it already (nvidia/cuda and AWS deep-learning images do); the entrypoint puts it on
# LD_LIBRARY_PATH only when the host's driver is older than it.
set -eu
compat=/usr/local/cuda/compat
if [ -e "$compat/libcuda.so.1" ]; then
  echo "CUDA forward compatibility: the base has it ($compat/$(readlink "$compat/libcuda.so.1" || echo libcuda.so.1))"
  exit 0
fi
# The base's CUDA: CUDA_VERSION (nvidia/cuda images set it), else its toolkit's version.json.
version="${CUDA_VERSION:-}"
if [ -z "$version" ] && [ -f /usr/local/cuda/version.json ]; then
  version=$(awk '/"cuda" *:/ { cuda = 1 } cuda && /"version"/ { gsub(/[^0-9.]/, ""); print; exit }' /usr/local/cuda/version.json)
fi
case "$version" in
  [0-9]*.[0-9]*) ;;
  *)
    echo "cannot tell the base's CUDA version (no CUDA_VERSION, no /usr/local/cuda/version.json): cuda-compat must match it" >&2
    exit 1
    ;;
esac
package="cuda-compat-$(echo "$version" | cut -d. -f1)-$(echo "$version" | cut -d. -f2)"
# From the base's own CUDA apt repository (CUDA base images configure it).
apt-get update
apt-get install -y --no-install-recommends "$package"
rm -rf /var/lib/apt/lists/*
if [ ! -e "$compat/libcuda.so.1" ]; then
  echo "$package left no $compat/libcuda.so.1" >&2
  exit 1
fi
echo "CUDA forward compatibility: $package ($compat/$(readlink "$compat/libcuda.so.1" || echo libcuda.so.1))"
