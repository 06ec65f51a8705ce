/**
 * One way to submit any job the launcher creates (a training job, a batch evaluation): upload what is
 * shared by content (once), claim a name (free in SageMaker and reserved by a create-only write in S3),
 * upload the job's own files, CreateTrainingJob (the next name when SageMaker has the one claimed,
 * unless the job is this submit's own retried create), and append the job-log row. A failure, or Ctrl-C
 * before the job exists, removes what this submit wrote under `jobs/<job>/`; after, the job runs on.
 */
import * as os from 'node:os';
import type { CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import { describeAwsError, isAwsError, type AwsClients } from '../aws';
import { RlvrError, RuntimeFailure } from '../errors';
import { consoleJobUrl, JOB_ENV, JOB_FILES, type S3Layout } from '../layout';
import type { ProgressOf } from '../progress';
import { appendJobLogRow, type JobLogRow } from './job-log';
import { reserveJobName } from './job-name';

export type SubmitEvent = ProgressOf<'step' | 'file' | 'retry'>;
export type SubmitListener = (event: SubmitEvent) => void;

/** What a plan (a training plan, an eval plan) hands the one submit path. */
export interface JobSubmission {
  /** `training job`, `eval job`: how messages name it. */
  readonly kind: string;
  readonly layout: S3Layout;
  readonly namePrefix: string;
  readonly submittedAt: Date;
  /** Unique per submit: a retried create recognises the job it already created by it. */
  readonly submitId: string;
  /** Recorded in the name reservation beside who and where (`config`, `kind`, …). */
  readonly reservation: Readonly<Record<string, string>>;
  /** Objects shared by content (the trainer's source): uploaded once, before a name is claimed, never removed. */
  readonly shared?: readonly {
    readonly key: string;
    readonly body: Buffer;
    readonly contentType: string;
    readonly what: string;
  }[];
  /** The job's own files under `jobs/<job>/`. */
  readonly files: readonly { readonly file: string; readonly body: string; readonly contentType: string }[];
  readonly request: (jobName: string) => CreateTrainingJobRequest;
  /** The instance quota the job draws on, named when SageMaker refuses it. */
  readonly quota: { readonly instanceType: string; readonly spot: boolean };
  readonly jobLog: { readonly path: string; readonly row: (jobName: string) => JobLogRow };
}

export interface SubmittedJob {
  readonly jobName: string;
  readonly jobArn: string;
  readonly checkpointsUri: string;
  readonly consoleUrl: string;
}

/** The Service Quotas name for the instance quota a job draws on. */
export function quotaName(instanceType: string, spot: boolean): string {
  return `${instanceType} for ${spot ? 'spot training job usage' : 'training job usage'}`;
}

interface Submitting {
  readonly job: JobSubmission;
  readonly aws: AwsClients;
  readonly emit: SubmitListener;
  readonly signal?: AbortSignal;
  /** Keys this submit wrote under `jobs/` and has not removed (reservations first): the clean-up's list. */
  readonly made: string[];
}

export async function submitJob(
  job: JobSubmission,
  aws: AwsClients,
  options: { readonly listener?: SubmitListener; readonly signal?: AbortSignal } = {},
): Promise<SubmittedJob> {
  const s: Submitting = {
    job,
    aws,
    emit: options.listener ?? (() => undefined),
    signal: options.signal,
    made: [],
  };
  if (s.signal?.aborted)
    throw new RuntimeFailure(
      `Interrupted: no ${job.kind} was created and nothing was written.`,
      'Interrupted',
    );
  await uploadShared(s);
  await checkInterrupt(s);
  const taken = new Set<string>();
  for (;;) {
    const jobName = await claimJobName(s, taken);
    s.made.push(job.layout.jobKey(jobName, JOB_FILES.reservation));
    await checkInterrupt(s);
    s.emit({ type: 'step', message: `job name ${jobName}` });
    const written = await uploadJobFiles(s, jobName);
    await checkInterrupt(s);
    const jobArn = await createJob(s, jobName, written);
    if (jobArn === undefined) {
      taken.add(jobName);
      await checkInterrupt(s);
      continue;
    }
    await recordInJobLog(job, jobName);
    s.emit({ type: 'step', message: `logged in ${job.jobLog.path}` });
    if (s.signal?.aborted) throw interruptedAfterCreate(job, jobName);
    return {
      jobName,
      jobArn,
      checkpointsUri: job.layout.uri(job.layout.checkpointsPrefix(jobName)),
      consoleUrl: consoleJobUrl(aws.region, jobName),
    };
  }
}

/**
 * When Ctrl-C came: removes what this submit wrote under `jobs/` and throws `Interrupted` saying so (what
 * is shared by content stays: other submits of the same content use it, and the next one reuses it).
 */
async function checkInterrupt(s: Submitting): Promise<void> {
  if (!s.signal?.aborted) return;
  const { layout, shared = [], kind } = s.job;
  const sharedNote = shared.length
    ? `; ${shared.map((f) => `${f.what} ${layout.uri(f.key)}`).join(', ')} stays (shared by content with other submits; the next submit reuses it)`
    : '';
  if (s.made.length === 0)
    throw new RuntimeFailure(`Interrupted: no ${kind} was created${sharedNote}.`, 'Interrupted');
  const keys = [...s.made];
  const reservations = keys.filter((k) => k.endsWith(`/${JOB_FILES.reservation}`)).length;
  const what = `${reservations} name reservation(s) and ${keys.length - reservations} job file(s) under ${layout.uri(layout.jobsPrefix())}`;
  try {
    await s.aws.s3.deleteObjects(layout.bucket, keys);
  } catch (err) {
    throw new RuntimeFailure(
      `Interrupted: no ${kind} was created, but ${what} could not be removed (${describeAwsError(err)}): ` +
        `remove them by hand: ${keys.map((k) => layout.uri(k)).join(' ')}`,
      'Interrupted',
      { cause: err },
    );
  }
  s.made.length = 0;
  throw new RuntimeFailure(
    `Interrupted: no ${kind} was created; removed what this submit wrote: ${what}${sharedNote}.`,
    'Interrupted',
  );
}

/** Ctrl-C after CreateTrainingJob succeeded: the job is not stopped (the user may want it), only reported. */
function interruptedAfterCreate(job: JobSubmission, jobName: string): RuntimeFailure {
  const { layout } = job;
  return new RuntimeFailure(
    `Interrupted after ${job.kind} ${jobName} was created: it runs on (nothing was stopped), its files under ` +
      `${layout.uri(layout.jobPrefix(jobName))} are kept and it is logged in ${job.jobLog.path}. ` +
      `Its checkpoints go to ${layout.uri(layout.checkpointsPrefix(jobName))}; to stop it: rlvr stop ${jobName}`,
    'Interrupted',
  );
}

/** Content-addressed objects: uploaded once (a sweep shares the trainer's source). */
async function uploadShared({ job, aws, emit }: Submitting): Promise<void> {
  for (const f of job.shared ?? []) {
    const bytes = f.body.length;
    try {
      if (await aws.s3.headObject(job.layout.bucket, f.key)) {
        emit({ type: 'file', key: f.key, bytes, skipped: true });
      } else {
        await aws.s3.uploadObject(job.layout.bucket, f.key, f.body, f.contentType);
        emit({ type: 'file', key: f.key, bytes, skipped: false });
      }
    } catch (err) {
      throw new RuntimeFailure(`Could not upload ${f.what}: ${describeAwsError(err)}`, 'UploadFailed', {
        cause: err,
      });
    }
  }
}

/** The first free name that is not in `taken`, reserved in S3. */
async function claimJobName({ job, aws }: Submitting, taken: ReadonlySet<string>): Promise<string> {
  try {
    return await reserveJobName({
      s3: aws.s3,
      sagemaker: aws.sagemaker,
      layout: job.layout,
      prefix: job.namePrefix,
      now: job.submittedAt,
      reservation: {
        submitId: job.submitId,
        user: os.userInfo().username,
        host: os.hostname(),
        ...job.reservation,
        reservedAt: new Date().toISOString(),
      },
      skip: taken,
    });
  } catch (err) {
    if (err instanceof RlvrError) throw err;
    throw new RuntimeFailure(`Could not claim a job name: ${describeAwsError(err)}`, 'ReserveFailed', {
      cause: err,
    });
  }
}

/** Removes keys written for a job, as far as it can: the failure being reported matters more. */
async function removeKeys(s: Submitting, keys: readonly string[]): Promise<void> {
  await s.aws.s3.deleteObjects(s.job.layout.bucket, keys).catch(() => undefined);
  const removed = new Set(keys);
  const kept = s.made.filter((k) => !removed.has(k));
  s.made.splice(0, s.made.length, ...kept);
}

/**
 * Uploads the job's files under `jobs/<job>/` (each recorded in `made` once written): every key written,
 * the reservation first. Ctrl-C between two files stops it (the caller cleans up).
 */
async function uploadJobFiles(s: Submitting, jobName: string): Promise<string[]> {
  const { job, aws, emit } = s;
  const { layout } = job;
  const written: string[] = [layout.jobKey(jobName, JOB_FILES.reservation)];
  // Every job keeps the exact request it is created with, so it can be resubmitted as it ran (`rlvr
  // rerun`) and compared (`rlvr diff`) without rebuilding it from today's checkout.
  const files = [
    ...job.files,
    {
      file: JOB_FILES.request,
      body: `${JSON.stringify(job.request(jobName), null, 2)}\n`,
      contentType: 'application/json',
    },
  ];
  try {
    for (const file of files) {
      if (s.signal?.aborted) break;
      const key = layout.jobKey(jobName, file.file);
      await aws.s3.putObject(layout.bucket, key, file.body, file.contentType);
      written.push(key);
      s.made.push(key);
      emit({ type: 'file', key, bytes: Buffer.byteLength(file.body), skipped: false });
    }
  } catch (err) {
    await removeKeys(s, written);
    throw new RuntimeFailure(`Could not upload the job's files: ${describeAwsError(err)}`, 'UploadFailed', {
      cause: err,
    });
  }
  return written;
}

/**
 * Creates the job: its ARN, or undefined when SageMaker already has a job of that name (then the files
 * uploaded under it, but its reservation, are removed and the caller tries the next name). Any other
 * failure removes every file written for it.
 */
async function createJob(
  s: Submitting,
  jobName: string,
  written: readonly string[],
): Promise<string | undefined> {
  const { job, aws, emit } = s;
  try {
    return await aws.sagemaker.createTrainingJob(job.request(jobName));
  } catch (err) {
    if (isAwsError(err, 'NameInUse')) {
      // A retried create may have succeeded the first time: then the job is ours.
      const existing = await aws.sagemaker.describeTrainingJob(jobName).catch(() => undefined);
      if (existing?.Environment?.[JOB_ENV.submitId] === job.submitId) return existing.TrainingJobArn!;
      emit({ type: 'retry', message: `${jobName} is taken in SageMaker; trying the next name` });
      await removeKeys(s, written.slice(1));
      return undefined;
    }
    await removeKeys(s, written);
    if (isAwsError(err, 'QuotaExceeded')) {
      const quota = quotaName(job.quota.instanceType, job.quota.spot);
      throw new RuntimeFailure(
        `SageMaker refused the ${job.kind}: the quota "${quota}" in ${aws.region} is used up (${err.message}). ` +
          'Stop a running job or request an increase in Service Quotas → Amazon SageMaker.',
        'ResourceLimitExceeded',
        { cause: err },
      );
    }
    throw new RuntimeFailure(`CreateTrainingJob failed: ${describeAwsError(err)}`, 'CreateFailed', {
      cause: err,
    });
  }
}

/** Appends the job's row to the job log. */
async function recordInJobLog(job: JobSubmission, jobName: string): Promise<void> {
  try {
    await appendJobLogRow(job.jobLog.path, job.jobLog.row(jobName));
  } catch (err) {
    const kind = job.kind.charAt(0).toUpperCase() + job.kind.slice(1);
    throw new RuntimeFailure(
      `${kind} ${jobName} was created, but the job log ${job.jobLog.path} could not be written: ${(err as Error).message}. Add its row by hand.`,
      'JobLogFailed',
      { cause: err },
    );
  }
}
