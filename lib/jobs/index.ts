/**
 * The training planner: a config and flags → a checked plan (the job's options, inputs, source, image,
 * pre-flight, request) → a training job submitted through lib/submission; sweeps; `rlvr lint`.
 */
export {
  planSubmit,
  jobUploads,
  newPlanCache,
  type PlanCache,
  type SubmitPlan,
  type SubmitInput,
  type SubmitEvent,
  type SubmitListener,
  type Upload,
  type PreflightReport,
} from './plan';
export { submit, submitPlanned, type SubmitResult } from './submit';
export { buildCreateTrainingJobRequest, type RequestInput } from './request';
export {
  LOCAL_VOLUME,
  SHARED_FILE_SYSTEM_HOW,
  sharedFileSystemIsolationNote,
  sharedFileSystemPath,
  type SharedFileSystemPlan,
} from './shared-file-system';
export { planInputs, resolveConfigForJob, datasetFolder, parseS3Uri, s3Uri, type InputPlan } from './inputs';
export {
  parseSweepFlag,
  expandSweep,
  resolveSweepKey,
  sweepLiteral,
  type SweepAxis,
  type SweepVariant,
} from './sweep';
export { planSweep, submitSweep, PROVISIONAL_NAMES, type PlannedSweep } from './sweep-submit';
export { lintConfigFile, type LintReport } from './lint';
export { describeImportRoots } from './import-roots';
export { type LintCurricula } from './lint';
export { SWEEP_MAX_JOBS } from './sweep';
export { forecastStep, plannedShape, type ForecastStepInput, type PlannedForecast } from './forecast';
export {
  checkPlatformEnv,
  describeWrite,
  importTimeWrites,
  judgeWrite,
  sourceReader,
  type JudgedWrite,
  type PlatformEnvCheck,
  type PlatformEnvJob,
} from './platform-env';
