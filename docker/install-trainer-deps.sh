#!/bin/sh
# Step 4 of the Dockerfile: the trainer's dependencies into /opt/venv, torch held at the installed version.
set -eu
deps="$1"
py=/opt/venv/bin/python
if [ -f "$deps/uv.lock" ] && [ -f "$deps/pyproject.toml" ]; then
  (cd "$deps" && uv export --frozen --no-hashes --no-emit-project --format requirements-txt > /tmp/trainer-lock.txt)
  uv pip install --python "$py" --constraint /opt/constraints.txt -r /tmp/trainer-lock.txt
elif [ -f "$deps/pyproject.toml" ]; then
  uv pip install --python "$py" --constraint /opt/constraints.txt -r "$deps/pyproject.toml"
fi
for req in "$deps"/requirements*.txt; do
  [ -f "$req" ] || continue
  extra=""
  for c in "$deps"/constraints*.txt; do [ -f "$c" ] && extra="$extra --constraint $c"; done
  # shellcheck disable=SC2086
  uv pip install --python "$py" --constraint /opt/constraints.txt $extra -r "$req"
done
