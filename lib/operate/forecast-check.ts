import type { TrainingJobStatus } from '@aws-sdk/client-sagemaker';
import type { JobContext } from '../aws';
import { requireLayout } from '../aws';
import { median } from '../forecast';
import { isObject, mapLimited } from '../util';
import { readCheckpoints } from './inspect';

/*
 * Forecasts against what happened. A job records the forecast it was given (run.json `forecast`: the
 * wall time to its last step, the rate, how many similar runs said so) and, per attempt, when its
 * container started and when its trainer ended; the actual is the sum of those spans over its attempts
 * (model load, vLLM start and every step: what the forecast counts, without the evaluations after).
 */

export interface ForecastCheck {
  readonly name: string;
  readonly status: string;
  readonly maxSteps: number | undefined;
  /** The newest checkpoint's step (maxSteps when the final one is there). */
  readonly stepsReached: number | undefined;
  readonly similarRuns: number | undefined;
  readonly forecastSecondsPerStep: number | undefined;
  readonly forecastWallSeconds: number | undefined;
  readonly actualWallSeconds: number | undefined;
  /** (forecast − actual) / actual, for a job that reached its last step with a forecast; else undefined. */
  readonly error: number | undefined;
}

export interface ForecastChecks {
  readonly jobs: ForecastCheck[];
  /** Jobs with both a forecast and an actual to its last step. */
  readonly compared: number;
  /** The median of |error| over those. */
  readonly medianAbsError: number | undefined;
  /** The median of error (its sign: forecasts too short < 0, too long > 0). */
  readonly medianError: number | undefined;
}

const ENDED: readonly TrainingJobStatus[] = ['Completed', 'Stopped', 'Failed'];

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Seconds from each attempt's start to its trainer's end, summed (undefined when none recorded an end). */
export function actualTrainingSeconds(runInfo: unknown): number | undefined {
  if (!isObject(runInfo) || !Array.isArray(runInfo.attempts)) return undefined;
  let total = 0;
  let any = false;
  for (const a of runInfo.attempts) {
    if (!isObject(a) || typeof a.startedAt !== 'string' || typeof a.trainerEndedAt !== 'string') continue;
    const span = (Date.parse(a.trainerEndedAt) - Date.parse(a.startedAt)) / 1000;
    if (!Number.isFinite(span) || span < 0) continue;
    total += span;
    any = true;
  }
  return any ? total : undefined;
}

/** The last ended jobs, newest first: the forecast each was given beside what it took. */
export async function forecastChecks(
  context: JobContext,
  options: { readonly limit: number; readonly nameContains?: string },
): Promise<ForecastChecks> {
  const layout = requireLayout(context);
  const summaries = await context.aws.sagemaker.listTrainingJobs({
    nameContains: options.nameContains ?? context.jobNamePrefix,
    limit: Math.max(options.limit * 3, 50),
  });
  const ended = summaries
    .filter((s) => s.TrainingJobName!.startsWith(`${context.jobNamePrefix}-`))
    .filter((s) => ENDED.includes(s.TrainingJobStatus!))
    .slice(0, options.limit);
  const jobs = await mapLimited(ended, 4, async (s): Promise<ForecastCheck> => {
    const name = s.TrainingJobName!;
    const { summary, runInfo } = await readCheckpoints(context.aws.s3, layout, name);
    const forecast = isObject(runInfo) && isObject(runInfo.forecast) ? runInfo.forecast : {};
    const maxSteps = num(forecast.maxSteps);
    const stepsReached = summary.final ? (maxSteps ?? summary.latestStep) : summary.latestStep;
    const forecastWallSeconds = num(forecast.wallSeconds);
    const actualWallSeconds = actualTrainingSeconds(runInfo);
    const reachedEnd = summary.final || (maxSteps !== undefined && stepsReached === maxSteps);
    const error =
      reachedEnd && forecastWallSeconds !== undefined && actualWallSeconds
        ? (forecastWallSeconds - actualWallSeconds) / actualWallSeconds
        : undefined;
    return {
      name,
      status: s.TrainingJobStatus!,
      maxSteps,
      stepsReached,
      similarRuns: num(forecast.similarRuns),
      forecastSecondsPerStep: num(forecast.secondsPerStep),
      forecastWallSeconds,
      actualWallSeconds,
      error,
    };
  });
  const errors = jobs.map((j) => j.error).filter((e): e is number => e !== undefined);
  return {
    jobs,
    compared: errors.length,
    medianAbsError: errors.length ? median(errors.map(Math.abs)) : undefined,
    medianError: errors.length ? median(errors) : undefined,
  };
}
