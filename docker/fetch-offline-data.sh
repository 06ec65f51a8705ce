#!/bin/sh
# Step 5 of the Dockerfile: data the trainer's code and lm_eval would download at run time, where jobs
# have no network: the NLTK packages (NLTK_DATA_PACKAGES into $NLTK_DATA) and the datasets and metrics of
# the lm_eval tasks (LM_EVAL_TASKS into $HF_HOME). Each only when its library is in the main venv; a
# download that fails fails the build (a job would otherwise fail at its first sample or score).
set -eu
py=/opt/venv/bin/python
if [ -n "${NLTK_DATA_PACKAGES}" ] && "$py" -c 'import nltk' 2>/dev/null; then
  # shellcheck disable=SC2086
  "$py" -m nltk.downloader -d "${NLTK_DATA}" ${NLTK_DATA_PACKAGES}
else
  echo "NLTK data: none (no nltk in the main venv, or NLTK_DATA_PACKAGES is empty)"
fi
if [ -n "${LM_EVAL_TASKS}" ] && "$py" -c 'import lm_eval' 2>/dev/null; then
  HF_ALLOW_CODE_EVAL=1 "$py" - ${LM_EVAL_TASKS} <<'PY'
import sys
from lm_eval.tasks import TaskManager, get_task_dict

# Building a task downloads its dataset (and loads its metric modules, e.g. code_eval) into HF_HOME.
tasks = get_task_dict(sys.argv[1:], TaskManager())
print(f"lm_eval data cached for: {' '.join(sorted(sys.argv[1:]))} ({len(tasks)} tasks)")
PY
else
  echo "lm_eval data: none (no lm_eval in the main venv, or LM_EVAL_TASKS is empty)"
fi
