/**
 * Operating jobs once they exist, whatever made them: the listing with cost and the post-job check,
 * a job's status, its logs as they come and stopping it, waiting for it to end, rerunning it as it ran,
 * and what differs between two jobs.
 */
export {
  listJobs,
  jobStatus,
  summarizeCheckpoints,
  type JobRow,
  type JobStatusReport,
  type CheckpointSummary,
} from './inspect';
export { watchJob, stopJob } from './watch';
export { waitForJob, type WaitResult } from './wait';
export { describeAttempts, describeResume, type AttemptsReport } from './inspect';
export { planRerun, submitRerun, type RerunPlan, type RerunResult } from './rerun';
export { overrideLiteral, parseSetFlag, type OverrideValue } from './config-overrides';
export { diffJobs, type JobDiff } from './diff';
export { forecastChecks, type ForecastChecks } from './forecast-check';
