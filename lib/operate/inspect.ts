import type { DescribeTrainingJobResponse, TrainingJobStatus } from '@aws-sdk/client-sagemaker';
import { describeJob, isTerminal, requireLayout, type IS3, type JobContext } from '../aws';
import { parseCheckpointFolder, type S3Layout } from '../layout';
import { writesResultsOnly } from '../job-kinds';
import {
  checkpointOfKey,
  newestTrace,
  readJobListing,
  resumeFromRunInfo,
  type ResumeInfo,
} from '../transfers';
import { readJobLogDescriptions } from '../submission';
import { costOf } from '../job-options';
import { isObject, mapLimited } from '../util';
import { RERUN_OF_TAG } from './rerun-tag';
import type { LiveProgress } from '../forecast';
import { jobProgress, readProgressTail } from './progress';

/**
 * The checkpoints a job has in S3, across every trainer run folder of its attempts
 * (`checkpoints/<job>/<trainerRun>/checkpoints/<run>_step<N>/`, `<run>_final/`), or in the old layout
 * (`checkpoints/<job>/checkpoints/…`, or `<run>_step<N>/` at the top).
 */
export interface CheckpointSummary {
  readonly steps: readonly number[];
  readonly latestStep: number | undefined;
  readonly final: boolean;
  readonly count: number;
  /** The trace file of the newest run folder (the latest attempt), when the job has one. */
  readonly traceKey: string | undefined;
  readonly traceBytes: number;
  /** The trainer's run folders, oldest attempt first (`''`: the old layout). */
  readonly runFolders: readonly string[];
  /** What the restart did, when run.json says the job was restarted. */
  readonly resume?: ResumeInfo;
}

export async function summarizeCheckpoints(
  s3: IS3,
  layout: S3Layout,
  job: string,
): Promise<CheckpointSummary> {
  return (await readCheckpoints(s3, layout, job)).summary;
}

/** The checkpoint summary, and the run.json it was read with (undefined: none yet, or unreadable). */
export async function readCheckpoints(
  s3: IS3,
  layout: S3Layout,
  job: string,
): Promise<{ summary: CheckpointSummary; runInfo: unknown }> {
  // run.json is read only when the listing has it: a job not yet started costs no request.
  const { prefix, objects, runInfo, folders, checkpointDirs, relativeOf } = await readJobListing(
    s3,
    layout,
    job,
  );
  const relative = objects.map((o) => relativeOf(o.key));
  const steps = new Set<number>();
  let final = false;
  for (const rel of relative) {
    const ck = checkpointOfKey(rel, checkpointDirs);
    if (!ck) continue;
    const folder = parseCheckpointFolder(ck.folder);
    if (folder?.step !== undefined) steps.add(folder.step);
    if (folder?.final) final = true;
  }
  const trace = newestTrace({ prefix, objects, folders });
  const sorted = [...steps].sort((a, b) => a - b);
  const resume = resumeFromRunInfo(runInfo);
  const summary: CheckpointSummary = {
    steps: sorted,
    latestStep: sorted[sorted.length - 1],
    final,
    count: sorted.length + (final ? 1 : 0),
    traceKey: trace?.key,
    traceBytes: trace?.size ?? 0,
    runFolders: folders.map((f) => f.folder),
    ...(resume ? { resume } : {}),
  };
  return { summary, runInfo };
}

/** One attempt of a job, as the container records it in run.json. */
export interface AttemptRecord {
  readonly startedAt?: string;
  readonly host?: string;
  readonly endedAt?: string;
  readonly status?: string;
  readonly resume?: ResumeInfo;
}

/** How often the job ran: run.json's attempts, SageMaker's interruptions and retry strategy. */
export interface AttemptsReport {
  /** Attempts known: run.json's, or (when it records fewer) one more than the interruptions. */
  readonly count: number;
  /** `Interrupted` entries of SecondaryStatusTransitions (spot interruptions). */
  readonly interruptions: number;
  /** RetryStrategy.MaximumRetryAttempts, when the job has one. */
  readonly maxRetries: number | undefined;
  /** The attempts run.json records, oldest first. */
  readonly recorded: readonly AttemptRecord[];
  /** Where the latest restart resumed (run.json's `resume`). */
  readonly resume: ResumeInfo | undefined;
}

