#!/bin/sh
# Step 5 of the Dockerfile: data the trainer's code and lm_eval would download at run time, where jobs
# have no network: the NLTK packages (NLTK_DATA_PACKAGES into $NLTK_DATA) and the datasets and metrics of
# the lm_eval tasks (LM_EVAL_TASKS into $HF_HOME), with the trainer's own nltk and lm_eval. The launcher
# empties a list when the trainer depends on neither library; the image's labels name what is here, so a
# list that cannot be fetched fails the build rather than a job at its first sample or score.
set -eu
py=/opt/venv/bin/python
if [ -n "${NLTK_DATA_PACKAGES}" ]; then
  "$py" -c 'import nltk' 2>/dev/null || {
    echo "NLTK_DATA_PACKAGES names '${NLTK_DATA_PACKAGES}' but the main venv has no nltk" >&2
    exit 1
  }
  # nltk's downloader exits 0 when a download fails: raise, then check each package is findable.
  "$py" - ${NLTK_DATA_PACKAGES} <<'PY'
import os
import sys

import nltk

target = os.environ["NLTK_DATA"]
for package in sys.argv[1:]:
    nltk.download(package, download_dir=target, quiet=True, raise_on_error=True)
    info = nltk.downloader.Downloader().info(package)
    nltk.data.find(f"{info.subdir}/{package}", paths=[target])
print(f"NLTK data in {target}: {' '.join(sys.argv[1:])}")
PY
fi
if [ -n "${LM_EVAL_TASKS}" ]; then
  "$py" -c 'import lm_eval' 2>/dev/null || {
    echo "LM_EVAL_TASKS names '${LM_EVAL_TASKS}' but the main venv has no lm_eval" >&2
    exit 1
  }
  HF_ALLOW_CODE_EVAL=1 "$py" - ${LM_EVAL_TASKS} <<'PY'
import sys

from lm_eval.tasks import TaskManager, get_task_dict

# Building a task downloads its dataset (and loads its metric modules, e.g. code_eval) into HF_HOME.
tasks = get_task_dict(sys.argv[1:], TaskManager())
print(f"lm_eval data cached for: {' '.join(sorted(sys.argv[1:]))} ({len(tasks)} tasks)")
PY
fi
