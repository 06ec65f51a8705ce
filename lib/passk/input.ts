/**
 * `rlvr passk`'s input, checked: the model as `rlvr eval` takes it, the dataset as the repository's
 * pass@k script names it, its sampling settings, and the job flags `rlvr eval` has. Every problem is
 * named at once (exit 2) before anything is read from AWS.
 */
import * as path from 'node:path';
import { didYouMean } from '../config';
import { ProblemsError, type Problem } from '../errors';
import {
  parseCheckpointRef,
  parseJobFlags,
  type JobFlags,
  type LabelledRef,
  type ParsedJobFlags,
} from '../eval';
import type { PasskScriptContract } from '../trainers';

export interface PasskFlags extends JobFlags {
  model?: string;
  dataset?: string;
  split?: string;
  level?: string;
  n?: string;
  batchSize?: string;
  maxTokens?: string;
  temperature?: string;
  topP?: string;
  topK?: string;
  maxModelLen?: string;
  maxPrompts?: string;
  verifierWorkers?: string;
  trainerSrc?: string;
  datasetDir?: string;
  continue?: string;
  description?: string;
  resultsDir?: string;
}

export interface PasskRequest extends ParsedJobFlags {
  readonly model: LabelledRef;
  readonly dataset: string;
  /** The script's settings by their contract name (split, n, max_tokens, …), defaults filled in. */
  readonly settings: Readonly<Record<string, string>>;
  readonly trainerSrc: string;
  /** --local: a folder holding the dataset copy (save_to_disk), instead of the copy in S3. */
  readonly datasetDir?: string;
  /** An earlier campaign (a job, or a run folder) whose finished prompts this one keeps. */
  readonly continueFrom?: string;
  readonly description?: string;
  readonly resultsDir: string;
  readonly cwd: string;
}

const flagProblem = (where: string, message: string, hint?: string): Problem => ({
  where,
  message,
  ...(hint ? { hint } : {}),
});

/**
 * The values each of the script's settings takes. Its flag here is the script's own (`--top-p`), as
 * commander names it (`topP`).
 */
const SETTING_CHECKS: Readonly<Record<string, (v: string) => string | undefined>> = {
  split: (v) => (/^[A-Za-z0-9_.-]+$/.test(v) ? undefined : 'a split name, e.g. train'),
  level: (v) => (/^[1-5](,[1-5])*$/.test(v) ? undefined : 'MATH levels 1-5, comma-separated, e.g. 3,4,5'),
  n: (v) => wholeFrom(v, 1),
  batch_size: (v) => wholeFrom(v, 1),
  max_tokens: (v) => wholeFrom(v, 1),
  temperature: (v) => (/^\d+(\.\d+)?$/.test(v) ? undefined : 'a number ≥ 0, e.g. 1.0'),
  top_p: (v) =>
    /^(0?\.\d+|1(\.0+)?)$/.test(v) && Number(v) > 0 ? undefined : 'a number in (0, 1], e.g. 0.95',
  // vLLM takes -1 (or 0) for "no top-k".
  top_k: (v) => wholeFrom(v, -1),
  max_model_len: (v) => wholeFrom(v, 1),
  max_prompts: (v) => wholeFrom(v, 1),
  verifier_workers: (v) => wholeFrom(v, 1),
};

function wholeFrom(v: string, min: number): string | undefined {
  return /^-?\d+$/.test(v) && Number(v) >= min ? undefined : `a whole number from ${min}`;
}

/** `--top-p` → `topP`: the key commander gives the flag's value. */
const flagKey = (flag: string) =>
  flag.replace(/^--/, '').replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

