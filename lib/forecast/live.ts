import { mean } from './forecast';
import { stepIntervals, type StepClock } from './step-clock';

/** How many of the latest steps the current rate is the average of. */
export const RECENT_STEPS = 20;

/** Where a running job is, and when it will end at its current rate. */
export interface LiveProgress {
  /** The step reached (undefined: none yet). */
  readonly step: number | undefined;
  readonly maxSteps: number | undefined;
  /** Average seconds of its latest steps (undefined: fewer than two steps seen). */
  readonly secondsPerStep: number | undefined;
  /** Seconds to the last step at that rate. */
  readonly etaSeconds: number | undefined;
  /** Seconds of max runtime left. */
  readonly remainingRuntimeSeconds: number | undefined;
  /** The ETA is past the max runtime: SageMaker will stop it before its last step. */
  readonly pastMaxRuntime: boolean;
  /** The step the max runtime would stop it at, when it is past. */
  readonly cutAtStep: number | undefined;
  readonly costSoFar: number | undefined;
  /** Cost so far + the ETA at the job's price (undefined when either is unknown). */
  readonly costAtFinish: number | undefined;
  /** What the job was given at submit, when it recorded a forecast. */
  readonly forecastSecondsPerStep: number | undefined;
}

export interface LiveInput {
  readonly clock: StepClock;
  /** The newest checkpoint's step: the step when the trace carries none. */
  readonly checkpointStep: number | undefined;
  readonly maxSteps: number | undefined;
  /** Seconds the job has run (counted against its max runtime). */
  readonly elapsedSeconds: number;
  readonly maxRuntimeSeconds: number | undefined;
  readonly perHour: number | undefined;
  readonly costSoFar: number | undefined;
  readonly forecastSecondsPerStep?: number;
}

/** A running job's progress from its trace's tail (pure). */
export function liveProgress(input: LiveInput): LiveProgress {
  const { clock, maxSteps } = input;
  const step = clock.lastStep ?? input.checkpointStep;
  const recent = stepIntervals(clock.markers).slice(-RECENT_STEPS);
  // The average, not the median: the steps that save a checkpoint are part of the time left.
  const secondsPerStep = recent.length > 0 ? mean(recent) : undefined;
  const left = maxSteps !== undefined && step !== undefined ? Math.max(0, maxSteps - step) : undefined;
  const etaSeconds = left !== undefined && secondsPerStep !== undefined ? left * secondsPerStep : undefined;
  const remainingRuntimeSeconds =
    input.maxRuntimeSeconds === undefined
      ? undefined
      : Math.max(0, input.maxRuntimeSeconds - input.elapsedSeconds);
  const pastMaxRuntime =
    etaSeconds !== undefined && remainingRuntimeSeconds !== undefined && etaSeconds > remainingRuntimeSeconds;
  const cutAtStep =
    pastMaxRuntime && step !== undefined && secondsPerStep
      ? step + Math.floor(remainingRuntimeSeconds! / secondsPerStep)
      : undefined;
  const costAtFinish =
    input.costSoFar !== undefined && input.perHour !== undefined && etaSeconds !== undefined
      ? input.costSoFar + (input.perHour * etaSeconds) / 3600
      : undefined;
  return {
    step,
    maxSteps,
    secondsPerStep,
    etaSeconds,
    remainingRuntimeSeconds,
    pastMaxRuntime,
    cutAtStep,
    costSoFar: input.costSoFar,
    costAtFinish,
    forecastSecondsPerStep: input.forecastSecondsPerStep,
  };
}
