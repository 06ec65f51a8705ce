/**
 * The job flags `rlvr eval` and `rlvr passk` share, read from their strings: instances, spot, runtime,
 * retries, volume, image, and --local with its GPUs. lib takes what they say as typed options.
 */
import { formatDuration, parseDuration } from '../../lib/config';
import type { Problem } from '../../lib/errors';
import type { BatchJobOptions } from '../../lib/eval';
import { MAX_RETRIES, MAX_RUNTIME_SECONDS } from '../../lib/job-options';

/** The job flags as commander gives them. */
export interface JobFlags {
  instanceType?: string;
  instanceCount?: string;
  spot?: boolean;
  maxRuntime?: string;
  maxRetries?: string;
  volumeGb?: string;
  image?: string;
  local?: boolean;
  gpus?: string;
}

export const flagProblem = (where: string, message: string, hint?: string): Problem => ({
  where,
  message,
  ...(hint ? { hint } : {}),
});

/** Above any machine's GPU count: a range past it is a typo, not a list to build. */
const MAX_GPU_INDEX = 1023;

/**
 * `--gpus` as the job-options parser reads GPU lists (`0-3`, `0, 2-3`, spaces allowed), in order, saying
 * what is wrong with a value it does not take; a GPU given twice (`0,0`, `0-3,2`) is refused, since each
 * GPU runs one unit at a time.
 */
function parseGpusFlag(text: string): { gpus: number[] } | { problem: string } {
  const seen = new Set<number>();
  for (const item of text.split(',').map((s) => s.trim())) {
    const m = /^(\d+)\s*(?:-\s*(\d+))?$/.exec(item);
    if (!m) return { problem: `"${item}" is not a GPU number or range (GPU indices such as 0-7 or 0,2,3)` };
    const [from, to] = [Number(m[1]), m[2] === undefined ? Number(m[1]) : Number(m[2])];
    if (from > to) return { problem: `${item} is a reversed range: write ${to}-${from}` };
    if (to > MAX_GPU_INDEX) return { problem: `${item}: no machine has a GPU ${to}` };
    for (let g = from; g <= to; g++) {
      if (seen.has(g)) return { problem: `GPU ${g} is given twice: each GPU runs one unit at a time` };
      seen.add(g);
    }
  }
  return { gpus: [...seen].sort((a, b) => a - b) };
}

function positiveInt(
  text: string | undefined,
  flag: string,
  problems: Problem[],
  max = Infinity,
): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    problems.push(
      flagProblem(flag, `${text} is not a whole number from 1${max < Infinity ? ` to ${max}` : ''}`),
    );
    return undefined;
  }
  return n;
}

/** `--max-retries`: SageMaker's limits, as submit applies them (its RetryStrategy takes 1–30; no retries is no flag). */
function maxRetriesOf(text: string | undefined, problems: Problem[]): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (Number.isInteger(n) && n >= MAX_RETRIES.min && n <= MAX_RETRIES.max) return n;
  problems.push(
    flagProblem(
      '--max-retries',
      `${text}: a retry count from ${MAX_RETRIES.min} to ${MAX_RETRIES.max} (SageMaker's limit)`,
      'leave --max-retries out for no retries',
    ),
  );
  return undefined;
}

function maxRuntimeOf(text: string | undefined, problems: Problem[]): number | undefined {
  if (text === undefined) return undefined;
  const seconds = parseDuration(text);
  if (!seconds) {
    problems.push(flagProblem('--max-runtime', `${text} is not a duration`, 'e.g. 6h, 90m, 2d'));
    return undefined;
  }
  if (seconds > MAX_RUNTIME_SECONDS) {
    problems.push(
      flagProblem(
        '--max-runtime',
        `${text} is longer than SageMaker's limit of 28 days (${formatDuration(MAX_RUNTIME_SECONDS)})`,
      ),
    );
    return undefined;
  }
  return seconds;
}

/** --local's GPUs, and the SageMaker-only flags it refuses. */
function localOf(flags: JobFlags, problems: Problem[]): BatchJobOptions['local'] {
  if (!flags.local) {
    if (flags.gpus !== undefined) problems.push(flagProblem('--gpus', '--gpus is for --local runs'));
    return undefined;
  }
  let local: BatchJobOptions['local'];
  if (flags.gpus === undefined || flags.gpus.trim() === '')
    problems.push(flagProblem('--gpus', `--local needs the GPUs to use: e.g. --gpus 0-7`));
  else {
    const parsed = parseGpusFlag(flags.gpus);
    if ('problem' in parsed) problems.push(flagProblem('--gpus', `--gpus ${flags.gpus}: ${parsed.problem}`));
    else local = { gpus: parsed.gpus };
  }
  // SageMaker's options: a local run has no spot capacity to lose and no service to restart it.
  if (flags.spot)
    problems.push(flagProblem('--spot', "--spot means nothing with --local (managed spot is SageMaker's)"));
  if (flags.maxRetries !== undefined)
    problems.push(
      flagProblem(
        '--max-retries',
        '--max-retries means nothing with --local (SageMaker restarts jobs, Docker does not)',
      ),
    );
  return local;
}

/** The job flags, read: each problem added to `problems` (the caller reports them all at once). */
export function parseJobFlags(flags: JobFlags, problems: Problem[]): BatchJobOptions {
  const instanceCount = positiveInt(flags.instanceCount, '--instance-count', problems, 8);
  const volumeGb = positiveInt(flags.volumeGb, '--volume-gb', problems);
  const maxRetries = maxRetriesOf(flags.maxRetries, problems);
  const maxRuntimeSeconds = maxRuntimeOf(flags.maxRuntime, problems);
  const local = localOf(flags, problems);
  return {
    ...(flags.instanceType !== undefined ? { instanceType: flags.instanceType } : {}),
    ...(instanceCount !== undefined ? { instanceCount } : {}),
    spot: Boolean(flags.spot),
    ...(maxRuntimeSeconds ? { maxRuntimeSeconds } : {}),
    ...(maxRetries !== undefined ? { maxRetries } : {}),
    ...(volumeGb !== undefined ? { volumeGb } : {}),
    ...(flags.image ? { image: flags.image } : {}),
    ...(local ? { local } : {}),
  };
}
