import { EVAL_STANDARDS } from './eval-standards';
import type { EvalRule } from './rule';

export const evalTemperature: EvalRule = {
  id: 'RLVR207',
  name: 'eval-temperature',
  doc: 'an eval temperature other than 0: evaluation is greedy by standard',
  severity: 'warning',
  allowable: false,
  check: ({ config, file }) =>
    config.temperature !== undefined && config.temperature !== EVAL_STANDARDS.temperature
      ? [file.problem(['temperature'], `is ${config.temperature}; evaluation is greedy (0) by standard`)]
      : [],
};
