import { EVAL_STANDARD } from '../eval-standard';
import type { EvalRule } from './rule';

export const evalMaxModelLen: EvalRule = {
  id: 'RLVR208',
  name: 'eval-max-model-len',
  doc: `an eval vllm.max_model_len other than the standard ${EVAL_STANDARD.maxModelLen}: scores are not comparable`,
  severity: 'warning',
  allowable: false,
  check: ({ config, file }) =>
    config.vllm?.max_model_len !== undefined && config.vllm.max_model_len !== EVAL_STANDARD.maxModelLen
      ? [
          file.problem(
            ['vllm', 'max_model_len'],
            `is ${config.vllm.max_model_len}; standard is ${EVAL_STANDARD.maxModelLen}`,
          ),
        ]
      : [],
};
