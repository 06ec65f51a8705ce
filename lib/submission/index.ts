/**
 * Submitting any job the launcher creates, a training job or a batch evaluation: the session (settings
 * and clients, dry-run aware), the request's common parts, job names and their reservation, the job log,
 * and submitJob, the one path from a plan to a created job.
 */
export {
  openSubmitSession,
  type SubmitConnection,
  type SubmitSession,
  type SubmitSessionInput,
} from './session';
export {
  assembleRequest,
  fileSystemChannel,
  OFFLINE_ENVIRONMENT,
  requestSettingsOf,
  s3Channel,
  sanitizeTagValue,
  type RequestParts,
  type RequestSettings,
} from './request';
export { firstJobName, reserveJobName } from './job-name';
export {
  appendJobLogRow,
  formatJobLogRow,
  JOB_LOG_COLUMNS,
  jobLogPathProblem,
  readJobLogDescriptions,
  resolveJobLogPath,
  defaultedJobLogPath,
  writableJobLogPath,
  type JobLogRow,
} from './job-log';
export {
  quotaName,
  submitJob,
  type JobSubmission,
  type SubmitEvent,
  type SubmitListener,
  type SubmittedJob,
} from './submit-job';
export { PLACEHOLDERS, Placeholders, type PlaceholderName } from './placeholders';
export {
  batchRequest,
  batchSubmission,
  submitBatch,
  type BatchPlan,
  type BatchRequestOptions,
  type BatchSubmitOptions,
} from './batch';
