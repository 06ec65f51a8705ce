#!/bin/sh
# Step 2 of the Dockerfile: the main venv with torch, vLLM and Ray, held to the trainer's lock
# (main-constraints.txt); writes /opt/constraints.txt, the torch every later step keeps.
set -eu
pins=/opt/rlvr-build/main-constraints.txt
py=/opt/venv/bin/python
torch=""
index=""
if [ -n "${TORCH_VERSION}" ]; then
  uv venv --python "${PYTHON_VERSION}" /opt/venv
  # The wheel from its own index (its CUDA build), alone: its dependencies come with the next install,
  # at the lock's versions.
  uv pip install --python "$py" --index-url "${TORCH_INDEX_URL}" --no-deps "torch==${TORCH_VERSION}"
  torch="torch==${TORCH_VERSION}"
  case "${TORCH_INDEX_URL}" in
    https://pypi.org/simple*) ;;
    # A torch from PyTorch's index (`2.9.0+cu128`) is found there; the rest from PyPI, at the lock's pins.
    *) index="--extra-index-url ${TORCH_INDEX_URL} --index-strategy unsafe-best-match" ;;
  esac
else
  # The base image's torch: see it from the venv instead of installing a second one.
  uv venv --system-site-packages --python "$(command -v python3)" /opt/venv
fi
# By its metadata: torch's own dependencies are not installed yet, so it cannot be imported here.
"$py" -c 'import importlib.metadata as m; print("torch==" + m.version("torch"))' > /opt/constraints.txt
# shellcheck disable=SC2086
uv pip install --python "$py" $index --constraint /opt/constraints.txt --constraint "$pins" \
  $torch "vllm==${VLLM_VERSION}" "ray[default]==${RAY_VERSION}"
