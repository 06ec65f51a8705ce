import * as path from 'node:path';
import { LOCAL } from '../layout';
import { SHAPE_KEYS, shapeDifferences, type RunShape, type ShapeKey } from './shape';
import type { JobForecastRecord } from '../trainers';
import { mergeRuns, resultsFolderRuns, type PastRun, type RunsSeen } from './past-runs';

/*
 * The forecast a plan prints: how long a job's steps will take, judged by the runs of the same shape
 * the launcher can see. The rate is the median of the similar runs' own average steps (one slow run
 * does not move it); the spread is the 10th–90th percentile of all their steps. What is not steps (the
 * start-up, and the checkpoint after the last step) is taken whole from completed runs that recorded
 * their ends. A run that saw no checkpoint, or a tenth of its steps, is not enough alone: a forecast
 * from such runs only is rough, says so on every number, and never calls a runtime sufficient. With no
 * similar run there is no number: a guess is what the team already has.
 */

/** The max runtime should exceed the forecast by this much: a run's steps vary, and so do runs. */
export const RUNTIME_MARGIN = 1.15;
/** A max runtime this many times the forecast (and GENEROUS_SLACK_S more) would pay long for a hung run. */
export const GENEROUS_FACTOR = 4;
export const GENEROUS_SLACK_S = 6 * 3600;
/** A suggested runtime is rounded up to this. */
const ROUND_S = 15 * 60;
/** A run that trained under this share of its steps says too little of a whole run to be used alone. */
export const MIN_STEP_SHARE = 0.1;

export interface SimilarRun {
  readonly id: string;
  readonly source: PastRun['source'];
  /** Its average seconds per step. */
  readonly secondsPerStep: number;
  /** Steps its rate was measured on. */
  readonly measuredSteps: number;
  /** What else it measured: the steps it trained and was given, checkpoints, how it ended. */
  readonly steps?: number;
  readonly plannedSteps?: number;
  readonly checkpoints?: number;
  readonly ended?: string;
  /** Why it is not enough alone (undefined: it is). */
  readonly notAlone?: string;
  /** Whether the forecast used it (a run not enough alone is left out when others are enough). */
  readonly used: boolean;
}

export type ForecastVerdict = 'covers' | 'thin' | 'short' | 'generous' | 'unproven' | 'unknown';

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
  /**
   * `measured`: from runs enough alone. `rough`: only from runs that are not (no checkpoint seen, or
   * under a tenth of their steps): every number is a rough floor and no runtime is called sufficient.
   */
  readonly basis?: 'measured' | 'rough';
  /** Seconds that are not steps: the start-up (model load, vLLM start), and the checkpoint after the last step when measured. */
  readonly outsideSeconds?: number;
  /** Whether outsideSeconds was measured whole (completed runs' ends), so it holds the final checkpoint. */
  readonly outsideMeasured?: boolean;
  /** What the numbers do not count, in words, for the plan to say beside them. */
  readonly caveats?: readonly string[];
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
  const judged = similarRuns.map((r) => ({ run: r, notAlone: notAloneWhy(r, maxSteps) }));
  const enough = judged.filter((j) => j.notAlone === undefined);
  const basis = enough.length > 0 ? 'measured' : 'rough';
  const usedRuns = (enough.length > 0 ? enough : judged).map((j) => j.run);
  const similar: SimilarRun[] = judged.map(({ run: r, notAlone }) => ({
    id: r.id,
    source: r.source,
    secondsPerStep: mean(r.intervals),
    measuredSteps: r.intervals.length,
    ...(r.steps !== undefined ? { steps: r.steps } : {}),
    ...(r.plannedSteps !== undefined ? { plannedSteps: r.plannedSteps } : {}),
    ...(r.checkpoints !== undefined ? { checkpoints: r.checkpoints } : {}),
    ...(r.ended !== undefined ? { ended: r.ended } : {}),
    ...(notAlone !== undefined ? { notAlone } : {}),
    used: usedRuns.includes(r),
  }));
  const rate = median(usedRuns.map((r) => mean(r.intervals)));
  const pooled = usedRuns.flatMap((r) => r.intervals).sort((a, b) => a - b);
  const secondsPerStep = { median: rate, p10: quantile(pooled, 0.1), p90: quantile(pooled, 0.9) };
  const outside = outsideOf(usedRuns);
  const caveats = [
    ...(basis === 'rough'
      ? [
          `rough: no similar run is enough alone (${judged.map((j) => `${j.run.id}: ${j.notAlone}`).join('; ')}), so each number is a floor and none says a runtime is enough`,
        ]
      : []),
    ...(outside.measured
      ? []
      : [
          'the checkpoint after the last step is not counted: no similar run completed with its trainer’s end recorded',
        ]),
  ];
  const known = {
    basis,
    outsideSeconds: outside.seconds,
    outsideMeasured: outside.measured,
    caveats,
  } as const;
  if (maxSteps === undefined)
    return {
      ...base,
      similar,
      nearest,
      secondsPerStep,
      ...known,
      verdict: 'unknown',
      why: 'the config sets no max_steps the trainer stops at',
    };
  // A resumed job trains from its resume step.
  const fromStep = Math.min(Math.max(0, input.fromStep ?? 0), maxSteps);
  const wallSeconds = outside.seconds + (maxSteps - fromStep) * rate;
  const cost = input.perHour === undefined ? undefined : (input.perHour * wallSeconds) / 3600;
  const fitsSeconds = Math.ceil((wallSeconds * RUNTIME_MARGIN + input.evalWaitSeconds) / ROUND_S) * ROUND_S;
  let verdict: ForecastVerdict = basis === 'rough' ? 'unproven' : 'covers';
  let cutAtStep: number | undefined;
  if (maxRuntimeSeconds < wallSeconds) {
    verdict = 'short';
    cutAtStep = Math.max(
      fromStep,
      Math.min(maxSteps - 1, fromStep + Math.floor((maxRuntimeSeconds - outside.seconds) / rate)),
    );
  } else if (basis === 'rough') {
    // a floor cannot say a runtime is enough, nor that it is too much
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
    ...known,
    wallSeconds,
    cost,
    verdict,
    cutAtStep,
    fitsSeconds,
  };
}

