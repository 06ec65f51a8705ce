export { downloadJob, parseCheckpointSelection, type DownloadReport } from './download';
export { syncTraces } from './sync-traces';
export { uploadPath, type UploadKind } from './upload';
export { fetchObject } from './fetch-object';
export {
  checkpointOfKey,
  newestTrace,
  readJobListing,
  readJobRunInfo,
  resumeFromRunInfo,
  type ResumeInfo,
} from './run-folders';
export { judgeJobCheckpoints } from './job-checkpoints';
export { isRunId, listRunIds, runDir, runFiles, type RunFiles } from './local-runs';
