import * as os from 'node:os';
import { describeAwsError, isAwsError, type AwsClients } from '../aws';
import { RlvrError, RuntimeFailure } from '../errors';
import { consoleJobUrl, JOB_FILES } from '../layout';
import { appendJobLogRow } from './job-log';
import { reserveJobName } from './job-name';
import { jobUploads, planSubmit, type SubmitInput, type SubmitListener, type SubmitPlan } from './plan';
import { buildCreateTrainingJobRequest, JOB_ENV } from './request';
import { openSubmitSession, type SubmitSession } from './submit-session';

export interface SubmitResult {
  readonly jobName: string;
  readonly jobArn: string;
  readonly checkpointsUri: string;
  readonly consoleUrl: string;
  readonly jobLogPath: string;
  readonly plan: SubmitPlan;
}

/** The Service Quotas name for the instance quota a job draws on. */
export function quotaName(instanceType: string, spot: boolean): string {
  return `${instanceType} for ${spot ? 'spot training job usage' : 'training job usage'}`;
}

/**
 * Plans (validating everything), then: claims a job name, uploads the source once per hash and the
 * job's files, creates the training job, and appends the job-log row. Bad input fails in the plan,
 * before anything is written; a failed create removes the job's uploads.
 */
export async function submit(input: SubmitInput): Promise<SubmitResult> {
  const session = openSubmitSession({ ...input, dryRun: false });
  try {
    const plan = await planSubmit({ ...input, dryRun: false }, session);
    return await submitPlanned(plan, session, input.listener);
  } finally {
    session.close();
  }
}

/**
 * Submits a plan made by `planSubmit` (not a dry-run) with the session it was made in (the caller closes it).
 * `signal` (Ctrl-C, from the CLI's withInterrupt) is checked between steps; a request in flight is let
 * finish (a write that lands after its clean-up would be left behind). Interrupted before the job is
 * created, what this submit wrote under `jobs/<job>/` (the name reservation, the job's files) is
 * removed; after, the job runs on and keeps its files. Either way it rejects with RuntimeFailure
 * `Interrupted` (exit 1) saying which.
 */
export async function submitPlanned(
  plan: SubmitPlan,
  session: SubmitSession,
  listener?: SubmitListener,
  signal?: AbortSignal,
): Promise<SubmitResult> {
  // A plan made for a dry-run holds placeholders; a dry-run session probes, it does not submit.
  if (session.dryRun || plan.placeholders.length > 0)
    throw new RuntimeFailure(
      'A dry-run plan or session cannot submit: plan again with dryRun: false',
      'DryRun',
    );
  if (signal?.aborted) throw new RuntimeFailure(`Interrupted: ${NOTHING_CREATED}.`, 'Interrupted');
  const { aws } = await session.connect();
  if (!aws) throw new RuntimeFailure('A submit needs a session with AWS clients', 'NoAwsClients');
  return createJob({ plan, aws, emit: listener ?? (() => undefined), signal, made: [] });
}

/** What every step of a submit works with. */
interface Submitting {
  readonly plan: SubmitPlan;
  readonly aws: AwsClients;
  readonly emit: SubmitListener;
  readonly signal?: AbortSignal;
  /** Keys this submit wrote under `jobs/` and has not removed (reservations first): the clean-up's list. */
  readonly made: string[];
}

const NOTHING_CREATED = 'no job was created and nothing was written';

/**
 * When Ctrl-C came: removes what this submit wrote under `jobs/` and throws `Interrupted` saying so
 * (the source archive stays: it is content-addressed, shared with other submits of the same source,
 * and reused by the next).
 */
