/** `rlvr passk`'s flags, read from their strings into the typed options lib/passk resolves. */
import type { Problem } from '../../lib/errors';
import { parseCheckpointRef } from '../../lib/eval';
import { resolvePasskRequest, type PasskOptions, type PasskRequest } from '../../lib/passk';
import type { PasskScriptContract } from '../../lib/trainers';
import { flagProblem, parseJobFlags, type JobFlags } from './batch-job-flags';

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

/**
 * The flags → the options, with a problem for each flag that does not read (its value is left out).
 * `script` names the settings (and their flags) the repository's pass@k script takes.
 */
export function parsePasskFlags(
  flags: PasskFlags,
  script: PasskScriptContract,
): { options: PasskOptions; problems: Problem[] } {
  const problems: Problem[] = [];
  let model: PasskOptions['model'];
  if (flags.model) {
    const parsed = parseCheckpointRef(flags.model);
    if (parsed.ok) model = parsed.value;
    else problems.push(flagProblem('--model', parsed.problem));
  }
  const settings: Record<string, string> = {};
  for (const [name, setting] of Object.entries(script.settings)) {
    const given = flags[flagKey(setting.flag) as keyof PasskFlags] as string | undefined;
    if (given === undefined) continue;
    const problem = SETTING_CHECKS[name]?.(given);
    if (problem) problems.push(flagProblem(setting.flag, `${given}: ${problem}`));
    else settings[name] = given;
  }
  const job = parseJobFlags(flags, problems);
  if (flags.datasetDir !== undefined && !flags.local)
    problems.push(
      flagProblem('--dataset-dir', '--dataset-dir is for --local runs (a job reads the copy in S3)'),
    );
  const options: PasskOptions = {
    ...job,
    ...(model ? { model } : {}),
    ...(flags.dataset !== undefined ? { dataset: flags.dataset } : {}),
    settings,
    ...(flags.trainerSrc !== undefined ? { trainerSrc: flags.trainerSrc } : {}),
    ...(flags.datasetDir !== undefined ? { datasetDir: flags.datasetDir } : {}),
    ...(flags.continue ? { continueFrom: flags.continue } : {}),
    ...(flags.description ? { description: flags.description } : {}),
    ...(flags.resultsDir !== undefined ? { resultsDir: flags.resultsDir } : {}),
  };
  return { options, problems };
}

/** The flags read, then resolved: every problem of both at once (exit 2). */
export function passkRequestOfFlags(
  flags: PasskFlags,
  script: PasskScriptContract,
  cwd: string,
): PasskRequest {
  const { options, problems } = parsePasskFlags(flags, script);
  return resolvePasskRequest(options, script, cwd, problems);
}
