import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { EVAL_TENSOR_PARALLEL_SIZE, stringifyForTrainer } from '../config';
import { CONTAINER, JOB_ENV, JOB_FILES, RUN_FOLDER } from '../layout';
import type { JobContract } from '../trainers';
import { shellQuote, stopProcess, type Started } from './process';

type Yaml = Record<string, unknown>;

/** How often the watcher looks for new checkpoints, at most (their default is 300 s). */
export const WATCH_POLL_MAX_S = 10;

/**
 * The eval config the watcher runs with: it watches the view of this job's complete checkpoints (any
 * `watch.local_dir` / `pattern` / `s3_prefix` naming another run is replaced), writes into the run
 * folder, and polls often enough to end soon after the last checkpoint. Returns the notes to log.
 */
export function rewriteEvalConfig(
  evalConfig: Yaml,
  contract: NonNullable<JobContract['eval']>,
  options: { viewDir: string; outputDir: string; pollMaxS?: number },
): string[] {
  const pollMax = options.pollMaxS ?? WATCH_POLL_MAX_S;
  const notes: string[] = [];
  const watch = (evalConfig.watch ??= {}) as Yaml;
  for (const key of ['local_dir', 'pattern', 's3_prefix'] as const) {
    if (watch[key] !== undefined)
      notes.push(
        `eval config watch.${key} (${String(watch[key])}) replaced: the watcher evaluates this job's checkpoints`,
      );
    delete watch[key];
  }
  watch.enable = true;
  watch.local_dir = options.viewDir;
  watch.pattern = '*';
  // `watch.poll_interval_s` for their script: a section and a key.
  const [section, key] = contract.pollKey.split('.');
  const holder =
    key === undefined ? evalConfig : section === 'watch' ? watch : ((evalConfig[section] ??= {}) as Yaml);
  const pollKey = key ?? section;
  const poll = Number(holder[pollKey] ?? contract.pollDefault);
  if (!(poll <= pollMax)) {
    holder[pollKey] = pollMax;
    notes.push(
      `eval config ${contract.pollKey} ${poll} s → ${pollMax} s, so the job ends soon after its last checkpoint is evaluated`,
    );
  }
  if (evalConfig.output_dir !== undefined && evalConfig.output_dir !== options.outputDir)
    notes.push(
      `eval config output_dir (${String(evalConfig.output_dir)}) replaced by the run folder's evals/`,
    );
  evalConfig.output_dir = options.outputDir;
  return notes;
}

/** The result keys each checkpoint has in the watcher's summaries so far. */
export function evaluatedResults(
  outputDir: string,
  contract: NonNullable<JobContract['eval']>,
): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  if (!fs.existsSync(outputDir)) return found;
  const pattern = globToRegExp(contract.summaries);
  for (const f of fs.readdirSync(outputDir)) {
    if (!pattern.test(f)) continue;
    let summary: { results?: Record<string, Record<string, unknown>> };
    try {
      summary = JSON.parse(fs.readFileSync(path.join(outputDir, f), 'utf8'));
    } catch {
      continue; // being written
    }
    for (const [ckpt, results] of Object.entries(summary.results ?? {})) {
      const keys = found.get(ckpt) ?? new Set<string>();
      for (const k of Object.keys(results ?? {})) keys.add(k);
      found.set(ckpt, keys);
    }
  }
  return found;
}

/** Checkpoints of `names` that do not yet have every result key. */
export function awaitingResults(
  names: readonly string[],
  outputDir: string,
  contract: NonNullable<JobContract['eval']>,
): string[] {
  const found = evaluatedResults(outputDir, contract);
  return names.filter((n) => {
    const keys = found.get(n);
    return !keys || !contract.resultKeys.every((k) => keys.has(k));
  });
}

function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replaceAll('*', '.*')
    .replaceAll('?', '.');
  return new RegExp(`^${body}$`);
}

/**
 * Shows a complete checkpoint to the eval watcher: a folder of its own in the watch folder, with a link
 * to each file. Whatever the script adds (theirs links `model-00001-of-00001.safetensors` beside
 * `model.safetensors`, E/eval_benchmarks.py:196-203) stays out of the streamed checkpoint.
 */
export function exposeCheckpoint(viewDir: string, folder: string, name: string): void {
  const shown = path.join(viewDir, name);
  if (fs.existsSync(shown)) return;
  const staging = path.join(viewDir, `.${name}.partial`);
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  for (const entry of fs.readdirSync(folder))
    fs.symlinkSync(path.join(folder, entry), path.join(staging, entry));
  // Appears whole: the watcher never lists a half-made view.
  fs.renameSync(staging, shown);
}

/** Whether the script takes the checkpoint at all (their script needs one of `accepts`). */
export function scriptAccepts(
  contract: Pick<NonNullable<JobContract['eval']>, 'accepts'>,
  folder: string,
): boolean {
  return !contract.accepts || contract.accepts.some((f) => fs.existsSync(path.join(folder, f)));
}

