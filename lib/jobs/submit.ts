import * as os from 'node:os';
import { describeAwsError } from '../aws';
import { RlvrError, RuntimeFailure } from '../errors';
import { consoleJobUrl, JOB_FILES } from '../layout';
import { appendJobLogRow } from './job-log';
import { reserveJobName } from './job-name';
import { jobUploads, planSubmit, type SubmitInput, type SubmitListener, type SubmitPlan } from './plan';
import { buildCreateTrainingJobRequest, JOB_ENV } from './request';

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

function errorName(err: unknown): string {
  return (err as { name?: string }).name ?? '';
}

/**
 * Plans (validating everything), then: claims a job name, uploads the source once per hash and the
 * job's files, creates the training job, and appends the job-log row. Bad input fails in the plan,
 * before anything is written; a failed create removes the job's uploads.
 */
export async function submit(input: SubmitInput): Promise<SubmitResult> {
  return submitPlanned(await planSubmit({ ...input, dryRun: false }), input.listener);
}

/** Submits a plan made by `planSubmit` (not a dry-run); closes its clients. */
export async function submitPlanned(plan: SubmitPlan, listener?: SubmitListener): Promise<SubmitResult> {
  try {
    return await createJob(plan, listener);
  } finally {
    plan.aws?.close();
  }
}

async function createJob(plan: SubmitPlan, listener: SubmitListener | undefined): Promise<SubmitResult> {
  const aws = plan.aws!;
  const emit: SubmitListener = listener ?? (() => undefined);
  const { layout } = plan;
  const { bucket } = layout;

  // The trainer's source: content-addressed, uploaded once (a sweep shares it).
  const sourceKey = plan.source.key;
  try {
    if (await aws.s3.headObject(bucket, sourceKey)) {
      emit({ type: 'file', key: sourceKey, bytes: plan.packed.gzip.length, skipped: true });
    } else {
      await aws.s3.uploadObject(bucket, sourceKey, plan.packed.gzip, 'application/gzip');
      emit({ type: 'file', key: sourceKey, bytes: plan.packed.gzip.length, skipped: false });
    }
  } catch (err) {
    throw new RuntimeFailure(
      `Could not upload the trainer's source: ${describeAwsError(err)}`,
      'UploadFailed',
      { cause: err },
    );
  }

  const taken = new Set<string>();
  for (;;) {
    let jobName: string;
    try {
      jobName = await reserveJobName({
        s3: aws.s3,
        sagemaker: aws.sagemaker,
        layout,
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
    emit({ type: 'step', message: `job name ${jobName}` });

    const request = buildCreateTrainingJobRequest({ ...plan.requestInput, jobName });
    const written: string[] = [layout.jobKey(jobName, JOB_FILES.reservation)];
    const cleanUp = async () => {
      try {
        await aws.s3.deleteObjects(bucket, written);
      } catch {
        // best effort: the failure being reported matters more
      }
    };
    try {
      for (const file of jobUploads(plan)) {
        const key = layout.jobKey(jobName, file.file);
        await aws.s3.putObject(
          bucket,
          key,
          file.body,
          file.file.endsWith('.yaml') ? 'application/yaml' : 'text/plain',
        );
        written.push(key);
        emit({ type: 'file', key, bytes: Buffer.byteLength(file.body), skipped: false });
      }
    } catch (err) {
      await cleanUp();
      throw new RuntimeFailure(`Could not upload the job's files: ${describeAwsError(err)}`, 'UploadFailed', {
        cause: err,
      });
    }

    let jobArn: string;
    try {
      jobArn = await aws.sagemaker.createTrainingJob(request);
    } catch (err) {
      if (errorName(err) === 'ResourceInUse') {
        // A retried create may have succeeded the first time: then the job is ours.
        const existing = await aws.sagemaker.describeTrainingJob(jobName).catch(() => undefined);
        if (existing?.Environment?.[JOB_ENV.submitId] === plan.submitId) {
          jobArn = existing.TrainingJobArn!;
        } else {
          emit({ type: 'retry', message: `${jobName} is taken in SageMaker; trying the next name` });
          taken.add(jobName);
          await aws.s3.deleteObjects(bucket, written.slice(1)).catch(() => undefined);
          continue;
        }
      } else {
        await cleanUp();
        if (errorName(err) === 'ResourceLimitExceeded') {
          throw new RuntimeFailure(
            `SageMaker refused the job: the quota "${quotaName(plan.options.instanceType.value, plan.options.spot.value)}" in ${aws.region} is used up (${(err as Error).message}). ` +
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

    try {
      await appendJobLogRow(plan.jobLogPath, {
        jobName,
        config: plan.configDisplayPath,
        description: plan.description,
        submitted: plan.submittedAt,
        instance: `${plan.options.instanceCount.value}× ${plan.options.instanceType.value}${plan.options.spot.value ? ' (spot)' : ''}`,
        template: plan.template?.name ?? '',
        commit: plan.git?.commit ? `${plan.git.commit.slice(0, 12)}${plan.git.dirty ? '+dirty' : ''}` : '',
      });
    } catch (err) {
      throw new RuntimeFailure(
        `Job ${jobName} was created, but the job log ${plan.jobLogPath} could not be written: ${(err as Error).message}. Add its row by hand.`,
        'JobLogFailed',
        { cause: err },
      );
    }
    emit({ type: 'step', message: `logged in ${plan.jobLogPath}` });
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
