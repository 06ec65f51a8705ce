import { EVAL_STANDARDS } from './eval-standards';
import type { EvalRule } from './rule';

export const evalSeed: EvalRule = {
  id: 'RLVR206',
  name: 'eval-seed',
  doc: `an eval seed other than the team's standard (${EVAL_STANDARDS.seed}): scores are not comparable`,
  severity: 'warning',
  allowable: false,
  check: ({ config, file }) =>
    config.seed !== undefined && config.seed !== EVAL_STANDARDS.seed
      ? [file.problem(['seed'], `is ${config.seed}; the team's standard is ${EVAL_STANDARDS.seed}`)]
      : [],
};
