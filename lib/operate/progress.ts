import type { DescribeTrainingJobResponse } from '@aws-sdk/client-sagemaker';
import { parse as parseYaml } from 'yaml';
import { isAwsError, type IS3 } from '../aws';
import { clockOfTail, liveProgress, maxStepsOf, TRACE_WINDOW, type LiveProgress } from '../forecast';
import { costOf } from '../job-options';
import { JOB_FILES, type S3Layout } from '../layout';
import { isMap } from '../trainers';
import { isObject } from '../util';

/** What the job's own files say of its end: the steps it trains for and the rate it was forecast. */
export interface JobPlanFacts {
  readonly maxSteps: number | undefined;
  readonly forecastSecondsPerStep: number | undefined;
  readonly forecastWallSeconds: number | undefined;
  /** The shape it recorded (undefined: a job from before shapes were recorded). */
  readonly shape: unknown;
}

/** An object's text; undefined when there is none (a job from before the file was written). */
async function readText(s3: IS3, bucket: string, key: string): Promise<string | undefined> {
  try {
    return await s3.getObjectText(bucket, key);
  } catch (err) {
    if (isAwsError(err, 'NotFound')) return undefined;
    throw err;
  }
}

/**
 * contract.json's forecast (the steps, the rate and wall time the plan gave); for a job submitted before
 * forecasts were recorded, the steps from the config its trainer read. Missing files say nothing.
 */
export async function readJobPlanFacts(s3: IS3, layout: S3Layout, job: string): Promise<JobPlanFacts> {
  const contractText = await readText(s3, layout.bucket, layout.jobKey(job, JOB_FILES.contract));
  let forecast: Record<string, unknown> = {};
  try {
    const contract: unknown = contractText ? JSON.parse(contractText) : undefined;
    if (isObject(contract) && isObject(contract.forecast)) forecast = contract.forecast;
  } catch {
    // a contract that does not parse records nothing
  }
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  let maxSteps = num(forecast.maxSteps);
  if (maxSteps === undefined) {
    const configText = await readText(s3, layout.bucket, layout.jobKey(job, JOB_FILES.resolvedConfig));
    try {
      const config: unknown = configText ? parseYaml(configText) : undefined;
      if (isMap(config)) maxSteps = maxStepsOf(config);
    } catch {
      // a config that does not parse names no steps
    }
  }
  return {
    maxSteps,
    forecastSecondsPerStep: num(forecast.secondsPerStep),
    forecastWallSeconds: num(forecast.wallSeconds),
    shape: forecast.shape,
  };
}

/**
 * A running job's step of its steps, rate, ETA and cost at finish: the tail of its trace in S3 (one
 * ranged read, never the whole trace) and its contract. Undefined for a job that is not running or has
 * no trace yet.
 */
export async function jobProgress(
  s3: IS3,
  layout: S3Layout,
  job: DescribeTrainingJobResponse,
  checkpoints: {
    readonly traceKey: string | undefined;
    readonly traceBytes: number;
    readonly latestStep: number | undefined;
  },
  cost: { readonly elapsedSeconds: number; readonly cost: number | undefined },
  region: string,
): Promise<LiveProgress | undefined> {
  if (job.TrainingJobStatus !== 'InProgress' || !checkpoints.traceKey) return undefined;
  const name = job.TrainingJobName!;
  const [facts, tail] = await Promise.all([
    readJobPlanFacts(s3, layout, name),
    checkpoints.traceBytes > 0
      ? s3.getObjectRange(
          layout.bucket,
          checkpoints.traceKey,
          -Math.min(checkpoints.traceBytes, TRACE_WINDOW),
        )
      : Promise.resolve(Buffer.alloc(0)),
  ]);
  const type = job.ResourceConfig?.InstanceType ?? '';
  return liveProgress({
    clock: clockOfTail(tail, tail.length < checkpoints.traceBytes),
    checkpointStep: checkpoints.latestStep,
    maxSteps: facts.maxSteps,
    elapsedSeconds: cost.elapsedSeconds,
    maxRuntimeSeconds: job.StoppingCondition?.MaxRuntimeInSeconds,
    perHour: costOf(type, region, job.ResourceConfig?.InstanceCount ?? 1, 3600),
    costSoFar: cost.cost,
    forecastSecondsPerStep: facts.forecastSecondsPerStep,
  });
}
