#!/bin/sh
# Step 2 of the Dockerfile: the main venv with torch, vLLM and Ray; writes /opt/constraints.txt.
set -eu
if [ -n "${TORCH_VERSION}" ]; then
  uv venv --python "${PYTHON_VERSION}" /opt/venv
  uv pip install --python /opt/venv/bin/python --index-url "${TORCH_INDEX_URL}" "torch==${TORCH_VERSION}"
else
  # The base image's torch: see it from the venv instead of installing a second one.
  uv venv --system-site-packages --python "$(command -v python3)" /opt/venv
fi
/opt/venv/bin/python -c 'import torch; print(f"torch=={torch.__version__}")' > /opt/constraints.txt
uv pip install --python /opt/venv/bin/python --constraint /opt/constraints.txt \
  "vllm==${VLLM_VERSION}" "ray[default]==${RAY_VERSION}"