export function parsePasskRequest(flags: PasskFlags, script: PasskScriptContract, cwd: string): PasskRequest {
  const problems: Problem[] = [];
  let model: LabelledRef | undefined;
  if (!flags.model)
    problems.push(
      flagProblem(
        '--model',
        'no model',
        'e.g. --model <job>:final, --model s3://bucket/folder/, --model Qwen/Qwen3-1.7B-Base',
      ),
    );
  else {
    const parsed = parseCheckpointRef(flags.model);
    if (!parsed.ok) problems.push(flagProblem('--model', parsed.problem));
    else if (
      parsed.value.ref.kind === 'job' &&
      (parsed.value.ref.select === 'all' ||
        (Array.isArray(parsed.value.ref.select) && parsed.value.ref.select.length !== 1))
    )
      problems.push(
        flagProblem(
          '--model',
          `${flags.model} names several checkpoints: a campaign measures one (e.g. <job>:final)`,
        ),
      );
    else model = parsed.value;
  }
  const dataset = flags.dataset;
  if (!dataset)
    problems.push(
      flagProblem('--dataset', 'no dataset', `one of ${Object.keys(script.datasets).join(', ')}`),
    );
  else if (!script.datasets[dataset]) {
    const near = didYouMean(dataset, Object.keys(script.datasets));
    problems.push(
      flagProblem(
        '--dataset',
        `${dataset} is not a dataset ${script.script} knows`,
        near ? `did you mean ${near}?` : `one of ${Object.keys(script.datasets).join(', ')}`,
      ),
    );
  } else {
    const entry = script.datasets[dataset];
    if ('hubOnly' in entry)
      problems.push(
        flagProblem(
          '--dataset',
          `${dataset} cannot run in a job: ${entry.hubOnly}, and jobs have no network`,
          'Measure a dataset whose copy the job can carry (gsm8k, math, mbpp, …).',
        ),
      );
  }
  const settings: Record<string, string> = {};
  // The script's settings, each from its flag here or the script's own default (recorded either way).
  for (const [name, setting] of Object.entries(script.settings)) {
    const check = SETTING_CHECKS[name];
    const given = flags[flagKey(setting.flag) as keyof PasskFlags] as string | undefined;
    const value = given ?? setting.default;
    if (value === undefined) continue;
    const problem = given !== undefined ? check?.(given) : undefined;
    if (problem) problems.push(flagProblem(setting.flag, `${given}: ${problem}`));
    else settings[name] = value;
  }
  // Their script keeps prompts up to max_model_len − max_tokens tokens: at 0 or below it keeps them all,
  // and one that does not fit makes vLLM fail the shard.
  if (
    settings.max_tokens !== undefined &&
    settings.max_model_len !== undefined &&
    Number(settings.max_tokens) >= Number(settings.max_model_len)
  )
    problems.push(
      flagProblem(
        flags.maxTokens !== undefined ? '--max-tokens' : '--max-model-len',
        `max_tokens ${settings.max_tokens} leaves no room for the prompt in max_model_len ${settings.max_model_len}`,
        'max_tokens must be below max_model_len (e.g. --max-model-len 4096 with --max-tokens 2048)',
      ),
    );
  if (settings.level !== undefined && dataset !== 'math')
    problems.push(flagProblem('--level', '--level filters MATH only', 'leave it out, or use --dataset math'));
  const job = parseJobFlags(flags, problems);
  if (flags.datasetDir !== undefined && !flags.local)
    problems.push(
      flagProblem('--dataset-dir', '--dataset-dir is for --local runs (a job reads the copy in S3)'),
    );
  if (problems.length > 0) throw new ProblemsError(`rlvr passk: ${problems.length} problem(s)`, problems);
  return {
    ...job,
    model: model!,
    dataset: dataset!,
    settings,
    trainerSrc: path.resolve(cwd, flags.trainerSrc ?? '.'),
    ...(flags.datasetDir ? { datasetDir: path.resolve(cwd, flags.datasetDir) } : {}),
    ...(flags.continue ? { continueFrom: flags.continue } : {}),
    ...(flags.description ? { description: flags.description } : {}),
    resultsDir: path.resolve(cwd, flags.resultsDir ?? 'results'),
    cwd,
  };
}
