/**
 * Batch evaluation from the launcher's side: resolving the request (the options bin reads from the
 * flags, with a suites file or an eval config), resolving checkpoints, packing units into jobs,
 * planning and submitting them through lib/submission, running them locally, and reading their results
 * back from S3.
 */
export {
  resolveEvalRequest,
  withJobDefaults,
  type BatchJobOptions,
  type BatchJobSettings,
  type EvalOptions,
} from './input';
export { requireLocalImage, runEvalLocally } from './local';
export { resultsOfJobs, waitForEvalJob, type ResultsOfJobs } from './tables';
export { awsStep, gpusPerHost, planEval, type EvalPlan, type EvalRequest } from './plan';
export { readLearnedDurations } from './s3-results';
export { submitEval, type EvalSubmitResult } from './submit';
export { parseBenchmarks, parseCheckpointRef, type Benchmark, type LabelledRef } from './refs';
export { parseDeviations } from './standard';
export { resolveCheckpoints, type ResolvedCheckpoint } from './resolve';