/** Why a run is not enough to forecast from alone (undefined: it is). */
function notAloneWhy(run: PastRun, jobSteps: number | undefined): string | undefined {
  const why: string[] = [];
  if (run.checkpoints === 0) why.push('no checkpoint, so no checkpoint’s time is in its steps');
  const planned = run.plannedSteps ?? jobSteps;
  if (run.steps !== undefined && planned !== undefined && run.steps < MIN_STEP_SHARE * planned)
    why.push(`${run.steps} of its ${planned} steps`);
  return why.length ? why.join('; ') : undefined;
}

/**
 * Seconds a job spends outside its steps, so that wall = outside + steps × rate: from completed runs
 * that recorded their ends, all of it (container start to the first step's end and the last step's end
 * to the trainer's exit, less one step of its own); else from the start-up the traces show, without
 * what follows the last step.
 */
function outsideOf(runs: readonly PastRun[]): { seconds: number; measured: boolean } {
  const whole = runs.filter((r) => r.outsideSeconds !== undefined);
  if (whole.length > 0)
    return { seconds: median(whole.map((r) => r.outsideSeconds! - mean(r.intervals))), measured: true };
  const startups = runs
    .filter((r) => r.firstStepTs !== undefined)
    .map((r) => (r.setupSeconds ?? 0) + Math.max(0, r.firstStepTs! - mean(r.intervals)));
  return { seconds: startups.length > 0 ? median(startups) : 0, measured: false };
}

/** What a job records of its forecast (contract.json, then run.json): kept beside what happened. */
export type RecordedForecast = JobForecastRecord;

export function recordOf(forecast: Forecast): RecordedForecast {
  return {
    shape: forecast.shape,
    ...(forecast.maxSteps !== undefined ? { maxSteps: forecast.maxSteps } : {}),
    ...(forecast.secondsPerStep ? { secondsPerStep: round1(forecast.secondsPerStep.median) } : {}),
    ...(forecast.wallSeconds !== undefined ? { wallSeconds: Math.round(forecast.wallSeconds) } : {}),
    similarRuns: forecast.similar.filter((s) => s.used).length,
    ...(forecast.basis === 'rough' ? { rough: true } : {}),
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