async function checkInterrupt(s: Submitting): Promise<void> {
  if (!s.signal?.aborted) return;
  const { layout, source } = s.plan;
  const sourceNote = `the source archive ${layout.uri(source.key)} stays (shared by content with other submits; the next submit reuses it)`;
  if (s.made.length === 0)
    throw new RuntimeFailure(`Interrupted: no job was created; ${sourceNote}.`, 'Interrupted');
  const keys = [...s.made];
  const reservations = keys.filter((k) => k.endsWith(`/${JOB_FILES.reservation}`)).length;
  const what = `${reservations} name reservation(s) and ${keys.length - reservations} job file(s) under ${layout.uri(layout.jobsPrefix())}`;
  try {
    await s.aws.s3.deleteObjects(layout.bucket, keys);
  } catch (err) {
    throw new RuntimeFailure(
      `Interrupted: no job was created, but ${what} could not be removed (${describeAwsError(err)}): ` +
        `remove them by hand: ${keys.map((k) => layout.uri(k)).join(' ')}`,
      'Interrupted',
      { cause: err },
    );
  }
  s.made.length = 0;
  throw new RuntimeFailure(
    `Interrupted: no job was created; removed what this submit wrote: ${what}; ${sourceNote}.`,
    'Interrupted',
  );
}

/** Claims a name, uploads the job's files, creates the job (the next name when SageMaker has it), logs it. */
async function createJob(s: Submitting): Promise<SubmitResult> {
  const { plan, aws } = s;
  const { layout } = plan;
  await uploadSource(s);
  await checkInterrupt(s);
  const taken = new Set<string>();
  for (;;) {
    const jobName = await claimJobName(s, taken);
    s.made.push(layout.jobKey(jobName, JOB_FILES.reservation));
    await checkInterrupt(s);
    s.emit({ type: 'step', message: `job name ${jobName}` });
    const written = await uploadJobFiles(s, jobName);
    await checkInterrupt(s);
    const jobArn = await createTrainingJob(s, jobName, written);
    if (jobArn === undefined) {
      taken.add(jobName);
      await checkInterrupt(s);
      continue;
    }
    await recordInJobLog(plan, jobName);
    s.emit({ type: 'step', message: `logged in ${plan.jobLogPath}` });
    if (s.signal?.aborted) throw interruptedAfterCreate(plan, jobName);
    return {
      jobName,
      jobArn,
      checkpointsUri: layout.uri(layout.checkpointsPrefix(jobName)),
      consoleUrl: consoleJobUrl(aws.region, jobName),
      jobLogPath: plan.jobLogPath,
      plan,
    };
  }
}

/** Ctrl-C after CreateTrainingJob succeeded: the job is not stopped (the user may want it), only reported. */
function interruptedAfterCreate(plan: SubmitPlan, jobName: string): RuntimeFailure {
  const { layout } = plan;
  return new RuntimeFailure(
    `Interrupted after job ${jobName} was created: it runs on (nothing was stopped), its files under ` +
      `${layout.uri(layout.jobPrefix(jobName))} are kept and it is logged in ${plan.jobLogPath}. ` +
      `Its checkpoints go to ${layout.uri(layout.checkpointsPrefix(jobName))}; to stop it: rlvr stop ${jobName}`,
    'Interrupted',
  );
}

/** The trainer's source: content-addressed, uploaded once (a sweep shares it). */
async function uploadSource({ plan, aws, emit }: Submitting): Promise<void> {
  const { bucket } = plan.layout;
  const key = plan.source.key;
  const bytes = plan.packed.gzip.length;
  try {
    if (await aws.s3.headObject(bucket, key)) {
      emit({ type: 'file', key, bytes, skipped: true });
    } else {
      await aws.s3.uploadObject(bucket, key, plan.packed.gzip, 'application/gzip');
      emit({ type: 'file', key, bytes, skipped: false });
    }
  } catch (err) {
    throw new RuntimeFailure(
      `Could not upload the trainer's source: ${describeAwsError(err)}`,
      'UploadFailed',
      { cause: err },
    );
  }
}

