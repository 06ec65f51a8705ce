import * as path from 'node:path';
import { LOCAL } from '../layout';
import { SHAPE_KEYS, shapeDifferences, type RunShape, type ShapeKey } from './shape';
import type { JobForecastRecord } from '../trainers';
import { mergeRuns, resultsFolderRuns, type PastRun, type RunsSeen } from './past-runs';

/*
 * The forecast a plan prints: how long a job's steps will take, judged by the runs of the same shape
 * the launcher can see. The rate is the median of the similar runs' own medians (one slow run does not
 * move it); the spread is the 10th–90th percentile of all their steps. With no similar run there is no
 * number: a guess is what the team already has.
 */

/** The max runtime should exceed the forecast by this much: a run's steps vary, and so do runs. */
export const RUNTIME_MARGIN = 1.15;
/** A max runtime this many times the forecast (and GENEROUS_SLACK_S more) would pay long for a hung run. */
export const GENEROUS_FACTOR = 4;
export const GENEROUS_SLACK_S = 6 * 3600;
/** A suggested runtime is rounded up to this. */
const ROUND_S = 15 * 60;

export interface SimilarRun {
  readonly id: string;
  readonly source: PastRun['source'];
  /** Its median seconds per step. */
  readonly secondsPerStep: number;
  /** Steps its rate was measured on. */
  readonly measuredSteps: number;
}

export type ForecastVerdict = 'covers' | 'thin' | 'short' | 'generous' | 'unknown';

export interface Forecast {
  readonly shape: RunShape;
  readonly matchedOn: readonly ShapeKey[];
  /** Steps the config trains for (undefined: not known, so no wall time). */
  readonly maxSteps: number | undefined;
  /** The step it starts from (a resumed job's resume step). */
  readonly fromStep?: number;
  /** Runs looked at, and of those how many had no shape to compare. */
  readonly seen: number;
  readonly unknownShape: number;
  readonly similar: readonly SimilarRun[];
  /** The closest runs that differ, and in what (when none matched). */
  readonly nearest: readonly { readonly id: string; readonly differs: readonly ShapeKey[] }[];
  readonly secondsPerStep?: { readonly median: number; readonly p10: number; readonly p90: number };
  /** Seconds from the job's start to its first step (model load, vLLM start), as the similar runs took. */
  readonly startupSeconds?: number;
  /** Expected wall time to the last step. */
  readonly wallSeconds?: number;
  /** Expected on-demand cost to the last step. */
  readonly cost?: number;
  readonly maxRuntimeSeconds: number;
  /** The eval watcher's wait after the last step, which a runtime that fits leaves room for. */
  readonly evalWaitSeconds: number;
  readonly verdict: ForecastVerdict;
  /** `short`: the step the max runtime would stop training at. */
  readonly cutAtStep?: number;
  /** A max runtime that covers the forecast with the margin (and the eval watcher's wait). */
  readonly fitsSeconds?: number;
  /** Why there is no number. */
  readonly why?: string;
}

