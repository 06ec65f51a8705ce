/**
 * What a job without network reads from the image instead of downloading it: lm_eval's task data (its
 * datasets and metric modules, cached into HF_HOME by the build's LM_EVAL_TASKS step) and NLTK packages
 * (NLTK_DATA_PACKAGES). Our builds record both lists in labels, so a plan can tell, before anything
 * runs, whether an evaluation would find its data.
 */

export const LM_EVAL_TASKS_LABEL = 'rlvr.lm-eval-tasks';
export const NLTK_DATA_LABEL = 'rlvr.nltk-data';

/**
 * NLTK packages an lm_eval task downloads when it loads: ifeval's instruction checks call
 * `nltk.download("punkt_tab")` at import (lm_eval 0.4.9 tasks/ifeval/instructions_util.py), and a failed
 * download does not raise, so the run would end in an error at scoring, after all its generation.
 */
const TASK_NLTK: Readonly<Record<string, readonly string[]>> = {
  ifeval: ['punkt_tab'],
};

const words = (label: string | undefined) => new Set((label ?? '').split(/[\s,]+/).filter(Boolean));

export interface OfflineDataGap {
  readonly task: string;
  readonly missing: string;
  readonly fix: string;
}

/**
 * The tasks whose data the image does not hold (undefined when the image's labels do not say what it
 * holds: an image not built by rlvr, or built before these labels).
 */
export function offlineDataGaps(
  labels: Readonly<Record<string, string>> | undefined,
  tasks: readonly string[],
): OfflineDataGap[] | undefined {
  if (!labels || labels[LM_EVAL_TASKS_LABEL] === undefined) return undefined;
  const cached = words(labels[LM_EVAL_TASKS_LABEL]);
  const nltk = words(labels[NLTK_DATA_LABEL]);
  const gaps: OfflineDataGap[] = [];
  for (const task of [...new Set(tasks)]) {
    if (!cached.has(task)) {
      gaps.push({
        task,
        missing: `its dataset (the image caches lm_eval data for ${[...cached].join(', ') || 'no task'})`,
        fix: `--build-arg LM_EVAL_TASKS="${[...cached, task].join(' ')}"${cached.size ? '' : " (lm_eval comes with the trainer's dependencies: it must depend on lm-eval)"}`,
      });
    }
    for (const pkg of TASK_NLTK[task] ?? []) {
      if (!nltk.has(pkg)) {
        gaps.push({
          task,
          missing: `NLTK ${pkg} (the image holds ${[...nltk].join(', ') || 'no NLTK data'})`,
          fix: `--build-arg NLTK_DATA_PACKAGES="${[...nltk, pkg].join(' ')}"`,
        });
      }
    }
  }
  return gaps;
}
