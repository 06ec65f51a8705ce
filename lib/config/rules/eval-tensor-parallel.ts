import type { Problem } from '../../errors';
import { EVAL_TENSOR_PARALLEL_SIZE } from '../eval-standard';
import type { EvalRule } from './rule';

export const evalTensorParallel: EvalRule = {
  id: 'RLVR203',
  name: 'eval-tensor-parallel',
  doc: 'evaluation with tensor parallelism > 1 (vllm or olmes): it gave wildly wrong scores',
  severity: 'error',
  allowable: false,
  check: ({ config, file }) => {
    const problems: Problem[] = [];
    const tp = config.vllm?.tensor_parallel_size;
    if (tp !== undefined && tp !== EVAL_TENSOR_PARALLEL_SIZE) {
      problems.push(
        file.problem(
          ['vllm', 'tensor_parallel_size'],
          `is ${tp}: evaluation with tensor parallelism > 1 gives wrong scores`,
          'Set tensor_parallel_size: 1 (give the watcher more GPUs through watch.task_groups instead).',
        ),
      );
    }
    const olmesTp = config.olmes?.model_args?.tensor_parallel_size;
    if (olmesTp !== undefined && olmesTp !== 1) {
      problems.push(
        file.problem(
          ['olmes', 'model_args', 'tensor_parallel_size'],
          `is ${String(olmesTp)}: evaluation with tensor parallelism > 1 gives wrong scores`,
          'Set it to 1.',
        ),
      );
    }
    return problems;
  },
};