const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** run.json's attempts, read defensively (the file comes from the job). */
export function attemptsFromRunInfo(runInfo: unknown): AttemptRecord[] {
  if (!isObject(runInfo) || !Array.isArray(runInfo.attempts)) return [];
  return runInfo.attempts.filter(isObject).map((a) => {
    const resume = resumeFromRunInfo({ resume: a.resume });
    const record: Record<string, unknown> = {
      startedAt: text(a.startedAt),
      host: text(a.host),
      endedAt: text(a.endedAt),
      status: text(a.status),
      resume,
    };
    for (const k of Object.keys(record)) if (record[k] === undefined) delete record[k];
    return record as AttemptRecord;
  });
}

/** Attempts, interruptions and the resumed step, from DescribeTrainingJob and run.json. Pure. */
export function summarizeAttempts(job: DescribeTrainingJobResponse, runInfo: unknown): AttemptsReport {
  const transitions = job.SecondaryStatusTransitions ?? [];
  const interruptions = transitions.filter((t) => t.Status === 'Interrupted').length;
  const started = transitions.some((t) => t.Status === 'Training');
  const recorded = attemptsFromRunInfo(runInfo);
  return {
    count: Math.max(recorded.length, started ? interruptions + 1 : 0),
    interruptions,
    maxRetries: job.RetryStrategy?.MaximumRetryAttempts,
    recorded,
    resume: resumeFromRunInfo(runInfo),
  };
}

/** `2 (1 interruption) · resumed from step 20 (run_step20)`: the line `rlvr status` prints. */
export function describeAttempts(attempts: AttemptsReport): string {
  const n = attempts.interruptions;
  let out = `${attempts.count}${n > 0 ? ` (${n} interruption${n === 1 ? '' : 's'})` : ''}`;
  const r = attempts.resume;
  if (r?.step !== undefined) out += ` · resumed from step ${r.step}${r.from ? ` (${r.from})` : ''}`;
  if (attempts.maxRetries !== undefined) out += ` · retries: up to ${attempts.maxRetries}`;
  return out;
}

/** The line `rlvr status` prints for a restarted job. */
export function describeResume(resume: ResumeInfo): string {
  const from =
    resume.from !== undefined
      ? ` (from ${resume.from}${resume.step !== undefined ? `, step ${resume.step}` : ''})`
      : '';
  return `restarted: ${resume.note}${from}`;
}

/**
 * The "Completed but no checkpoints" incident, said loudly. An eval or pass@k job writes results, not
 * checkpoints: it has no such incident.
 */
export function postJobProblem(
  job: Pick<DescribeTrainingJobResponse, 'TrainingJobStatus' | 'Environment'>,
  checkpoints: CheckpointSummary,
): string | undefined {
  if (job.TrainingJobStatus !== 'Completed' || writesResultsOnly(job.Environment)) return undefined;
  if (checkpoints.count === 0) return 'COMPLETED WITHOUT ANY CHECKPOINT IN S3';
  if (!checkpoints.final)
    return `completed, but no final checkpoint (latest: step ${checkpoints.latestStep})`;
  return undefined;
}

export interface TraceTail {
  readonly step: number | undefined;
  readonly reward: number | undefined;
  readonly bytesRead: number;
}

const TAIL_BYTES = 64 * 1024;

function rewardOf(record: Record<string, unknown>): number | undefined {
  for (const key of ['reward_mean', 'mean_reward', 'reward', 'rewards/mean', 'avg_reward']) {
    if (typeof record[key] === 'number') return record[key] as number;
  }
  const rewards = record.rewards;
  if (Array.isArray(rewards) && rewards.length > 0 && rewards.every((r) => typeof r === 'number')) {
    return (rewards as number[]).reduce((a, b) => a + b, 0) / rewards.length;
  }
  return undefined;
}

