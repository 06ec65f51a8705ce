/** The kinds of job the launcher submits (training, eval, pass@k, and any registered): one registry. */
export {
  EVAL_KIND,
  jobKind,
  KIND_TAG,
  kindJobNamePrefix,
  kindOfEnvironment,
  modeEnvironment,
  MODE_VARIABLE,
  PASSK_KIND,
  registerJobKind,
  TRAINING_KIND,
  writesResultsOnly,
  type JobKind,
} from './registry';
