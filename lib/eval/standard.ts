/**
 * The team's evaluation standard (BRIEF §6), enforced for batch evaluation (issue #15): one model copy
 * per GPU (tensor parallel 1), seed 42, temperature 0, max_model_len 4096, gpu_memory_utilization 0.8,
 * bfloat16, max_gen_toks per task; code tasks run with HF_ALLOW_CODE_EVAL=1 and
 * --confirm_run_unsafe_code. A deviation is named with `--deviate key=value` and recorded with the
 * results. Pure.
 */
import { CODE_BENCHMARK_PATTERN, EVAL_STANDARDS } from '../config';
import { CONTAINER } from '../layout';
import type { Parsed } from './refs';

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

export const STANDARD: EvalSettings = {
  seed: EVAL_STANDARDS.seed,
  temperature: EVAL_STANDARDS.temperature,
  maxModelLen: EVAL_STANDARDS.maxModelLen,
  gpuMemoryUtilization: EVAL_STANDARDS.gpuMemoryUtilization,
  dtype: 'bfloat16',
  maxGenToks: MAX_GEN_TOKS,
};

/** The names `--deviate` takes, each with its setting. */
const DEVIATIONS = {
  seed: 'seed',
  temperature: 'temperature',
  max_model_len: 'maxModelLen',
  gpu_memory_utilization: 'gpuMemoryUtilization',
  dtype: 'dtype',
} as const;

export function maxGenToksFor(task: string, settings: EvalSettings = STANDARD): number {
  const table = settings.maxGenToks;
  if (table[task] !== undefined) return table[task];
  const family = Object.keys(table)
    .filter((k) => k !== 'default' && task.startsWith(`${k}_`))
    .sort((a, b) => b.length - a.length)[0];
  return family ? table[family] : (table.default ?? MAX_GEN_TOKS.default);
}

export function isCodeTask(task: string): boolean {
  return CODE_BENCHMARK_PATTERN.test(task);
}

/** What a deviation changes: `seed=123` → { key: 'seed', value: 123 }. */
export interface Deviation {
  /** As written on the command line (and recorded with the results). */
  readonly name: string;
  readonly value: string | number;
}

/**
 * `--deviate` values: `seed=123`, `max_model_len=8192`, `max_gen_toks.ifeval=2048`, … Tensor parallel
 * stays 1 (TP > 1 gave wildly wrong scores, BRIEF §6): no flag changes it.
 */
export function parseDeviations(given: readonly string[]): Parsed<Deviation[]> {
  const out: Deviation[] = [];
  const names = [...Object.keys(DEVIATIONS), 'max_gen_toks.<task>'].join(', ');
  for (const text of given) {
    const m = /^([a-z_]+(?:\.[\w.-]+)?)=(.+)$/.exec(text.trim());
    if (!m) return { ok: false, problem: `--deviate ${text}: write name=value (one of ${names})` };
    const [, name, raw] = m;
    if (name === 'tensor_parallel_size')
      return {
        ok: false,
        problem:
          '--deviate tensor_parallel_size: every unit runs on one GPU with tensor parallel 1 (TP > 1 gave wrong scores); no flag changes it',
      };
    const known = name in DEVIATIONS || name.startsWith('max_gen_toks.');
    if (!known) return { ok: false, problem: `--deviate ${name}: not a setting of the standard (${names})` };
    if (name === 'dtype') {
      if (!/^(bfloat16|float16|float32|auto)$/.test(raw))
        return { ok: false, problem: `--deviate dtype=${raw}: bfloat16, float16, float32 or auto` };
      out.push({ name, value: raw });
      continue;
    }
    const value = Number(raw);
    const integer = name !== 'temperature' && name !== 'gpu_memory_utilization';
    const valid =
      Number.isFinite(value) &&
      // A seed may be 0; a length may not.
      (integer ? Number.isInteger(value) && value >= (name === 'seed' ? 0 : 1) : value >= 0) &&
      (name !== 'gpu_memory_utilization' || (value > 0 && value <= 1));
    if (!valid) return { ok: false, problem: `--deviate ${name}=${raw}: not a valid value` };
    out.push({ name, value });
  }
  return { ok: true, value: out };
}

