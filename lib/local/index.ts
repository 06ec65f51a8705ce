/**
 * Runs a job in local Docker exactly as SageMaker would lay it out: the same image, channels under
 * /opt/ml, the same environment; S3 inputs cached on this machine.
 */
export { cacheFromS3, type Bind, type LocalJob, type LocalRunOptions, type LocalRunResult } from './run';
export { prepareLocalRun, runPreparedLocal, type LocalSubmitResult } from './submit-local';
export { localBatchJob, requireLocalImage, runBatchLocally } from './batch';
