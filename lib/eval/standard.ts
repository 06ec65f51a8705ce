/**
 * The evaluation standard (lib/config's EVAL_STANDARD) as batch evaluation runs it: deviations named
 * with `--deviate key=value` and recorded with the results, a unit's harness command (code tasks with
 * HF_ALLOW_CODE_EVAL=1 and --confirm_run_unsafe_code), warnings about tasks. Pure.
 */
import type { Harness } from '../eval-records';
import {
  editDistance,
  EVAL_STANDARD,
  EVAL_TENSOR_PARALLEL_SIZE,
  isCodeTask,
  maxGenToksFor,
  type EvalSettings,
} from '../config';
import { CONTAINER } from '../layout';
import type { Parsed } from './refs';

/**
 * The lm_eval tasks the launcher knows the harness has: those the image caches for its offline jobs by
 * default (docker/Dockerfile's LM_EVAL_TASKS), and the subtasks of its MATH groups (`minerva_math_algebra`).
 * An eval job has no network, so a task outside this list is usually a slip (`gsm8k_cott`).
 */
export const KNOWN_TASKS: readonly string[] = [
  'gsm8k',
  'gsm8k_cot',
  'minerva_math',
  'hendrycks_math',
  'ifeval',
  'mbpp',
  'humaneval',
];

/** The known groups whose subtasks lm_eval names `<group>_<subject>` (`minerva_math_algebra`). */
const TASK_GROUPS = ['minerva_math', 'hendrycks_math'];

export function isKnownTask(task: string): boolean {
  return KNOWN_TASKS.includes(task) || TASK_GROUPS.some((g) => task.startsWith(`${g}_`));
}

/** The known task nearest to a slip, when one is near enough to be what was meant. */
export function nearestTask(task: string, among: readonly string[] = KNOWN_TASKS): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of among) {
    const d = editDistance(task, name);
    if (!best || d < best.d) best = { name, d };
  }
  return best && best.d <= Math.max(2, Math.floor(task.length / 4)) ? best.name : undefined;
}

/** The names `--deviate` takes, each with its setting. */
const DEVIATIONS = {
  seed: 'seed',
  temperature: 'temperature',
  max_model_len: 'maxModelLen',
  gpu_memory_utilization: 'gpuMemoryUtilization',
  dtype: 'dtype',
} as const;

/** What a deviation changes: `seed=123` → { key: 'seed', value: 123 }. */
export interface Deviation {
  /** As written on the command line (and recorded with the results). */
  readonly name: string;
  readonly value: string | number;
}

/**
 * `--deviate` values: `seed=123`, `max_model_len=8192`, `max_gen_toks.ifeval=2048`, … Tensor parallel
 * stays 1 (TP > 1 gave wildly wrong scores in the team's runs): no flag changes it.
 */
export function parseDeviations(
  given: readonly string[],
  /** The run's tasks (a budget for one of them is taken), or 'any' before they are known. */
  runTasks: readonly string[] | 'any' = [],
): Parsed<Deviation[]> {
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
    if (name.startsWith('max_gen_toks.') && runTasks !== 'any') {
      // A budget for a task nothing runs changes nothing and is recorded as if it did: a slip.
      const task = name.slice('max_gen_toks.'.length);
      const budgets = Object.keys(EVAL_STANDARD.maxGenToks);
      const tasks = [...new Set([...KNOWN_TASKS, ...budgets, ...runTasks])];
      if (!isKnownTask(task) && !budgets.includes(task) && !runTasks.includes(task)) {
        const near = nearestTask(task, tasks);
        return {
          ok: false,
          problem: `--deviate ${name}: ${task} is neither a known task nor one of this run's${near ? ` (did you mean max_gen_toks.${near}?)` : ''}; max_gen_toks.<task> takes ${tasks.join(', ')}`,
        };
      }
    }
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
  const settings = { ...EVAL_STANDARD, maxGenToks: { ...EVAL_STANDARD.maxGenToks } } as {
    -readonly [K in keyof EvalSettings]: EvalSettings[K];
  };
  for (const d of deviations) {
    if (d.name.startsWith('max_gen_toks.'))
      (settings.maxGenToks as Record<string, number>)[d.name.slice('max_gen_toks.'.length)] = Number(d.value);
    else (settings as Record<string, unknown>)[DEVIATIONS[d.name as keyof typeof DEVIATIONS]] = d.value;
  }
  return settings;
}

/** Warnings the standard attaches to a task (an lm_eval task unknown to us: the nearest known one). */
export function taskWarnings(task: string, harness: Harness = 'lm_eval'): string[] {
  if (harness === 'lm_eval' && !isKnownTask(task)) {
    const near = nearestTask(task);
    return [
      `${task}: not a task the launcher knows the image holds (${KNOWN_TASKS.join(', ')})${near ? `; did you mean ${near}?` : ''} With no network, a unit of a task the image lacks fails`,
    ];
  }
  if (task === 'hendrycks_math' || task.startsWith('hendrycks_math_'))
    return [
      `${task}: lm_eval's exact_match under-reports base models (their NOTES: 0.9% for Qwen3-1.7B-Base, 30% by a symbolic verifier); ` +
        'the team judges MATH by minerva_math (exact_match and math_verify)',
    ];
  return [];
}

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
      tensor_parallel_size: EVAL_TENSOR_PARALLEL_SIZE,
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
    `tensor_parallel_size=${EVAL_TENSOR_PARALLEL_SIZE}`,
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
