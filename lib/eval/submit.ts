/**
 * Submits a batch evaluation plan (issue #15): claims a job name (`<prefix>-eval-…`, create-only in S3
 * as every submit does), uploads the plan and the channels' manifests under `jobs/<job>/`, creates the
 * training job and logs it. A failure, or Ctrl-C before the job exists, removes what was written.
 */
import * as os from 'node:os';
import { describeAwsError, isAwsError, type AwsClients } from '../aws';
import { RlvrError, RuntimeFailure } from '../errors';
import { consoleJobUrl, JOB_FILES } from '../layout';
import { appendJobLogRow } from '../jobs/job-log';
import { reserveJobName } from '../jobs/job-name';
import { quotaName } from '../jobs/submit';
import type { EvalPlan } from './plan';

export interface EvalSubmitResult {
  readonly jobName: string;
  readonly jobArn: string;
  readonly checkpointsUri: string;
  readonly consoleUrl: string;
}

export async function submitEval(
  plan: EvalPlan,
  aws: AwsClients,
  options: {
    readonly jobLogPath: string;
    readonly signal?: AbortSignal;
    readonly say?: (line: string) => void;
  },
): Promise<EvalSubmitResult> {
  const { layout } = plan;
  const say = options.say ?? (() => undefined);
  const written: string[] = [];
  const cleanUp = () => aws.s3.deleteObjects(layout.bucket, written).catch(() => undefined);
  const interrupted = async () => {
    if (!options.signal?.aborted) return;
    await cleanUp();
    throw new RuntimeFailure(
      'Interrupted: no eval job was created; what this submit wrote was removed.',
      'Interrupted',
    );
  };
  let jobName: string;
  try {
    jobName = await reserveJobName({
      s3: aws.s3,
      sagemaker: aws.sagemaker,
      layout,
      prefix: plan.jobNamePrefix,
      now: plan.submittedAt,
      reservation: {
        submitId: plan.submitId,
        user: os.userInfo().username,
        host: os.hostname(),
        kind: 'eval',
        reservedAt: new Date().toISOString(),
      },
    });
  } catch (err) {
    if (err instanceof RlvrError) throw err;
    throw new RuntimeFailure(`Could not claim a job name: ${describeAwsError(err)}`, 'ReserveFailed', {
      cause: err,
    });
  }
  written.push(layout.jobKey(jobName, JOB_FILES.reservation));
  say(`job name ${jobName}`);
  let jobArn: string;
  try {
    for (const f of plan.uploads()) {
      await interrupted();
      const key = layout.jobKey(jobName, f.file);
      await aws.s3.putObject(layout.bucket, key, f.body, 'application/json');
      written.push(key);
    }
    await interrupted();
    jobArn = await aws.sagemaker.createTrainingJob(plan.buildRequest(jobName));
  } catch (err) {
    await cleanUp();
    if (err instanceof RlvrError) throw err;
    if (isAwsError(err, 'QuotaExceeded'))
      throw new RuntimeFailure(
        `SageMaker refused the eval job: the quota "${quotaName(plan.request.instanceType, plan.request.spot)}" is used up (${(err as Error).message}). Stop a running job or request an increase in Service Quotas.`,
        'ResourceLimitExceeded',
        { cause: err },
      );
    throw new RuntimeFailure(`Could not create the eval job: ${describeAwsError(err)}`, 'CreateFailed', {
      cause: err,
    });
  }
  try {
    await appendJobLogRow(options.jobLogPath, {
      jobName,
      config: `rlvr eval (${plan.request.benchmarksFrom})`,
      description:
        plan.request.description ??
        `eval: ${plan.checkpoints.map((c) => c.label).join(', ')} × ${plan.request.benchmarks.map((b) => `${b.task}:${b.numFewshot}`).join(', ')}`,
      submitted: plan.submittedAt,
      instance: `${plan.hosts}× ${plan.request.instanceType}${plan.request.spot ? ' (spot)' : ''}`,
      template: 'eval',
      commit: '',
    });
  } catch (err) {
    throw new RuntimeFailure(
      `Eval job ${jobName} was created, but the job log ${options.jobLogPath} could not be written: ${(err as Error).message}. Add its row by hand.`,
      'JobLogFailed',
      { cause: err },
    );
  }
  return {
    jobName,
    jobArn,
    checkpointsUri: layout.uri(layout.checkpointsPrefix(jobName)),
    consoleUrl: consoleJobUrl(aws.region, jobName),
  };
}
