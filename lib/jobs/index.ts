/**
 * The training planner: a config and flags → a checked plan (the job's options, inputs, source,
 * image, pre-flight, request) → a submitted training job; sweeps; `rlvr lint`; and, once a job runs,
 * what the operate commands read of it (listing, status, cost, watch, wait).
 */
export {
  planSubmit,
  jobUploads,
  newPlanCache,
  type PlanCache,
  PLACEHOLDERS,
  type SubmitPlan,
  type SubmitInput,
  type SubmitEvent,
  type SubmitListener,
  type Upload,
  type PreflightReport,
} from './plan';
export { submit, submitPlanned, type SubmitResult } from './submit';
export { buildCreateTrainingJobRequest, type RequestInput } from './request';
export { planInputs, resolveConfigForJob, datasetFolder, parseS3Uri, s3Uri, type InputPlan } from './inputs';
export {
  listJobs,
  jobStatus,
  jobCost,
  summarizeCheckpoints,
  readTraceTail,
  postJobProblem,
  type JobRow,
  type JobStatusReport,
  type JobCost,
  type CheckpointSummary,
} from './inspect';
export { watchJob, stopJob, hostOf, type WatchEvent } from './watch';
export { waitForJob, type WaitResult } from './wait';
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
