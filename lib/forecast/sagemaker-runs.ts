import * as fs from 'node:fs';
import * as path from 'node:path';
import { classifyAwsError, describeAwsError, type IS3, type ISageMaker } from '../aws';
import type { SageMakerPastRuns } from './forecast';
import type { S3Layout } from '../layout';
import { checkpointOfKey, newestTrace, readJobListing, readJobRunInfo } from '../transfers';
import { isObject, mapLimited, readJsonFile, rlvrCacheDir, writeFileAtomic } from '../util';
import { runMeasure, type PastRun, type RunsSeen } from './past-runs';
import { readShape, shapeDifferences, type RunShape } from './shape';
import { clockOfTail, stepIntervals, TRACE_WINDOW } from './step-clock';

/*
 * SageMaker's record of the team's ended jobs (Completed, Stopped) as a forecast's past runs: each
 * job's run.json (the shape it recorded) and, for the jobs of the shape asked for, the two ends of its
 * trace in S3 (ranged reads: its first step, its recent steps' seconds). An ended job never changes, so
 * what was read of it is kept in a local cache and never read again: a plan costs two listings and the
 * jobs new since.
 */

/** The ended jobs looked at: the newest. */
export const SAGEMAKER_JOBS_SEEN = 50;
/** Of those of the shape asked for, the newest whose traces are read. */
export const SAGEMAKER_TRACES_READ = 5;
/** The head of a trace read for its first step. */
const HEAD_BYTES = 4 * 1024 * 1024;
/** How long after a job ended its files are taken to be all in S3. */
const SETTLED_MS = 60 * 60 * 1000;
/** A cached run keeps this many of its latest step times. */
const KEPT_INTERVALS = 500;

/** Entries of another form (an older launcher's) are read again. */
const CACHE_VERSION = 2;

interface CachedTiming {
  readonly intervals: number[];
  readonly firstStepTs: number | null;
  readonly lastStepTs: number | null;
  /** The highest step the trace shows. */
  readonly steps: number | null;
  /** Checkpoint folders the job's prefix holds. */
  readonly checkpoints: number;
}

interface CachedJob {
  readonly v: typeof CACHE_VERSION;
  readonly shape: RunShape | null;
  /** What of its run.json a forecast uses: status, the steps it was given, its attempts' times. */
  readonly record: unknown;
  readonly timing?: CachedTiming;
}

export interface SageMakerRunsInput {
  readonly s3: IS3;
  readonly sagemaker: ISageMaker;
  readonly layout: S3Layout;
  readonly jobNamePrefix: string;
  readonly shape: RunShape;
  readonly cacheDir?: string;
  readonly now?: Date;
}

function cacheFile(dir: string, layout: S3Layout, job: string): string {
  const where = `${layout.bucket}/${layout.root}`.replace(/[^A-Za-z0-9._-]+/g, '_');
  return path.join(dir, where, `${job}.json`);
}

function readCache(file: string): CachedJob | undefined {
  const v = readJsonFile<unknown>(file, undefined);
  if (!isObject(v) || v.v !== CACHE_VERSION || !('shape' in v)) return undefined;
  return v as unknown as CachedJob;
}

function writeCache(file: string, value: CachedJob): void {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    writeFileAtomic(file, `${JSON.stringify(value)}\n`);
  } catch {
    // a cache that cannot be written costs the next plan the same reads, nothing else
  }
}

/** What of a job's run.json a forecast uses (the rest is not kept). */
function keptOfRunInfo(runInfo: unknown): unknown {
  if (!isObject(runInfo)) return null;
  const times = ['startedAt', 'trainerStartedAt', 'trainerEndedAt'];
  const attempts = Array.isArray(runInfo.attempts)
    ? runInfo.attempts.map((a) =>
        isObject(a)
          ? Object.fromEntries(times.filter((t) => typeof a[t] === 'string').map((t) => [t, a[t]]))
          : {},
      )
    : [];
  const maxSteps = isObject(runInfo.forecast) ? runInfo.forecast.maxSteps : undefined;
  return {
    ...(typeof runInfo.status === 'string' ? { status: runInfo.status } : {}),
    ...(typeof maxSteps === 'number' ? { forecast: { maxSteps } } : {}),
    attempts,
  };
}

/** The two ends of the job's trace in S3 (its first step, its latest steps' seconds), and its checkpoints. */
async function readTiming(s3: IS3, layout: S3Layout, job: string): Promise<CachedTiming> {
  const listing = await readJobListing(s3, layout, job);
  const folders = new Set<string>();
  for (const o of listing.objects) {
    const ck = checkpointOfKey(listing.relativeOf(o.key), listing.checkpointDirs);
    if (ck) folders.add(ck.path);
  }
  const checkpoints = folders.size;
  const trace = newestTrace(listing);
  // An ended job without a trace or a step never has one: recorded as such, not read again.
  if (!trace || trace.size === 0)
    return { intervals: [], firstStepTs: null, lastStepTs: null, steps: null, checkpoints };
  const tailBytes = Math.min(trace.size, TRACE_WINDOW);
  const [head, tail] = await Promise.all([
    s3.getObjectRange(layout.bucket, trace.key, 0, Math.min(trace.size, HEAD_BYTES) - 1),
    s3.getObjectRange(layout.bucket, trace.key, -tailBytes),
  ]);
  const whole = tailBytes === trace.size;
  const clock = clockOfTail(tail, !whole);
  const all = stepIntervals(clock.markers);
  const first = clockOfTail(head, false).markers[0];
  const last = clock.markers[clock.markers.length - 1];
  return {
    intervals: all.slice(-KEPT_INTERVALS),
    firstStepTs: first ?? null,
    lastStepTs: last ?? null,
    steps: (clock.lastStep ?? (whole ? clock.markers.length : all.length + 1)) || null,
    checkpoints,
  };
}