/** The standard with the deviations applied. */
export function applyDeviations(deviations: readonly Deviation[]): EvalSettings {
  const settings = { ...STANDARD, maxGenToks: { ...STANDARD.maxGenToks } } as {
    -readonly [K in keyof EvalSettings]: EvalSettings[K];
  };
  for (const d of deviations) {
    if (d.name.startsWith('max_gen_toks.'))
      (settings.maxGenToks as Record<string, number>)[d.name.slice('max_gen_toks.'.length)] = Number(d.value);
    else (settings as Record<string, unknown>)[DEVIATIONS[d.name as keyof typeof DEVIATIONS]] = d.value;
  }
  return settings;
}

/** Warnings the standard attaches to a task. */
export function taskWarnings(task: string): string[] {
  if (task === 'hendrycks_math' || task.startsWith('hendrycks_math_'))
    return [
      `${task}: lm_eval's exact_match under-reports base models (their NOTES: 0.9% for Qwen3-1.7B-Base, 30% by a symbolic verifier); ` +
        'the team judges MATH by minerva_math (exact_match and math_verify)',
    ];
  return [];
}

export type Harness = 'lm_eval' | 'olmes';

/** One unit's command: the program and its arguments (no shell), and the environment it adds. */
export interface UnitCommand {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/**
 * The harness command for one unit. lm_eval: their eval script's command (E/eval_benchmarks.py
 * run_lm_eval) with the standard's values, the seed also in the model args. OLMES: its launcher in its
 * own venv, the same model settings as JSON.
 */
export function unitCommand(input: {
  readonly harness: Harness;
  readonly model: string;
  readonly task: string;
  readonly numFewshot: number;
  readonly outputDir: string;
  readonly settings: EvalSettings;
  readonly logSamples: boolean;
}): UnitCommand {
  const { settings: s, task } = input;
  const code = isCodeTask(task);
  const env: Record<string, string> = code ? { HF_ALLOW_CODE_EVAL: '1' } : {};
  if (input.harness === 'olmes') {
    const modelArgs = {
      tensor_parallel_size: EVAL_STANDARDS.tensorParallelSize,
      dtype: s.dtype,
      gpu_memory_utilization: s.gpuMemoryUtilization,
      max_length: s.maxModelLen,
      seed: s.seed,
    };
    const taskSpec = {
      task_name: task,
      num_shots: input.numFewshot,
      generation_kwargs: { temperature: s.temperature, max_gen_toks: maxGenToksFor(task, s) },
    };
    return {
      argv: [
        CONTAINER.olmesPython,
        '-m',
        'oe_eval.launch',
        '--model',
        input.model,
        '--model-type',
        'vllm',
        '--model-args',
        JSON.stringify(modelArgs),
        '--task',
        JSON.stringify(taskSpec),
        '--output-dir',
        input.outputDir,
        '--gpus',
        '1',
        ...(code ? ['--allow-code-execution'] : []),
      ],
      env,
    };
  }
  const modelArgs = [
    `pretrained=${input.model}`,
    `tensor_parallel_size=${EVAL_STANDARDS.tensorParallelSize}`,
    `dtype=${s.dtype}`,
    `gpu_memory_utilization=${s.gpuMemoryUtilization}`,
    `max_model_len=${s.maxModelLen}`,
    `seed=${s.seed}`,
  ].join(',');
  return {
    argv: [
      'lm_eval',
      '--model',
      'vllm',
      '--model_args',
      modelArgs,
      '--tasks',
      task,
      '--num_fewshot',
      String(input.numFewshot),
      '--batch_size',
      'auto',
      '--seed',
      String(s.seed),
      '--gen_kwargs',
      `temperature=${s.temperature},max_gen_toks=${maxGenToksFor(task, s)}`,
      '--output_path',
      input.outputDir,
      ...(input.logSamples ? ['--log_samples'] : []),
      ...(code ? ['--confirm_run_unsafe_code'] : []),
    ],
    env,
  };
}
