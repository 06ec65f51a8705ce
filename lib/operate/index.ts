/**
 * Operating jobs once they exist, whatever made them: the listing with cost and the post-job check,
 * a job's status, its logs as they come and stopping it, and waiting for it to end.
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
