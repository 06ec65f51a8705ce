import { z } from 'zod';

/**
 * The eval watcher's config (read by their entrypoints/eval_benchmarks.py 340-637): lm_eval
 * watch form, checkpoint-list form, or our OLMES form. What the launcher acts on is typed (the eval
 * standard, where results go, the task groups' GPUs); other keys pass through to their script.
 */

const positiveInt = z.number().int().positive();

const benchmark = z.looseObject({
  task: z.string().min(1),
  num_fewshot: z.number().int().min(0).optional(),
});

export const evalConfigSchema = z.looseObject({
  harness: z.enum(['lm_eval', 'olmes']).optional(),
  seed: z.number().int().optional(),
  output_dir: z.string().min(1).optional(),
  vllm: z
    .looseObject({
      tensor_parallel_size: positiveInt.optional(),
      dtype: z.string().optional(),
      gpu_memory_utilization: z.number().gt(0).max(1).optional(),
      max_model_len: positiveInt.optional(),
    })
    .optional(),
  temperature: z.number().min(0).optional(),
  // A mapping of task → tokens plus `default` (eval_benchmarks.py:475-481; a plain number crashes it).
  max_gen_toks: z.record(z.string(), positiveInt).optional(),
  benchmarks: z.array(benchmark).optional(),
  watch: z
    .looseObject({
      enable: z.boolean().optional(),
      local_dir: z.string().min(1).optional(),
      s3_prefix: z.string().min(1).optional(),
      pattern: z.string().min(1).optional(),
      poll_interval_s: z.number().positive().optional(),
      gpu_mode: z.enum(['auto', 'visible', 'absolute']).optional(),
      task_groups: z
        .array(
          z.looseObject({
            gpu: z.number().int().min(0),
            // Their worker reads bench["task"] (E/eval_benchmarks.py:493): a bare task name kills its thread.
            benchmarks: z.array(benchmark).min(1),
          }),
        )
        .optional(),
    })
    .optional(),
  checkpoints: z.array(z.looseObject({ name: z.string().min(1), path: z.string().min(1) })).optional(),
  olmes: z
    .looseObject({
      tasks: z.array(z.string().min(1)).min(1),
      model_type: z.string().optional(),
      num_workers: positiveInt.optional(),
      num_gpus: positiveInt.optional(),
      model_args: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});

export type EvalConfig = z.infer<typeof evalConfigSchema>;

/** Benchmarks that execute generated code: need HF_ALLOW_CODE_EVAL=1 and --confirm_run_unsafe_code. */
export const CODE_BENCHMARK_PATTERN = /^(mbpp|humaneval|codex|ds1000|apps)/i;
