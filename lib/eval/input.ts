/**
 * `rlvr eval`'s input, checked: the options bin read from the flags, a named suite (a suites file, or
 * ours), or an eval config in the team's format (the non-watch form with `checkpoints` and `benchmarks`),
 * validated with file:line:column. The evaluation standard is enforced: a config value off the standard
 * is refused at its position unless `--deviate` names it. Flag strings are bin's to read: this file takes
 * typed options.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EVAL_STANDARD, loadEvalConfig, maxGenToksFor, YamlFile, type EvalConfig } from '../config';
import { ProblemsError, type Problem, type SourceLocation } from '../errors';
import type { EvalRequest } from './plan';
import { MAX_FEWSHOT, parseBenchmarks, parseCheckpointRef, type Benchmark, type LabelledRef } from './refs';
import { applyDeviations, parseDeviations, type Deviation } from './standard';
import type { Harness } from '../eval-records';

export const EVAL_DEFAULTS = {
  instanceType: 'ml.g6e.48xlarge',
  volumeGb: 200,
  /** Looked for in the working folder (the trainer repository) when --suites-file is not given. */
  suitesFile: 'configs/eval/suites.yaml',
} as const;

/**
 * Our suites: the team's eval watcher benchmarks (configs/eval/lm_eval_watch.yaml) without
 * hendrycks_math (which the standard warns about), and the code tasks.
 *
 * gsm8k_cot is 8-shot in the standard because the watcher beside every training job runs it 8-shot:
 * `eval results` merges watcher and eval-job results per (task, shots), so any other count would put a
 * batch evaluation in a column of its own, comparable with no checkpoint the watcher evaluated. The
 * Qwen3 technical report's 4-shot setting (for comparing with its published numbers) is `qwen3-report`.
 */
export const BUILT_IN_SUITES: Readonly<Record<string, readonly Benchmark[]>> = {
  standard: [
    { task: 'gsm8k_cot', numFewshot: 8 },
    { task: 'ifeval', numFewshot: 0 },
    { task: 'minerva_math', numFewshot: 4 },
  ],
  'qwen3-report': [
    { task: 'gsm8k_cot', numFewshot: 4 },
    { task: 'minerva_math', numFewshot: 4 },
  ],
  code: [
    { task: 'mbpp', numFewshot: 3 },
    { task: 'humaneval', numFewshot: 0 },
  ],
};

const flagProblem = (where: string, message: string, hint?: string): Problem => ({
  where,
  message,
  ...(hint ? { hint } : {}),
});

/** A suites file: `suites: {name: ["task:n" | {task, num_fewshot}]}`, positions kept for problems. */
function suitesFromFile(
  file: string,
  cwd: string,
): { suites: Map<string, Benchmark[]>; problems: (Problem & { suite?: string })[] } {
  const display = path.relative(cwd, file) || file;
  const yaml = YamlFile.read(file, display);
  const raw = yaml.toJS() as { suites?: unknown } | null;
  const suites = new Map<string, Benchmark[]>();
  const problems: (Problem & { suite?: string })[] = [];
  const at = (p: (string | number)[], message: string, hint?: string) =>
    problems.push({
      location: yaml.locate(p),
      where: p.join('.'),
      message,
      ...(hint ? { hint } : {}),
      ...(p.length > 1 ? { suite: String(p[1]) } : {}),
    });
  if (!raw || typeof raw.suites !== 'object' || raw.suites === null || Array.isArray(raw.suites)) {
    at(
      [],
      'expected `suites:`, a mapping of suite names to benchmark lists',
      'suites: {standard: [gsm8k_cot:4, ifeval:0]}',
    );
    return { suites, problems };
  }
  for (const [name, list] of Object.entries(raw.suites as Record<string, unknown>)) {
    if (!Array.isArray(list) || list.length === 0) {
      at(['suites', name], 'expected a list of benchmarks (task:num_fewshot, or {task, num_fewshot})');
      continue;
    }
    const out: Benchmark[] = [];
    list.forEach((item, i) => {
      const text =
        typeof item === 'string'
          ? item
          : item && typeof item === 'object' && 'task' in item
            ? `${String((item as { task: unknown }).task)}:${String((item as { num_fewshot?: unknown }).num_fewshot ?? 'missing')}`
            : String(item);
      const parsed = parseBenchmarks(text);
      if (!parsed.ok) at(['suites', name, i], parsed.problem);
      else out.push(...parsed.value);
    });
    suites.set(name, out);
  }
  return { suites, problems };
}

