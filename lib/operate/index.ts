/**
 * Operating jobs once they exist, whatever made them: the listing with cost and the post-job check,
 * a job's status, its logs as they come and stopping it, waiting for it to end, rerunning it as it ran,
 * and what differs between two jobs.
 */
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
export { describeAttempts, describeResume, type AttemptsReport } from './inspect';
export { RERUN_OF_TAG } from './rerun-tag';
export {
  planRerun,
  submitRerun,
  rerunRequest,
  rerunDescription,
  type RerunCheck,
  type RerunInput,
  type RerunPlan,
  type RerunResult,
} from './rerun';
export {
  applyOverrides,
  overrideLiteral,
  parseSetFlag,
  type ConfigOverride,
  type OverrideChange,
  type OverrideValue,
} from './config-overrides';
export { diffJobs, flattenKeys, runFacts, type DiffSection, type JobDiff, type JobDifference } from './diff';
export { readJobRecord, requestFromDescription, configChannelLocation, type JobRecord } from './job-record';
export { forecastChecks, type ForecastCheck, type ForecastChecks } from './forecast-check';
