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
export { openSubmitSession, type SubmitSession, type SubmitSessionInput } from './submit-session';
export { submit, submitPlanned, quotaName, type SubmitResult } from './submit';
export { buildCreateTrainingJobRequest, sanitizeTagValue, JOB_ENV, type RequestInput } from './request';
export { checkRequestLimits, LIMITS } from '../job-options/limits';
export {
  resolveJobOptions,
  describeSource,
  idleGpus,
  OPTION_FLAGS,
  type JobOptionFlags,
  type ResolvedJobOptions,
  type OptionSource,
} from '../job-options/options';
export { planInputs, resolveConfigForJob, datasetFolder, parseS3Uri, s3Uri, type InputPlan } from './inputs';
export { reserveJobName, firstJobName } from './job-name';
export { appendJobLogRow, formatJobLogRow, JOB_LOG_COLUMNS } from './job-log';
export { BUILT_IN_TEMPLATES, BUILT_IN_DEFAULTS } from '../job-options/templates';
export { gpuCount, isTrainingInstanceType } from '../job-options/instance-types';
export {
  openJobContext,
  requireLayout,
  describeJob,
  isTerminal,
  type JobContext,
  type JobContextInput,
} from '../aws/session';
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
export { hourlyPrice, costOf, formatUsd, PRICES_AS_OF, PRICES_SOURCE } from '../job-options/prices';
export { readJobLogDescriptions, resolveJobLogPath } from './job-log';
export { planSweep, submitSweep, PROVISIONAL_NAMES, type PlannedSweep } from './sweep-submit';
export { lintConfigFile, type LintReport } from './lint';
