import { EVAL_STANDARD } from '../eval-standard';
import type { EvalRule } from './rule';

export const evalTemperature: EvalRule = {
  id: 'RLVR207',
  name: 'eval-temperature',
  doc: 'an eval temperature other than 0: evaluation is greedy by standard',
  severity: 'warning',
  allowable: false,
  check: ({ config, file }) =>
    config.temperature !== undefined && config.temperature !== EVAL_STANDARD.temperature
      ? [file.problem(['temperature'], `is ${config.temperature}; evaluation is greedy (0) by standard`)]
      : [],
};
