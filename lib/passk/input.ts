/**
 * `rlvr passk`'s input, checked: the model as `rlvr eval` takes it, the dataset as the repository's
 * pass@k script names it, its sampling settings, and the job options `rlvr eval` has. bin reads them from
 * the flags; here they are held to the script's contract and the campaign's rules. Every problem is named
 * at once (exit 2) before anything is read from AWS.
 */
import * as path from 'node:path';
import { didYouMean } from '../config';
import { ProblemsError, type Problem } from '../errors';
import { withJobDefaults, type BatchJobOptions, type BatchJobSettings, type LabelledRef } from '../eval';
import type { PasskScriptContract } from '../trainers';

/** What bin read from `rlvr passk`'s flags. */
export interface PasskOptions extends BatchJobOptions {
  readonly model?: LabelledRef;
  readonly dataset?: string;
  /** The script's settings given, by their contract name (split, n, max_tokens, …), each checked. */
  readonly settings?: Readonly<Record<string, string>>;
  readonly trainerSrc?: string;
  readonly datasetDir?: string;
  readonly continueFrom?: string;
  readonly description?: string;
  readonly resultsDir?: string;
}

export interface PasskRequest extends BatchJobSettings {
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
 * The options, held to the script's contract (`script`) and the campaign's rules, → the request. Every
 * problem at once (exit 2), with `flagProblems`, those bin found reading the flags: a flag with a problem
 * is left out of `options` and is neither reported again as missing nor filled with its default.
 */
export function resolvePasskRequest(
  options: PasskOptions,
  script: PasskScriptContract,
  cwd: string,
  flagProblems: readonly Problem[] = [],
): PasskRequest {
  const problems: Problem[] = [...flagProblems];
  const flagFailed = (flag: string) => flagProblems.some((p) => p.where === flag);
  const model = options.model;
  if (!model) {
    if (!flagFailed('--model'))
      problems.push(
        flagProblem(
          '--model',
          'no model',
          'e.g. --model <job>:final, --model s3://bucket/folder/, --model Qwen/Qwen3-1.7B-Base',
        ),
      );
  } else if (
    model.ref.kind === 'job' &&
    (model.ref.select === 'all' || (Array.isArray(model.ref.select) && model.ref.select.length !== 1))
  )
    problems.push(
      flagProblem(
        '--model',
        `${model.given} names several checkpoints: a campaign measures one (e.g. <job>:final)`,
      ),
    );
  const dataset = options.dataset;
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
  // The script's settings, each as given or the script's own default (recorded either way).
  for (const [name, setting] of Object.entries(script.settings)) {
    const given = options.settings?.[name];
    if (given === undefined && flagFailed(setting.flag)) continue;
    const value = given ?? setting.default;
    if (value !== undefined) settings[name] = value;
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
        options.settings?.max_tokens !== undefined ? '--max-tokens' : '--max-model-len',
        `max_tokens ${settings.max_tokens} leaves no room for the prompt in max_model_len ${settings.max_model_len}`,
        'max_tokens must be below max_model_len (e.g. --max-model-len 4096 with --max-tokens 2048)',
      ),
    );
  if (settings.level !== undefined && dataset !== 'math')
    problems.push(flagProblem('--level', '--level filters MATH only', 'leave it out, or use --dataset math'));
  if (problems.length > 0) throw new ProblemsError(`rlvr passk: ${problems.length} problem(s)`, problems);
  return {
    ...withJobDefaults(options),
    model: model!,
    dataset: dataset!,
    settings,
    trainerSrc: path.resolve(cwd, options.trainerSrc ?? '.'),
    ...(options.datasetDir ? { datasetDir: path.resolve(cwd, options.datasetDir) } : {}),
    ...(options.continueFrom ? { continueFrom: options.continueFrom } : {}),
    ...(options.description ? { description: options.description } : {}),
    resultsDir: path.resolve(cwd, options.resultsDir ?? 'results'),
    cwd,
  };
}