/** The eval watcher of a job: its command, the view it watches, where its results go. */
export interface EvalWatcherPlan {
  readonly command: string;
  readonly viewDir: string;
  readonly outputDir: string;
  readonly contract: NonNullable<JobContract['eval']>;
}

/**
 * The watcher's config rewritten (its own view of complete checkpoints, results in the run folder) and
 * its command as the script takes it. Throws on an eval config it must not run.
 */
export function prepareEvalWatcher(input: {
  readonly evalConfigPath: string;
  readonly contract: NonNullable<JobContract['eval']>;
  readonly runDir: string;
  readonly tmpRoot: string;
  readonly evalGpus: string;
  /** Tests only: another command. */
  readonly commandOverride?: string;
  readonly pollMaxS?: number;
  readonly say: (line: string) => void;
  readonly fail: (message: string) => Error;
}): EvalWatcherPlan {
  const evalConfig = (parse(fs.readFileSync(input.evalConfigPath, 'utf8')) ?? {}) as Yaml;
  const tp = Number(((evalConfig.vllm ?? {}) as Yaml).tensor_parallel_size ?? 1);
  if (tp !== EVAL_TENSOR_PARALLEL_SIZE) {
    throw input.fail(
      `the eval config asks for tensor_parallel_size ${tp}; an eval watcher runs one model copy per GPU with tensor_parallel_size 1 (set vllm.tensor_parallel_size: 1)`,
    );
  }
  if (!input.evalGpus)
    throw input.fail(`an eval config was given but no eval GPUs (${JOB_ENV.evalGpus} is empty)`);
  const viewDir = path.join(input.tmpRoot, 'rlvr-eval-view');
  const outputDir = path.join(input.runDir, RUN_FOLDER.evals);
  const notes = rewriteEvalConfig(evalConfig, input.contract, {
    viewDir,
    outputDir,
    pollMaxS: input.pollMaxS,
  });
  for (const note of notes) input.say(note);
  fs.mkdirSync(outputDir, { recursive: true });
  fs.mkdirSync(viewDir, { recursive: true });
  const rewritten = path.join(outputDir, JOB_FILES.evalConfig);
  fs.writeFileSync(rewritten, stringifyForTrainer(evalConfig));
  const python = evalConfig.harness === 'olmes' ? CONTAINER.olmesPython : 'python';
  const command = (input.commandOverride || input.contract.command)
    .replaceAll('{python}', python)
    .replaceAll('{config}', shellQuote(rewritten))
    .replaceAll('{watch}', shellQuote(path.join(viewDir, '*')));
  return { command, viewDir, outputDir, contract: input.contract };
}

export interface EvalOutcome {
  readonly code: number | null;
  readonly timedOut: boolean;
  readonly evaluated: readonly string[];
  readonly missing: readonly string[];
}

/**
 * Training has ended: the watcher gets until `timeoutMs` to have results for every one of `names` (their
 * script never ends by itself), then SIGTERM, and SIGKILL `termGraceMs` later (at once when 0).
 */
export async function finishEvalWatcher(input: {
  readonly watcher: Started;
  readonly plan: EvalWatcherPlan;
  readonly names: readonly string[];
  readonly timeoutMs: number;
  readonly termGraceMs: number;
  readonly pollMs: number;
  readonly doneFile: string;
  readonly say: (line: string) => void;
}): Promise<EvalOutcome> {
  const { watcher, plan, names } = input;
  fs.writeFileSync(input.doneFile, `${new Date().toISOString()}\n`);
  input.say(
    `training ended: the eval watcher has ${Math.round(input.timeoutMs / 1000)} s to evaluate ${names.length} checkpoint(s)`,
  );
  const waiting = () =>
    plan.contract.ends === 'never' ? awaitingResults(names, plan.outputDir, plan.contract).length > 0 : true;
  const running = () => watcher.child.exitCode === null && watcher.child.signalCode === null;
  const deadline = Date.now() + input.timeoutMs;
  while (waiting() && Date.now() < deadline && running())
    await Promise.race([watcher.exited, new Promise((r) => setTimeout(r, Math.min(input.pollMs, 1000)))]);
  const missing = awaitingResults(names, plan.outputDir, plan.contract);
  const timedOut = missing.length > 0 && Date.now() >= deadline;
  const { code } = await stopProcess(watcher, input.termGraceMs);
  const evaluated = names.filter((n) => !missing.includes(n));
  input.say(
    `eval watcher stopped: evaluated ${evaluated.join(', ') || 'nothing'}${missing.length ? `; no results for ${missing.join(', ')}${timedOut ? ' (time ran out)' : ''}` : ''}`,
  );
  return { code, timedOut, evaluated, missing };
}
