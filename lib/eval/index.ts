/**
 * Batch evaluation from the launcher's side: reading the request (flags or a YAML file), resolving
 * checkpoints, packing units into jobs, planning and submitting them through lib/submission, running
 * them locally, and reading their results back from S3.
 */
export { parseEvalRequest, type EvalFlags } from './input';
export { requireLocalImage, runEvalLocally } from './local';
export { resultsOfJobs, waitForEvalJob, type ResultsOfJobs } from './tables';
export { awsStep, gpusPerHost, planEval, type EvalPlan } from './plan';
export { readLearnedDurations } from './s3-results';
export { submitEval, type EvalSubmitResult } from './submit';
export { parseJobFlags, type JobFlags, type ParsedJobFlags } from './input';
export { parseCheckpointRef, type LabelledRef } from './refs';
export { resolveCheckpoints, type ResolvedCheckpoint } from './resolve';
