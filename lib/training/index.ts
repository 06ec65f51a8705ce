/**
 * The training planner: a config and flags → a checked plan (the job's options, inputs, source, image,
 * pre-flight, request) → a training job submitted through lib/submission; sweeps; `rlvr lint`.
 */
export { planSubmit, jobUploads, type SubmitPlan, type SubmitInput } from './plan';
export { submitPlanned, type SubmitResult } from './submit';
export { LOCAL_VOLUME, sharedFileSystemIsolationNote, sharedFileSystemPath } from './shared-file-system';
export { s3Uri } from './inputs';
export { parseSweepFlag } from './sweep';
export { planSweep, submitSweep, PROVISIONAL_NAMES, type PlannedSweep } from './sweep-submit';
export { lintConfigFile, type LintReport } from './lint';
export { describeImportRoots } from './import-roots';
export { type LintCurricula } from './lint';
export { SWEEP_MAX_JOBS } from './sweep';
export { describeWrite, importTimeWrites, judgeWrite, sourceReader } from './platform-env';
