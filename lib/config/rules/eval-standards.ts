/** Eval settings of BRIEF §6. Tensor parallelism > 1 gave wildly wrong scores: refused. */
export const EVAL_STANDARDS = {
  tensorParallelSize: 1,
  seed: 42,
  temperature: 0,
  maxModelLen: 4096,
  gpuMemoryUtilization: 0.8,
};
