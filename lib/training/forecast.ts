import { formatDuration, runtimeForecast, type AllowedFinding, type RuleProblem } from '../config';
import {
  forecastReport,
  LOCAL_INSTANCE,
  maxStepsOf,
  resumeStepOf,
  runtimeVerdict,
  RUNTIME_MARGIN,
  shapeOf,
  type Forecast,
  type ForecastReport,
  type SageMakerPastRuns,
  type RunShape,
} from '../forecast';
import { problemAt, type ResolvedJobOptions } from '../job-options';
import type { TrainerSelection, YamlMap } from '../trainers';
import { s3Uri, type InputPlan } from './inputs';

/** What the plan's forecast step found: the forecast, and what it says of the max runtime. */
export interface PlannedForecast extends ForecastReport {
  readonly errors: RuleProblem[];
  readonly warnings: RuleProblem[];
  readonly allowed: AllowedFinding[];
}

export interface ForecastStepInput {
  readonly config: YamlMap;
  readonly trainer: TrainerSelection;
  readonly options: ResolvedJobOptions;
  readonly inputs: InputPlan;
  readonly perHour: number | undefined;
  readonly hasEvalConfig: boolean;
  /** The folder `rlvr download` and `submit --local` write runs to (relative to cwd). */
  readonly resultsDir?: string;
  readonly cwd: string;
  /** SageMaker's ended jobs, when the plan could read them; else why not. */
  readonly sagemaker?: SageMakerPastRuns;
  /** `launcher.allow`'s reason for the forecast's finding, if the config gives one. */
  readonly allowReason?: string;
}

/** The shape of the job a plan describes; a local run's instance is the machine it runs on. */
export function plannedShape(
  input: Pick<ForecastStepInput, 'config' | 'trainer' | 'options' | 'inputs'> & { readonly local?: boolean },
): RunShape {
  const o = input.options;
  return shapeOf({
    trainer: input.trainer.profile.id,
    model: s3Uri(input.inputs.model.location),
    instanceType: input.local ? LOCAL_INSTANCE : o.instanceType.value,
    instanceCount: o.instanceCount.value,
    trainGpus: o.trainGpus.value,
    evalGpus: o.evalGpus.value,
    config: input.config,
  });
}

/** The forecast of a planned job from the runs it can see, and the max runtime's findings. */
export function forecastStep(input: ForecastStepInput & { readonly local?: boolean }): PlannedForecast {
  const o = input.options;
  const report = forecastReport({
    shape: plannedShape(input),
    maxSteps: maxStepsOf(input.config, input.trainer.profile.ends?.maxStepsDefault),
    fromStep: resumeStepOf(input.config, input.trainer.profile.runtime.resumeWith?.stepKey),
    maxRuntimeSeconds: o.maxRuntimeSeconds.value,
    perHour: input.perHour,
    evalWaitSeconds: input.hasEvalConfig ? o.evalWaitSeconds.value : 0,
    cwd: input.cwd,
    resultsDir: input.resultsDir,
    sagemaker: input.sagemaker,
  });
  const found = findings(report.forecast, o);
  const errors: RuleProblem[] = [];
  const warnings: RuleProblem[] = [];
  const allowed: AllowedFinding[] = [];
  for (const f of found) {
    if (f.severity === 'warning') warnings.push(f.problem);
    else if (input.allowReason !== undefined) {
      const { where, message, location } = f.problem;
      allowed.push({
        rule: runtimeForecast.id,
        name: runtimeForecast.name,
        reason: input.allowReason,
        where,
        message,
        location,
      });
    } else errors.push(f.problem);
  }
  return { ...report, errors, warnings, allowed };
}

function findings(
  forecast: Forecast,
  options: ResolvedJobOptions,
): { severity: 'error' | 'warning'; problem: RuleProblem }[] {
  const v = runtimeVerdict(forecast);
  if (!v) return [];
  const wait =
    forecast.evalWaitSeconds > 0 ? ` and the ${formatDuration(forecast.evalWaitSeconds)} eval wait` : '';
  const fits = `--max-runtime ${v.fits} (the forecast, ${Math.round((RUNTIME_MARGIN - 1) * 100)}% more for slower steps${wait})`;
  const hint =
    forecast.basis === 'rough'
      ? `A completed run of this shape in the results folder (rlvr download <job>) makes it a forecast; until then give it room: more than --max-runtime ${v.fits}.`
      : v.severity === 'error'
        ? `Give it ${fits}, lower training.max_steps, or allow it with a reason: launcher.allow: {${runtimeForecast.id}: "<why>"}.`
        : `Give it ${fits}.`;
  const problem = {
    ...problemAt(options.maxRuntimeSeconds.source, 'max_runtime', v.message, hint),
    rule: runtimeForecast.id,
  };
  return [{ severity: v.severity, problem }];
}
