/**
 * Time and cost forecasts learned from the team's own runs: a run's shape (what makes its steps take
 * the time they take), its steps' seconds from its trace, the forecast a plan prints for a job of a
 * shape, and where a running job is and when it will end.
 */
export {
  BATCH_KEYS,
  batchOf,
  LOCAL_INSTANCE,
  maxStepsOf,
  resumeStepOf,
  modelName,
  readShape,
  shapeDifferences,
  shapeOf,
  SHAPE_KEYS,
  SHAPE_LABELS,
  type RunShape,
  type ShapeKey,
} from './shape';
export {
  clockOfTail,
  stepIntervals,
  StepClockReader,
  traceTiming,
  TRACE_WINDOW,
  type StepClock,
  type TraceTiming,
} from './step-clock';
export {
  mergeRuns,
  resultsFolderRuns,
  runFolderShape,
  runMeasure,
  type PastRun,
  type RunMeasure,
  type RunsSeen,
} from './past-runs';
export {
  forecastReport,
  forecastJob,
  GENEROUS_FACTOR,
  mean,
  median,
  recordOf,
  RUNTIME_MARGIN,
  type Forecast,
  type ForecastInput,
  type ForecastReport,
  type SageMakerPastRuns,
  type ForecastVerdict,
  type RecordedForecast,
  type SimilarRun,
} from './forecast';
export { liveProgress, RECENT_STEPS, type LiveInput, type LiveProgress } from './live';
export {
  sageMakerRunsOrWhy,
  SAGEMAKER_JOBS_SEEN,
  SAGEMAKER_TRACES_READ,
  type SageMakerRunsInput,
} from './sagemaker-runs';
export { pastRuntimeLine, roughDuration } from './format';
export { runtimeVerdict, type RuntimeVerdict } from './verdict';
