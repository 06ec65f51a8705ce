import { CODE_BENCHMARK_PATTERN } from './eval-schema';

/**
 * The team's evaluation standard, the one copy: the eval config rules check configs against it, the
 * batch evaluation runs every unit with it (a deviation is named and recorded). One model copy per GPU
 * (tensor parallelism > 1 gave wildly wrong scores), seed 42, temperature 0, max_model_len 4096,
 * gpu_memory_utilization 0.8, bfloat16, and a token budget per task.
 */
export interface EvalSettings {
  readonly seed: number;
  readonly temperature: number;
  readonly maxModelLen: number;
  readonly gpuMemoryUtilization: number;
  readonly dtype: string;
  /** Tokens a task may generate: per task, with `default` for the rest. */
  readonly maxGenToks: Readonly<Record<string, number>>;
}

/**
 * max_gen_toks per task (their NOTES "Recommended max_gen_toks by Benchmark": short budgets cut 10-15%
 * of answers off mid-reasoning). A task of a family (`minerva_math_algebra`) takes its family's.
 */
const MAX_GEN_TOKS: Readonly<Record<string, number>> = {
  gsm8k: 1024,
  gsm8k_cot: 1024,
  hendrycks_math: 2048,
  minerva_math: 2048,
  math_500: 2048,
  ifeval: 4096,
  default: 1024,
};

/** Tensor parallel is not a setting: it is always 1. */
export const EVAL_TENSOR_PARALLEL_SIZE = 1;

export const EVAL_STANDARD: EvalSettings = {
  seed: 42,
  temperature: 0,
  maxModelLen: 4096,
  gpuMemoryUtilization: 0.8,
  dtype: 'bfloat16',
  maxGenToks: MAX_GEN_TOKS,
};

export function maxGenToksFor(task: string, settings: EvalSettings = EVAL_STANDARD): number {
  const table = settings.maxGenToks;
  if (table[task] !== undefined) return table[task];
  const family = Object.keys(table)
    .filter((k) => k !== 'default' && task.startsWith(`${k}_`))
    .sort((a, b) => b.length - a.length)[0];
  return family ? table[family] : (table.default ?? MAX_GEN_TOKS.default);
}

/** Benchmarks that execute generated code (HF_ALLOW_CODE_EVAL, --confirm_run_unsafe_code). */
export function isCodeTask(task: string): boolean {
  return CODE_BENCHMARK_PATTERN.test(task);
}