/** The latest step and reward in a block of a trace's last lines (`cut`: its first line is partial). Pure. */
export function traceTailOf(tail: Buffer, cut: boolean): Omit<TraceTail, 'bytesRead'> {
  const lines = tail.toString('utf8').split('\n');
  if (cut) lines.shift();
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i].trim();
    if (!line) continue;
    try {
      const record = JSON.parse(line) as Record<string, unknown>;
      const step = typeof record.step === 'number' ? record.step : undefined;
      if (step !== undefined || rewardOf(record) !== undefined) return { step, reward: rewardOf(record) };
    } catch {
      // a line still being written
    }
  }
  return { step: undefined, reward: undefined };
}

/**
 * The latest step and reward from a trace's last complete line, with one ranged read of its tail
 * (traces are 100–600 MB; they are never read whole).
 */
export async function readTraceTail(s3: IS3, bucket: string, key: string, size: number): Promise<TraceTail> {
  const bytes = Math.min(size, TAIL_BYTES);
  if (bytes === 0) return { step: undefined, reward: undefined, bytesRead: 0 };
  const tail = await s3.getObjectRange(bucket, key, -bytes);
  return { ...traceTailOf(tail, bytes < size), bytesRead: bytes };
}

export interface JobCost {
  readonly elapsedSeconds: number;
  readonly billableSeconds: number;
  readonly cost: number | undefined;
  /** 0–1, for spot jobs with billable and training time known. */
  readonly spotSavings: number | undefined;
  readonly final: boolean;
}

export function jobCost(job: DescribeTrainingJobResponse, region: string, now: Date): JobCost {
  const start = job.TrainingStartTime ?? job.CreationTime;
  const end =
    job.TrainingEndTime ?? (isTerminal(job.TrainingJobStatus) ? job.LastModifiedTime : undefined) ?? now;
  const elapsedSeconds = start ? Math.max(0, Math.round((end.getTime() - start.getTime()) / 1000)) : 0;
  const billableSeconds = job.BillableTimeInSeconds ?? elapsedSeconds;
  const type = job.ResourceConfig?.InstanceType ?? '';
  const count = job.ResourceConfig?.InstanceCount ?? 1;
  const training = job.TrainingTimeInSeconds;
  return {
    elapsedSeconds,
    billableSeconds,
    cost: costOf(type, region, count, billableSeconds),
    spotSavings:
      job.EnableManagedSpotTraining && training && job.BillableTimeInSeconds !== undefined
        ? Math.max(0, 1 - job.BillableTimeInSeconds / training)
        : undefined,
    final: isTerminal(job.TrainingJobStatus),
  };
}

export interface JobRow {
  readonly name: string;
  readonly status: string;
  readonly secondaryStatus: string | undefined;
  readonly instanceType: string;
  readonly instanceCount: number;
  readonly started: Date | undefined;
  readonly cost: JobCost;
  readonly config: string | undefined;
  readonly description: string | undefined;
  /** The post-job check, for Completed jobs. */
  readonly problem: string | undefined;
  /** The job's tags (rlvr:config, rlvr:sweep, rlvr:overrides, …). */
  readonly tags: Readonly<Record<string, string>>;
  /** Its checkpoints in S3, when the post-job check read them (Completed jobs) or the job runs. */
  readonly checkpoints?: CheckpointSummary;
  /** A running job's step, rate, ETA and cost at finish. */
  readonly progress?: LiveProgress;
}

