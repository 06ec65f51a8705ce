/**
 * Batch evaluation from the launcher's side: reading the request (flags or a YAML file), resolving
 * checkpoints, packing units into jobs, planning and submitting them through lib/submission, running
 * them locally, and reading their results back from S3.
 */
export { EVAL_DEFAULTS, parseEvalRequest, type EvalFlags } from './input';
export { localJobOfEval, requireLocalImage, runEvalLocally } from './local';
export { localRunTable, resultsOfJobs, waitForEvalJob, type ResultsOfJobs } from './tables';
export { awsStep, gpusPerHost, planEval, type EvalPlan } from './plan';
export { ObjectCache, readJobResults, readLearnedDurations, recordLearnedDurations } from './s3-results';
export { submitEval, type EvalSubmitResult } from './submit';
export { parseJobFlags, type JobFlags, type ParsedJobFlags } from './input';
export { parseCheckpointRef, type LabelledRef } from './refs';
export { resolveCheckpoints, type ResolvedCheckpoint } from './resolve';
