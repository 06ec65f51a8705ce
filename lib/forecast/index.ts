/**
 * Time and cost forecasts learned from the team's own runs: a run's shape (what makes its steps take
 * the time they take), its steps' seconds from its trace, the forecast a plan prints for a job of a
 * shape, and where a running job is and when it will end.
 */
export {
  batchOf,
  LOCAL_INSTANCE,
  maxStepsOf,
  resumeStepOf,
  readShape,
  shapeOf,
  SHAPE_LABELS,
  type RunShape,
} from './shape';
export { clockOfTail, TRACE_WINDOW } from './step-clock';
export {
  forecastReport,
  median,
  recordOf,
  RUNTIME_MARGIN,
  type Forecast,
  type ForecastReport,
  type SageMakerPastRuns,
  type SimilarRun,
} from './forecast';
export { liveProgress, type LiveProgress } from './live';
export { sageMakerRunsOrWhy } from './sagemaker-runs';
export { pastRuntimeLine, roughDuration } from './format';
export { runtimeVerdict } from './verdict';