/** Our jobs (by the job-name prefix), newest first, with cost, config, description and the post-job check. */
export async function listJobs(
  context: JobContext,
  options: {
    nameContains?: string;
    status?: TrainingJobStatus;
    limit?: number;
    jobLogPath?: string;
    now?: Date;
  },
): Promise<JobRow[]> {
  const now = options.now ?? new Date();
  const summaries = await context.aws.sagemaker.listTrainingJobs({
    nameContains: options.nameContains ?? context.jobNamePrefix,
    status: options.status,
    limit: options.limit ?? 50,
  });
  const ours = summaries.filter((s) => s.TrainingJobName!.startsWith(`${context.jobNamePrefix}-`));
  const descriptions = options.jobLogPath
    ? readJobLogDescriptions(options.jobLogPath)
    : new Map<string, string>();
  return mapLimited(ours, 4, async (summary) => {
    const name = summary.TrainingJobName!;
    const job = (await context.aws.sagemaker.describeTrainingJob(name))!;
    const tags = await context.aws.sagemaker.listTags(job.TrainingJobArn!);
    let problem: string | undefined;
    let checkpoints: CheckpointSummary | undefined;
    const cost = jobCost(job, context.region, now);
    let progress: LiveProgress | undefined;
    if (job.TrainingJobStatus === 'Completed' && context.layout) {
      checkpoints = await summarizeCheckpoints(context.aws.s3, context.layout, name);
      problem = postJobProblem(job, checkpoints);
    } else if (job.TrainingJobStatus === 'InProgress' && context.layout) {
      const read = await readCheckpoints(context.aws.s3, context.layout, name);
      checkpoints = read.summary;
      progress = await jobProgress(context.aws.s3, context.layout, job, checkpoints, cost, context.region, {
        runInfo: read.runInfo,
      });
    }
    return {
      name,
      status: job.TrainingJobStatus ?? summary.TrainingJobStatus ?? 'Unknown',
      secondaryStatus: job.SecondaryStatus,
      instanceType: job.ResourceConfig?.InstanceType ?? '',
      instanceCount: job.ResourceConfig?.InstanceCount ?? 1,
      started: job.TrainingStartTime ?? job.CreationTime,
      cost,
      config: tags['rlvr:config'],
      description: descriptions.get(name),
      problem,
      tags,
      checkpoints,
      progress,
    };
  });
}

export interface JobStatusReport {
  readonly job: DescribeTrainingJobResponse;
  readonly cost: JobCost;
  readonly checkpoints: CheckpointSummary;
  readonly trace: TraceTail | undefined;
  readonly problem: string | undefined;
  readonly checkpointsUri: string;
  readonly attempts: AttemptsReport;
  /** The job this one reruns (`rlvr rerun`), from its tag; undefined for any other job. */
  readonly rerunOf: string | undefined;
  /** A running job's step of its steps, rate, ETA and cost at finish (undefined: not running, or no trace yet). */
  readonly progress: LiveProgress | undefined;
}

/** Everything a researcher asks first about one job. */
export async function jobStatus(
  context: JobContext,
  name: string,
  now = new Date(),
): Promise<JobStatusReport> {
  const layout = requireLayout(context);
  const job = await describeJob(context, name);
  const { summary: checkpoints, runInfo } = await readCheckpoints(context.aws.s3, layout, name);
  const tags = await context.aws.sagemaker.listTags(job.TrainingJobArn!);
  const cost = jobCost(job, context.region, now);
  let trace: TraceTail | undefined;
  let progress: LiveProgress | undefined;
  if (checkpoints.traceKey && job.TrainingJobStatus === 'InProgress') {
    // A running job's progress needs a longer tail (its recent steps): one read serves both.
    const tail = await readProgressTail(context.aws.s3, layout.bucket, checkpoints);
    const last = tail.subarray(Math.max(0, tail.length - TAIL_BYTES));
    trace = { ...traceTailOf(last, last.length < checkpoints.traceBytes), bytesRead: tail.length };
    progress = await jobProgress(context.aws.s3, layout, job, checkpoints, cost, context.region, {
      runInfo,
      tail,
    });
  } else if (checkpoints.traceKey) {
    trace = await readTraceTail(context.aws.s3, layout.bucket, checkpoints.traceKey, checkpoints.traceBytes);
  }
  return {
    job,
    cost,
    checkpoints,
    trace,
    problem: postJobProblem(job, checkpoints),
    checkpointsUri: layout.uri(layout.checkpointsPrefix(name)),
    attempts: summarizeAttempts(job, runInfo),
    rerunOf: tags[RERUN_OF_TAG],
    progress,
  };
}
