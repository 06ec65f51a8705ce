/** The kinds of job the launcher submits (training, eval, pass@k, and any registered): one registry. */
export {
  EVAL_KIND,
  KIND_TAG,
  kindJobNamePrefix,
  kindOfEnvironment,
  modeEnvironment,
  PASSK_KIND,
  registerJobKind,
  TRAINING_KIND,
  writesResultsOnly,
  type JobKind,
} from './registry';
