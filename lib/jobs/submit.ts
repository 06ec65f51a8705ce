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

/** Submits a plan made by `planSubmit` (not a dry-run) with the session it was made in (the caller closes it). */
export async function submitPlanned(
  plan: SubmitPlan,
  session: SubmitSession,
  listener?: SubmitListener,
): Promise<SubmitResult> {
  // A plan made for a dry-run holds placeholders; a dry-run session probes, it does not submit.
  if (session.dryRun || plan.placeholders.length > 0)
    throw new RuntimeFailure(
      'A dry-run plan or session cannot submit: plan again with dryRun: false',
      'DryRun',
    );
  const { aws } = await session.connect();
  if (!aws) throw new RuntimeFailure('A submit needs a session with AWS clients', 'NoAwsClients');
  return createJob({ plan, aws, emit: listener ?? (() => undefined) });
}

/** What every step of a submit works with. */
interface Submitting {
  readonly plan: SubmitPlan;
  readonly aws: AwsClients;
  readonly emit: SubmitListener;
}

/** Claims a name, uploads the job's files, creates the job (the next name when SageMaker has it), logs it. */
async function createJob(s: Submitting): Promise<SubmitResult> {
  const { plan, aws } = s;
  const { layout } = plan;
  await uploadSource(s);
  const taken = new Set<string>();
  for (;;) {
    const jobName = await claimJobName(s, taken);
    s.emit({ type: 'step', message: `job name ${jobName}` });
    const written = await uploadJobFiles(s, jobName);
    const jobArn = await createTrainingJob(s, jobName, written);
    if (jobArn === undefined) {
      taken.add(jobName);
      continue;
    }
    await recordInJobLog(plan, jobName);
    s.emit({ type: 'step', message: `logged in ${plan.jobLogPath}` });
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
async function removeKeys(aws: AwsClients, bucket: string, keys: readonly string[]): Promise<void> {
  await aws.s3.deleteObjects(bucket, keys).catch(() => undefined);
}

/** Uploads the job's files under `jobs/<job>/`: every key written, the reservation first. */
async function uploadJobFiles({ plan, aws, emit }: Submitting, jobName: string): Promise<string[]> {
  const { layout } = plan;
  const written: string[] = [layout.jobKey(jobName, JOB_FILES.reservation)];
  try {
    for (const file of jobUploads(plan)) {
      const key = layout.jobKey(jobName, file.file);
      const type = file.file.endsWith('.yaml') ? 'application/yaml' : 'text/plain';
      await aws.s3.putObject(layout.bucket, key, file.body, type);
      written.push(key);
      emit({ type: 'file', key, bytes: Buffer.byteLength(file.body), skipped: false });
    }
  } catch (err) {
    await removeKeys(aws, layout.bucket, written);
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
  { plan, aws, emit }: Submitting,
  jobName: string,
  written: readonly string[],
): Promise<string | undefined> {
  const { bucket } = plan.layout;
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
      await removeKeys(aws, bucket, written.slice(1));
      return undefined;
    }
    await removeKeys(aws, bucket, written);
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

/** Appends the job's row to the job log. */
async function recordInJobLog(plan: SubmitPlan, jobName: string): Promise<void> {
  const { options, git } = plan;
  try {
    await appendJobLogRow(plan.jobLogPath, {
      jobName,
      config: plan.configDisplayPath,
      description: plan.description,
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