function quantile(sorted: readonly number[], q: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

export function mean(xs: readonly number[]): number {
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export interface ForecastInput {
  readonly shape: RunShape;
  readonly maxSteps: number | undefined;
  /** The step a resumed job starts from (its trainer's resume key; 0 for a fresh run). */
  readonly fromStep?: number;
  readonly maxRuntimeSeconds: number;
  /** On-demand price per hour of all the job's instances (undefined: not listed). */
  readonly perHour: number | undefined;
  /** Seconds the eval watcher may run after the last step (0: no eval config). */
  readonly evalWaitSeconds: number;
  readonly runs: readonly PastRun[];
  /** Runs of other shapes, for the plan to name the nearest when none matches. */
  readonly others?: readonly { readonly id: string; readonly shape: RunShape }[];
  readonly seen: number;
  readonly unknownShape: number;
}

/** The forecast of a job of `shape` from past runs (pure). */
export function forecastJob(input: ForecastInput): Forecast {
  const { shape, maxSteps, maxRuntimeSeconds } = input;
  const base = {
    shape,
    matchedOn: SHAPE_KEYS,
    maxSteps,
    seen: input.seen,
    unknownShape: input.unknownShape,
    maxRuntimeSeconds,
    evalWaitSeconds: input.evalWaitSeconds,
  };
  const similarRuns = input.runs.filter((r) => shapeDifferences(r.shape, shape).length === 0);
  const nearest = [...input.runs.filter((r) => !similarRuns.includes(r)), ...(input.others ?? [])]
    .map((r) => ({ id: r.id, differs: shapeDifferences(r.shape, shape) }))
    .sort((a, b) => a.differs.length - b.differs.length || a.id.localeCompare(b.id))
    .slice(0, 3);
  if (similarRuns.length === 0) {
    return {
      ...base,
      similar: [],
      nearest,
      verdict: 'unknown',
      why: input.seen === 0 ? 'no past run seen' : `no similar run among the ${input.seen} seen`,
    };
  }
  // Each run's average step, not its median: the steps that save a checkpoint or evaluate are part of
  // the wall time, and a median would leave them out.
  const similar = similarRuns.map((r) => ({
    id: r.id,
    source: r.source,
    secondsPerStep: mean(r.intervals),
    measuredSteps: r.intervals.length,
  }));
  const rate = median(similar.map((s) => s.secondsPerStep));
  const pooled = similarRuns.flatMap((r) => r.intervals).sort((a, b) => a - b);
  const secondsPerStep = { median: rate, p10: quantile(pooled, 0.1), p90: quantile(pooled, 0.9) };
  // From the container's start (when the run recorded it) to its first step's start.
  const startups = similarRuns
    .filter((r) => r.firstStepTs !== undefined)
    .map((r) => (r.setupSeconds ?? 0) + Math.max(0, r.firstStepTs! - mean(r.intervals)));
  const startupSeconds = startups.length > 0 ? median(startups) : 0;
  if (maxSteps === undefined)
    return {
      ...base,
      similar,
      nearest,
      secondsPerStep,
      startupSeconds,
      verdict: 'unknown',
      why: 'the config sets no max_steps the trainer stops at',
    };
  // A resumed job trains from its resume step.
  const fromStep = Math.min(Math.max(0, input.fromStep ?? 0), maxSteps);
  const wallSeconds = startupSeconds + (maxSteps - fromStep) * rate;
  const cost = input.perHour === undefined ? undefined : (input.perHour * wallSeconds) / 3600;
  const fitsSeconds = Math.ceil((wallSeconds * RUNTIME_MARGIN + input.evalWaitSeconds) / ROUND_S) * ROUND_S;
  let verdict: ForecastVerdict = 'covers';
  let cutAtStep: number | undefined;
  if (maxRuntimeSeconds < wallSeconds) {
    verdict = 'short';
    cutAtStep = Math.max(
      fromStep,
      Math.min(maxSteps - 1, fromStep + Math.floor((maxRuntimeSeconds - startupSeconds) / rate)),
    );
  } else if (maxRuntimeSeconds < wallSeconds * RUNTIME_MARGIN + input.evalWaitSeconds) verdict = 'thin';
  else if (
    maxRuntimeSeconds > GENEROUS_FACTOR * (wallSeconds + input.evalWaitSeconds) &&
    maxRuntimeSeconds - wallSeconds > GENEROUS_SLACK_S
  )
    verdict = 'generous';
  return {
    ...base,
    fromStep,
    similar,
    nearest,
    secondsPerStep,
    startupSeconds,
    wallSeconds,
    cost,
    verdict,
    cutAtStep,
    fitsSeconds,
  };
}

/** What a job records of its forecast (contract.json, then run.json): kept beside what happened. */
export type RecordedForecast = JobForecastRecord;

export function recordOf(forecast: Forecast): RecordedForecast {
  return {
    shape: forecast.shape,
    ...(forecast.maxSteps !== undefined ? { maxSteps: forecast.maxSteps } : {}),
    ...(forecast.secondsPerStep ? { secondsPerStep: round1(forecast.secondsPerStep.median) } : {}),
    ...(forecast.wallSeconds !== undefined ? { wallSeconds: Math.round(forecast.wallSeconds) } : {}),
    similarRuns: forecast.similar.length,
  };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** A forecast with where it looked: what the plan prints. */
export interface ForecastReport {
  readonly forecast: Forecast;
  /** The results folder looked in. */
  readonly resultsDir: string;
  /** Whether SageMaker's ended jobs were looked at, and why not. */
  readonly sagemaker: { readonly read: boolean; readonly note?: string };
}

/** SageMaker's ended jobs as past runs, or why they could not be read. */
export interface SageMakerPastRuns {
  readonly runs?: RunsSeen;
  readonly note?: string;
}

/**
 * The forecast of a job of `shape` from the runs of the results folder (`resultsDir` from `cwd`, default
 * `results/`; only the traces of runs of that shape are read) and, when read, SageMaker's ended jobs,
 * with where it looked.
 */
export function forecastReport(
  input: Omit<ForecastInput, 'runs' | 'others' | 'seen' | 'unknownShape'> & {
    readonly cwd: string;
    readonly resultsDir?: string;
    readonly sagemaker?: SageMakerPastRuns;
  },
): ForecastReport {
  const { cwd, resultsDir: given, sagemaker, ...rest } = input;
  const resultsDir = path.resolve(cwd, given ?? LOCAL.resultsDir);
  const local = resultsFolderRuns(resultsDir, (s) => shapeDifferences(s, input.shape).length === 0);
  return {
    forecast: forecastJob({ ...rest, ...mergeRuns(local, sagemaker?.runs) }),
    resultsDir,
    sagemaker: { read: sagemaker?.runs !== undefined, ...(sagemaker?.note ? { note: sagemaker.note } : {}) },
  };
}
