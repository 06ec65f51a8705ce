import { EVAL_STANDARD } from '../eval-standard';
import type { EvalRule } from './rule';

export const evalSeed: EvalRule = {
  id: 'RLVR206',
  name: 'eval-seed',
  doc: `an eval seed other than the team's standard (${EVAL_STANDARD.seed}): scores are not comparable`,
  severity: 'warning',
  allowable: false,
  check: ({ config, file }) =>
    config.seed !== undefined && config.seed !== EVAL_STANDARD.seed
      ? [file.problem(['seed'], `is ${config.seed}; the team's standard is ${EVAL_STANDARD.seed}`)]
      : [],
};
