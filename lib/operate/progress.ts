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

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

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
async function readJobPlanFacts(s3: IS3, layout: S3Layout, job: string): Promise<JobPlanFacts> {
  const contractText = await readText(s3, layout.bucket, layout.jobKey(job, JOB_FILES.contract));
  let forecast: Record<string, unknown> = {};
  try {
    const contract: unknown = contractText ? JSON.parse(contractText) : undefined;
    if (isObject(contract) && isObject(contract.forecast)) forecast = contract.forecast;
  } catch {
    // a contract that does not parse records nothing
  }
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

/** What a trace's tail must hold for a rate: its latest steps (one ranged read). */
export async function readProgressTail(
  s3: IS3,
  bucket: string,
  checkpoints: { readonly traceKey: string | undefined; readonly traceBytes: number },
): Promise<Buffer> {
  if (!checkpoints.traceKey || checkpoints.traceBytes === 0) return Buffer.alloc(0);
  return s3.getObjectRange(bucket, checkpoints.traceKey, -Math.min(checkpoints.traceBytes, TRACE_WINDOW));
}

/** The forecast the job's run.json keeps (the container copies it from contract.json), when it has its steps. */
function recordedFacts(runInfo: unknown): JobPlanFacts | undefined {
  const f = isObject(runInfo) && isObject(runInfo.forecast) ? runInfo.forecast : undefined;
  if (!f || num(f.maxSteps) === undefined) return undefined;
  return {
    maxSteps: num(f.maxSteps),
    forecastSecondsPerStep: num(f.secondsPerStep),
    forecastWallSeconds: num(f.wallSeconds),
    shape: f.shape,
  };
}

/**
 * A running job's step of its steps, rate, ETA and cost at finish: the tail of its trace in S3 (one
 * ranged read, never the whole trace; given when the caller read it) and the forecast its run.json
 * keeps (its contract's when run.json has none). Undefined for a job that is not running or has no
 * trace yet.
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
  known: { readonly runInfo: unknown; readonly tail?: Buffer },
): Promise<LiveProgress | undefined> {
  if (job.TrainingJobStatus !== 'InProgress' || !checkpoints.traceKey) return undefined;
  const [facts, tail] = await Promise.all([
    recordedFacts(known.runInfo) ?? readJobPlanFacts(s3, layout, job.TrainingJobName!),
    known.tail ?? readProgressTail(s3, layout.bucket, checkpoints),
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