function suiteBenchmarks(
  name: string,
  suitesFile: string | undefined,
  cwd: string,
  problems: Problem[],
): { list: Benchmark[]; from: string } | undefined {
  const file = suitesFile
    ? path.resolve(cwd, suitesFile)
    : fs.existsSync(path.resolve(cwd, EVAL_DEFAULTS.suitesFile))
      ? path.resolve(cwd, EVAL_DEFAULTS.suitesFile)
      : undefined;
  if (file) {
    const found = suitesFromFile(file, cwd);
    // The file's shape, and the suite asked for: another suite's slip is not this run's problem.
    problems.push(
      ...found.problems
        .filter((p) => p.suite === undefined || p.suite === name)
        .map((p): Problem => ({ location: p.location, where: p.where, message: p.message, hint: p.hint })),
    );
    const list = found.suites.get(name);
    if (list) return { list, from: `suite ${name} (${path.relative(cwd, file) || file})` };
    if (suitesFile || !BUILT_IN_SUITES[name]) {
      problems.push(
        flagProblem(
          '--suite',
          `no suite "${name}" in ${file}`,
          `its suites: ${[...found.suites.keys()].join(', ') || 'none'}`,
        ),
      );
      return undefined;
    }
  }
  const builtIn = BUILT_IN_SUITES[name];
  if (!builtIn) {
    problems.push(
      flagProblem(
        '--suite',
        `no suite "${name}"`,
        `ours: ${Object.keys(BUILT_IN_SUITES).join(', ')}; or --suites-file <yaml>`,
      ),
    );
    return undefined;
  }
  return { list: [...builtIn], from: `suite ${name} (built in)` };
}

/** The config's settings that the standard fixes, with where each is written. */
function standardValues(
  config: EvalConfig,
): { path: (string | number)[]; name: string; value: unknown; standard: unknown }[] {
  const vllm = config.vllm ?? {};
  const out = [
    { path: ['seed'], name: 'seed', value: config.seed, standard: EVAL_STANDARD.seed },
    {
      path: ['temperature'],
      name: 'temperature',
      value: config.temperature,
      standard: EVAL_STANDARD.temperature,
    },
    {
      path: ['vllm', 'max_model_len'],
      name: 'max_model_len',
      value: vllm.max_model_len,
      standard: EVAL_STANDARD.maxModelLen,
    },
    {
      path: ['vllm', 'gpu_memory_utilization'],
      name: 'gpu_memory_utilization',
      value: vllm.gpu_memory_utilization,
      standard: EVAL_STANDARD.gpuMemoryUtilization,
    },
    { path: ['vllm', 'dtype'], name: 'dtype', value: vllm.dtype, standard: EVAL_STANDARD.dtype },
  ];
  for (const [task, n] of Object.entries(config.max_gen_toks ?? {}))
    out.push({
      path: ['max_gen_toks', task],
      name: `max_gen_toks.${task}`,
      value: n,
      // A task of a family (`minerva_math_algebra`) has its family's budget.
      standard: task === 'default' ? EVAL_STANDARD.maxGenToks.default : maxGenToksFor(task),
    });
  return out.filter((v) => v.value !== undefined);
}

