import * as path from 'node:path';
import { formatDuration, runtimeForecast, type AllowedFinding, type RuleProblem } from '../config';
import {
  forecastJob,
  maxStepsOf,
  resultsFolderRuns,
  shapeDifferences,
  shapeOf,
  type Forecast,
  type RunsSeen,
  type RunShape,
} from '../forecast';
import { problemAt, type ResolvedJobOptions } from '../job-options';
import { LOCAL } from '../layout';
import type { TrainerSelection, YamlMap } from '../trainers';
import { s3Uri, type InputPlan } from './inputs';

/** What the plan's forecast step found: the forecast, and what it says of the max runtime. */
export interface PlannedForecast {
  readonly forecast: Forecast;
  /** The results folder looked in. */
  readonly resultsDir: string;
  /** Whether SageMaker's completed jobs were looked at, and why not. */
  readonly sagemaker: { readonly read: boolean; readonly note?: string };
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
  /** SageMaker's completed jobs, when the plan could read them; else why not. */
  readonly sagemaker?: { readonly runs?: RunsSeen; readonly note?: string };
  /** `launcher.allow`'s reason for the forecast's finding, if the config gives one. */
  readonly allowReason?: string;
}

/** The shape of the job a plan describes. */
export function plannedShape(
  input: Pick<ForecastStepInput, 'config' | 'trainer' | 'options' | 'inputs'>,
): RunShape {
  const o = input.options;
  return shapeOf({
    trainer: input.trainer.profile.id,
    model: s3Uri(input.inputs.model.location),
    instanceType: o.instanceType.value,
    instanceCount: o.instanceCount.value,
    trainGpus: o.trainGpus.value,
    evalGpus: o.evalGpus.value,
    config: input.config,
  });
}

/** The forecast of a planned job from the runs it can see, and the max runtime's findings. */
export function forecastStep(input: ForecastStepInput): PlannedForecast {
  const shape = plannedShape(input);
  const resultsDir = path.resolve(input.cwd, input.resultsDir ?? LOCAL.resultsDir);
  // Only the traces of runs of the same shape are read.
  const local = resultsFolderRuns(resultsDir, (s) => shapeDifferences(s, shape).length === 0);
  const more = input.sagemaker?.runs ?? { runs: [], seen: 0, unknownShape: 0, others: [] };
  const localIds = new Set(local.runs.map((r) => r.id));
  const o = input.options;
  const forecast = forecastJob({
    shape,
    maxSteps: maxStepsOf(input.config, input.trainer.profile.ends?.maxStepsDefault),
    maxRuntimeSeconds: o.maxRuntimeSeconds.value,
    perHour: input.perHour,
    evalWaitSeconds: input.hasEvalConfig ? o.evalWaitSeconds.value : 0,
    // A job both downloaded and in SageMaker counts once (its run folder has its whole trace).
    runs: [...local.runs, ...more.runs.filter((r) => !localIds.has(r.id))],
    others: [...local.others, ...more.others.filter((r) => !localIds.has(r.id))],
    seen: local.seen + more.seen,
    unknownShape: local.unknownShape + more.unknownShape,
  });
  const found = findings(forecast, o);
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
  const sagemaker = { read: input.sagemaker?.runs !== undefined, note: input.sagemaker?.note };
  return { forecast, resultsDir, sagemaker, errors, warnings, allowed };
}

function findings(
  forecast: Forecast,
  options: ResolvedJobOptions,
): { severity: 'error' | 'warning'; problem: RuleProblem }[] {
  const runtime = options.maxRuntimeSeconds;
  const at = (message: string, hint: string) => ({
    ...problemAt(runtime.source, 'max_runtime', message, hint),
    rule: runtimeForecast.id,
  });
  const f = forecast;
  if (f.wallSeconds === undefined || f.secondsPerStep === undefined || f.maxSteps === undefined) return [];
  const basis = `${f.maxSteps} steps at ${f.secondsPerStep.median.toFixed(1)} s/step (${f.similar.length} similar run${f.similar.length === 1 ? '' : 's'}) take about ${formatDuration(Math.round(f.wallSeconds / 60) * 60)}`;
  const fits = formatDuration(f.fitsSeconds!);
  switch (f.verdict) {
    case 'short':
      return [
        {
          severity: 'error',
          problem: at(
            `max runtime ${formatDuration(runtime.value)} would stop training at about step ${f.cutAtStep} of ${f.maxSteps}: ${basis}`,
            `Give it --max-runtime ${fits} (the forecast with ${Math.round((f.fitsSeconds! / f.wallSeconds - 1) * 100)}% to spare${f.fitsSeconds! > f.wallSeconds * 1.2 ? ', the eval wait included' : ''}), lower training.max_steps, or allow it with a reason: launcher.allow: {${runtimeForecast.id}: "<why>"}.`,
          ),
        },
      ];
    case 'thin':
      return [
        {
          severity: 'warning',
          problem: at(
            `max runtime ${formatDuration(runtime.value)} leaves little margin: ${basis}; a slower run would be stopped before its last step`,
            `Give it --max-runtime ${fits}.`,
          ),
        },
      ];
    case 'generous':
      return [
        {
          severity: 'warning',
          problem: at(
            `max runtime ${formatDuration(runtime.value)} is over ${Math.floor(runtime.value / f.wallSeconds)}× the forecast (${basis}): a run that hangs is paid for until then`,
            `Give it --max-runtime ${fits}.`,
          ),
        },
      ];
    default:
      return [];
  }
}
