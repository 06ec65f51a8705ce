/** `rlvr eval`'s flags, read from their strings into the typed options lib/eval resolves. */
import type { Problem } from '../../lib/errors';
import {
  parseBenchmarks,
  parseCheckpointRef,
  parseDeviations,
  resolveEvalRequest,
  type Benchmark,
  type EvalOptions,
  type EvalRequest,
  type LabelledRef,
} from '../../lib/eval';
import { flagProblem, parseJobFlags, type JobFlags } from './batch-job-flags';

export interface EvalFlags extends JobFlags {
  readonly checkpoints?: readonly string[];
  readonly benchmarks?: readonly string[];
  readonly suite?: string;
  readonly suitesFile?: string;
  readonly config?: string;
  readonly deviate?: readonly string[];
  readonly harness?: string;
  readonly logSamples?: boolean;
  readonly force?: boolean;
  readonly description?: string;
}

/**
 * The flags → the options, with a problem for each flag that does not read (its value is left out).
 * What they name (the suites file, the eval config) is read by lib/eval's `resolveEvalRequest`.
 */
export function parseEvalFlags(flags: EvalFlags): { options: EvalOptions; problems: Problem[] } {
  const problems: Problem[] = [];
  // Checked again with this run's tasks once they are known (a max_gen_toks.<task> of a task it runs is taken).
  const dev = parseDeviations(flags.deviate ?? [], 'any');
  if (!dev.ok) problems.push(flagProblem('--deviate', dev.problem));
  const checkpoints: LabelledRef[] = [];
  for (const given of flags.checkpoints ?? []) {
    const parsed = parseCheckpointRef(given);
    if (parsed.ok) checkpoints.push(parsed.value);
    else problems.push(flagProblem('--checkpoints', parsed.problem));
  }
  const benchmarks: Benchmark[] = [];
  for (const given of flags.benchmarks ?? []) {
    const parsed = parseBenchmarks(given);
    if (parsed.ok) benchmarks.push(...parsed.value);
    else problems.push(flagProblem('--benchmarks', parsed.problem));
  }
  const harness = flags.harness;
  const harnessKnown = harness === undefined || harness === 'lm_eval' || harness === 'olmes';
  if (!harnessKnown) problems.push(flagProblem('--harness', `${harness}: lm_eval or olmes`));
  const job = parseJobFlags(flags, problems);
  const options: EvalOptions = {
    ...job,
    ...(flags.checkpoints ? { checkpoints } : {}),
    ...(flags.benchmarks ? { benchmarks } : {}),
    ...(flags.suite ? { suite: flags.suite } : {}),
    ...(flags.suitesFile ? { suitesFile: flags.suitesFile } : {}),
    ...(flags.config ? { config: flags.config } : {}),
    ...(dev.ok ? { deviations: dev.value } : {}),
    ...(harness !== undefined && harnessKnown ? { harness } : {}),
    logSamples: Boolean(flags.logSamples),
    force: Boolean(flags.force),
    ...(flags.description ? { description: flags.description } : {}),
  };
  return { options, problems };
}

/** The flags read, then resolved: every problem of both at once (exit 2). */
export function evalRequestOfFlags(flags: EvalFlags, cwd: string): EvalRequest {
  const { options, problems } = parseEvalFlags(flags);
  return resolveEvalRequest(options, cwd, problems);
}