/** An eval config's checkpoints and benchmarks, its values held to the standard. */
function fromEvalConfig(
  file: string,
  cwd: string,
  deviations: readonly Deviation[],
  problems: Problem[],
): { refs: LabelledRef[]; benchmarks: Benchmark[]; harness?: Harness; display: string } {
  const display = path.relative(cwd, file) || file;
  let loaded: ReturnType<typeof loadEvalConfig>;
  try {
    loaded = loadEvalConfig(file, display);
  } catch (err) {
    if (!(err instanceof ProblemsError)) throw err;
    // A checkpoint written as a bare path is the commonest slip: say the form an entry takes.
    throw new ProblemsError(
      err.message,
      err.problems.map((p) =>
        /^checkpoints\[\d+\]$/.test(p.where) && !p.hint ? { ...p, hint: CHECKPOINT_ENTRY_FORM } : p,
      ),
    );
  }
  const config = loaded.value;
  const at = (p: (string | number)[]): SourceLocation => loaded.file.locate(p);
  if (config.olmes?.tasks?.length && !config.benchmarks?.length)
    problems.push({
      location: at(['olmes', 'tasks']),
      where: 'olmes.tasks',
      message: `an OLMES watcher config (tasks ${config.olmes.tasks.join(', ')}): rlvr eval does not read OLMES task specs, whose shots and prompts OLMES fixes per spec`,
      hint: `name the tasks and shots: --harness olmes --benchmarks gsm8k:8,minerva_math:4 (or a config with \`benchmarks:\`); this file is for the eval watcher beside a training job`,
    });
  // Tensor parallel > 1 is refused by the eval config's own rules (RLVR203) when it loads.
  for (const v of standardValues(config)) {
    if (v.value === v.standard) continue;
    const named = deviations.find((d) => d.name === v.name);
    if (named && String(named.value) === String(v.value)) continue;
    problems.push({
      location: at(v.path),
      where: v.path.join('.'),
      message: `${v.name} ${String(v.value)} is not the team's standard ${String(v.standard)}: scores would not be comparable`,
      hint: `set ${String(v.standard)}, or pass --deviate ${v.name}=${String(v.value)} to run it and record the deviation with the results`,
    });
  }
  const refs: LabelledRef[] = [];
  (config.checkpoints ?? []).forEach((c, i) => {
    // Their paths are S3 folders or folders relative to where their script runs (the working folder);
    // a job reference (`<job>:step100`) is ours.
    const isJobRef = /^[A-Za-z0-9][\w-]*:(all|final|step\d+(,(step\d+|final))*)$/.test(c.path);
    // `org/Model` that is no folder here is the Hub model vLLM would load: mapped as submit maps models.
    const isModel =
      /^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/.test(c.path) && !fs.existsSync(path.resolve(cwd, c.path));
    const isLocal =
      !c.path.startsWith('s3://') && !isJobRef && !isModel && !/^(\.{1,2}\/|\/|~\/)/.test(c.path);
    const parsed = parseCheckpointRef(`${c.name}=${isLocal ? `./${c.path}` : c.path}`);
    if (!parsed.ok)
      problems.push({
        location: at(['checkpoints', i]),
        where: `checkpoints[${i}]`,
        message: parsed.problem,
      });
    else
      refs.push({
        ...parsed.value,
        source: { where: `checkpoints[${i}].path`, location: at(['checkpoints', i, 'path']) },
      });
  });
  const benchmarks: Benchmark[] = [];
  (config.benchmarks ?? []).forEach((b, i) => {
    const numFewshot = b.num_fewshot ?? 0;
    if (numFewshot > MAX_FEWSHOT)
      problems.push({
        location: at(['benchmarks', i, 'num_fewshot']),
        where: `benchmarks[${i}].num_fewshot`,
        message: `${numFewshot} shots; at most ${MAX_FEWSHOT} (the standard's 4096-token context holds no more)`,
      });
    else benchmarks.push({ task: b.task, numFewshot });
  });
  return { refs, benchmarks, ...(config.harness ? { harness: config.harness } : {}), display };
}

/** How an eval config lists a checkpoint (their eval script reads `name` and `path`). */
const CHECKPOINT_ENTRY_FORM =
  'each entry is a mapping: - {name: step100, path: s3://<bucket>/<prefix>/step100/} (path: an s3:// folder, a folder here, org/Model or <job>:step100)';

/** The job options `rlvr eval` and `rlvr passk` share, typed (bin reads them from the flags). */
export interface BatchJobOptions {
  readonly instanceType?: string;
  readonly instanceCount?: number;
  readonly spot?: boolean;
  readonly maxRuntimeSeconds?: number;
  readonly maxRetries?: number;
  readonly volumeGb?: number;
  readonly image?: string;
  /** Run in local Docker on these GPUs instead of SageMaker. */
  readonly local?: { readonly gpus: readonly number[] };
}

/** The job options with the defaults filled in. */
export interface BatchJobSettings {
  readonly instanceType: string;
  readonly instanceCount: number;
  readonly spot: boolean;
  readonly maxRuntimeSeconds?: number;
  readonly maxRetries?: number;
  readonly volumeGb: number;
  readonly image?: string;
  readonly local?: { readonly gpus: readonly number[] };
}