/** The first free name that is not in `taken`, reserved in S3. */
async function claimJobName({ plan, aws }: Submitting, taken: ReadonlySet<string>): Promise<string> {
  try {
    return await reserveJobName({
      s3: aws.s3,
      sagemaker: aws.sagemaker,
      layout: plan.layout,
      prefix: plan.settings.values.jobNamePrefix!,
      now: plan.submittedAt,
      reservation: {
        submitId: plan.submitId,
        user: os.userInfo().username,
        host: os.hostname(),
        config: plan.configDisplayPath,
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
  await s.aws.s3.deleteObjects(s.plan.layout.bucket, keys).catch(() => undefined);
  const removed = new Set(keys);
  const kept = s.made.filter((k) => !removed.has(k));
  s.made.splice(0, s.made.length, ...kept);
}

/**
 * Uploads the job's files under `jobs/<job>/` (each recorded in `made` once written): every key written,
 * the reservation first. Ctrl-C between two files stops it (the caller cleans up).
 */
async function uploadJobFiles(s: Submitting, jobName: string): Promise<string[]> {
  const { plan, aws, emit } = s;
  const { layout } = plan;
  const written: string[] = [layout.jobKey(jobName, JOB_FILES.reservation)];
  try {
    for (const file of jobUploads(plan)) {
      if (s.signal?.aborted) break;
      const key = layout.jobKey(jobName, file.file);
      const type = file.file.endsWith('.yaml') ? 'application/yaml' : 'text/plain';
      await aws.s3.putObject(layout.bucket, key, file.body, type);
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
 * Creates the training job: its ARN, or undefined when SageMaker already has a job of that name (then
 * the files uploaded under it, but its reservation, are removed and the caller tries the next name).
 * Any other failure removes every file written for it.
 */
async function createTrainingJob(
  s: Submitting,
  jobName: string,
  written: readonly string[],
): Promise<string | undefined> {
  const { plan, aws, emit } = s;
  try {
    return await aws.sagemaker.createTrainingJob(
      buildCreateTrainingJobRequest({ ...plan.requestInput, jobName }),
    );
  } catch (err) {
    if (isAwsError(err, 'NameInUse')) {
      // A retried create may have succeeded the first time: then the job is ours.
      const existing = await aws.sagemaker.describeTrainingJob(jobName).catch(() => undefined);
      if (existing?.Environment?.[JOB_ENV.submitId] === plan.submitId) return existing.TrainingJobArn!;
      emit({ type: 'retry', message: `${jobName} is taken in SageMaker; trying the next name` });
      await removeKeys(s, written.slice(1));
      return undefined;
    }
    await removeKeys(s, written);
    if (isAwsError(err, 'QuotaExceeded')) {
      const quota = quotaName(plan.options.instanceType.value, plan.options.spot.value);
      throw new RuntimeFailure(
        `SageMaker refused the job: the quota "${quota}" in ${aws.region} is used up (${err.message}). ` +
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

/** What `--allow-missing-order-ids` let through, for the job log row. */
function allowedNote(m: SubmitPlan['missingOrderIds'][number]): string {
  return `[allowed: ${m.missing.toLocaleString('en-US')} of ${m.of.toLocaleString('en-US')} order ids in ${m.order} not in ${m.dataset}]`;
}

/** Appends the job's row to the job log. */
async function recordInJobLog(plan: SubmitPlan, jobName: string): Promise<void> {
  const { options, git } = plan;
  try {
    await appendJobLogRow(plan.jobLogPath, {
      jobName,
      config: plan.configDisplayPath,
      description: [plan.description, ...plan.missingOrderIds.map(allowedNote)].filter(Boolean).join(' '),
      submitted: plan.submittedAt,
      instance: `${options.instanceCount.value}× ${options.instanceType.value}${options.spot.value ? ' (spot)' : ''}`,
      template: plan.template?.name ?? '',
      commit: git?.commit ? `${git.commit.slice(0, 12)}${git.dirty ? '+dirty' : ''}` : '',
    });
  } catch (err) {
    throw new RuntimeFailure(
      `Job ${jobName} was created, but the job log ${plan.jobLogPath} could not be written: ${(err as Error).message}. Add its row by hand.`,
      'JobLogFailed',
      { cause: err },
    );
  }
}