/** The team's ended jobs in SageMaker as past runs; the traces read only of those of `shape`. */
export async function sageMakerRuns(input: SageMakerRunsInput): Promise<RunsSeen> {
  const { s3, layout, shape } = input;
  const dir = input.cacheDir ?? rlvrCacheDir('runs');
  // Stopped jobs too: one stopped by its max runtime is the slowest of its shape, the one a forecast
  // most needs.
  const lists = await Promise.all(
    (['Completed', 'Stopped'] as const).map((status) =>
      input.sagemaker.listTrainingJobs({
        nameContains: input.jobNamePrefix,
        status,
        limit: SAGEMAKER_JOBS_SEEN,
      }),
    ),
  );
  const summaries = lists
    .flat()
    .sort((a, b) => (b.CreationTime?.getTime() ?? 0) - (a.CreationTime?.getTime() ?? 0))
    .slice(0, SAGEMAKER_JOBS_SEEN);
  const ours = summaries.filter((s) => s.TrainingJobName!.startsWith(`${input.jobNamePrefix}-`));
  const names = ours.map((s) => s.TrainingJobName!);
  const now = (input.now ?? new Date()).getTime();
  const known = await mapLimited(ours, 8, async (summary) => {
    const job = summary.TrainingJobName!;
    const file = cacheFile(dir, layout, job);
    const ended = summary.TrainingEndTime?.getTime() ?? summary.LastModifiedTime?.getTime();
    const settled = ended !== undefined && now - ended > SETTLED_MS;
    const cached = readCache(file);
    if (cached) return { job, file, cached, settled };
    const runInfo = await readJobRunInfo(s3, layout, job);
    const recorded =
      isObject(runInfo) && isObject(runInfo.forecast) ? readShape(runInfo.forecast.shape) : undefined;
    const entry: CachedJob = { v: CACHE_VERSION, shape: recorded ?? null, record: keptOfRunInfo(runInfo) };
    // An ended job's run.json is final. That it has none (not ours, or from before shapes were
    // recorded) is kept only once the job ended long enough ago for everything it wrote to have landed.
    if (recorded || settled) writeCache(file, entry);
    return { job, file, cached: entry, settled };
  });
  const runs: PastRun[] = [];
  const others: { id: string; shape: RunShape }[] = [];
  const unknownIds: string[] = [];
  const matching: typeof known = [];
  for (const k of known) {
    if (!k.cached.shape) unknownIds.push(k.job);
    else if (shapeDifferences(k.cached.shape, shape).length === 0) matching.push(k);
    else others.push({ id: k.job, shape: k.cached.shape });
  }
  const timed = await mapLimited(matching.slice(0, SAGEMAKER_TRACES_READ), 4, async (k) => {
    if (k.cached.timing) return { ...k, timing: k.cached.timing };
    const timing = await readTiming(s3, layout, k.job);
    // A trace without steps is kept as such only once the job's files have all landed.
    if (timing.intervals.length > 0 || k.settled) writeCache(k.file, { ...k.cached, timing });
    return { ...k, timing };
  });
  for (const t of timed) {
    const { intervals, firstStepTs, lastStepTs, steps, checkpoints } = t.timing;
    if (intervals.length === 0) continue;
    const status = ours.find((s) => s.TrainingJobName === t.job)?.TrainingJobStatus;
    runs.push({
      id: t.job,
      source: 'sagemaker',
      shape: t.cached.shape!,
      intervals,
      firstStepTs: firstStepTs ?? undefined,
      ...runMeasure({
        runInfo: t.cached.record,
        status,
        checkpoints,
        plannedSteps: undefined,
        steps: steps ?? undefined,
        // Both ends of one trace: a trace cut by the tail window still has its first and last step.
        span:
          firstStepTs !== null && lastStepTs !== null ? { first: firstStepTs, last: lastStepTs } : undefined,
      }),
    });
  }
  return {
    runs,
    seen: names.length,
    unknownShape: unknownIds.length,
    seenIds: names,
    unknownIds,
    others,
  };
}

/** sageMakerRuns, or why they could not be read: a forecast then goes on with the results folder. */
export async function sageMakerRunsOrWhy(input: SageMakerRunsInput): Promise<SageMakerPastRuns> {
  try {
    return { runs: await sageMakerRuns(input) };
  } catch (err) {
    return { note: `${classifyAwsError(err)}: ${describeAwsError(err)}` };
  }
}