/** The defaults of a flag not given: one ml.g6e.48xlarge instance of 200 GB, on demand. */
export function withJobDefaults(options: BatchJobOptions): BatchJobSettings {
  return {
    instanceType: options.instanceType ?? EVAL_DEFAULTS.instanceType,
    instanceCount: options.instanceCount ?? 1,
    spot: Boolean(options.spot),
    ...(options.maxRuntimeSeconds ? { maxRuntimeSeconds: options.maxRuntimeSeconds } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    volumeGb: options.volumeGb ?? EVAL_DEFAULTS.volumeGb,
    ...(options.image ? { image: options.image } : {}),
    ...(options.local ? { local: options.local } : {}),
  };
}

/**
 * What to evaluate and how, read from the flags by bin; what the files named here hold (the suites
 * file, the eval config) is read by `resolveEvalRequest`.
 */
export interface EvalOptions extends BatchJobOptions {
  readonly checkpoints?: readonly LabelledRef[];
  readonly benchmarks?: readonly Benchmark[];
  readonly suite?: string;
  readonly suitesFile?: string;
  readonly config?: string;
  readonly deviations?: readonly Deviation[];
  readonly harness?: Harness;
  readonly logSamples?: boolean;
  readonly force?: boolean;
  readonly description?: string;
}

/**
 * The options, with the files they name and the standard's rules → what to evaluate and how. Every
 * problem at once (exit 2), with `flagProblems`, those bin found reading the flags: a flag with a problem
 * is left out of `options` and is not reported again as missing.
 */
export function resolveEvalRequest(
  options: EvalOptions,
  cwd: string,
  flagProblems: readonly Problem[] = [],
): EvalRequest {
  const problems: Problem[] = [...flagProblems];
  const deviations = options.deviations ?? [];
  const refs: LabelledRef[] = [...(options.checkpoints ?? [])];
  let benchmarks: Benchmark[] = [];
  let benchmarksFrom = '--benchmarks';
  let harness: Harness | undefined;
  let configProblems = false;
  if (options.config) {
    try {
      const fromConfig = fromEvalConfig(path.resolve(cwd, options.config), cwd, deviations, problems);
      refs.push(...fromConfig.refs);
      benchmarks.push(...fromConfig.benchmarks);
      benchmarksFrom = fromConfig.display;
      harness = fromConfig.harness;
    } catch (err) {
      // A config that does not load: its problems, with the flags' (every problem at once).
      if (!(err instanceof ProblemsError)) throw err;
      problems.push(...err.problems);
      configProblems = true;
    }
  }
  benchmarks.push(...(options.benchmarks ?? []));
  if (options.suite) {
    const suite = suiteBenchmarks(options.suite, options.suitesFile, cwd, problems);
    if (suite) {
      benchmarks.push(...suite.list);
      benchmarksFrom = options.benchmarks?.length ? `--benchmarks and ${suite.from}` : suite.from;
    }
  }
  // One entry per task: a task given twice with other shots is one mistake to name.
  const byTask = new Map<string, Benchmark>();
  for (const b of benchmarks) {
    const seen = byTask.get(b.task);
    if (seen && seen.numFewshot !== b.numFewshot)
      problems.push(
        flagProblem(
          '--benchmarks',
          `${b.task} is asked with ${seen.numFewshot} and ${b.numFewshot} shots: one per run`,
        ),
      );
    byTask.set(b.task, seen ?? b);
  }
  benchmarks = [...byTask.values()];
  // A budget (max_gen_toks.<task>) is checked with this run's tasks, known only now; the standard's
  // rules read deviations as they are written, name=value.
  const forTasks = parseDeviations(
    deviations.map((d) => `${d.name}=${d.value}`),
    benchmarks.map((b) => b.task),
  );
  if (!forTasks.ok) problems.push(flagProblem('--deviate', forTasks.problem));
  const refProblems = problems.some((p) => p.where === '--checkpoints' || p.where.startsWith('checkpoints'));
  if (refs.length === 0 && !refProblems && !configProblems)
    problems.push(
      flagProblem(
        '--checkpoints',
        'nothing to evaluate',
        options.config
          ? `${options.config} has no \`checkpoints:\` (a watch-form config gives benchmarks only): add --checkpoints <job>:step100,final`
          : 'e.g. --checkpoints <job>:step100,final --checkpoints base=Qwen/Qwen3-1.7B-Base',
      ),
    );
  const benchmarkProblems = problems.some(
    (p) =>
      p.where === '--benchmarks' ||
      p.where === '--suite' ||
      p.where.startsWith('suites') ||
      p.where.startsWith('benchmarks') ||
      p.where === 'olmes.tasks',
  );
  if (benchmarks.length === 0 && !benchmarkProblems && !configProblems)
    problems.push(
      flagProblem(
        '--benchmarks',
        'no benchmarks',
        'e.g. --benchmarks gsm8k_cot:8,ifeval:0, or --suite standard',
      ),
    );
  if (problems.length > 0) throw new ProblemsError(`rlvr eval: ${problems.length} problem(s)`, problems);
  return {
    refs,
    benchmarks,
    settings: applyDeviations(deviations),
    deviations: deviations.map((d) => `${d.name}=${d.value}`),
    harness: options.harness ?? harness ?? 'lm_eval',
    logSamples: Boolean(options.logSamples),
    force: Boolean(options.force),
    ...withJobDefaults(options),
    cwd,
    ...(options.description ? { description: options.description } : {}),
    benchmarksFrom,
  };
}
