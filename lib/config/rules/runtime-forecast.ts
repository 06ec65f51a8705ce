import type { TrainingRule } from './rule';

/**
 * The plan's forecast against the job's max runtime. Its findings are made by the plan, which sees the
 * past runs a config alone does not (lib/forecast); the rule is here so `launcher.allow` can name it and
 * `rlvr lint --rules` lists it.
 */
export const runtimeForecast: TrainingRule = {
  id: 'RLVR124',
  name: 'runtime-forecast',
  doc: 'similar past runs say max_runtime ends the job before its last step (SageMaker stops it, paid, before _final)',
  severity: 'error',
  allowable: true,
  madeByPlan: true,
  check: () => [],
};
