export {
  downloadJob,
  parseCheckpointSelection,
  localPathFor,
  type CheckpointSelection,
  type DownloadOptions,
  type DownloadReport,
  type TransferEvent,
} from './download';
export { syncTraces, OVERLAP, type SyncOptions, type SyncStats } from './sync-traces';
export {
  uploadPath,
  partSizeFor,
  SHA256_TAG,
  type UploadKind,
  type UploadOptions,
  type UploadReport,
} from './upload';
export { fetchObject, PARTIAL_SUFFIX, type FetchResult } from './fetch-object';
export { checkCheckpointFolder, type CheckpointCheck } from './checkpoint-check';
export {
  checkpointOfKey,
  isSafeRelative,
  jobListing,
  newestTrace,
  readJobListing,
  readJobRunInfo,
  resolveRunFolders,
  resumeFromRunInfo,
  runFoldersFromRunInfo,
  TOP_RUN_FOLDER,
  type CheckpointKey,
  type JobListing,
  type ResumeInfo,
  type RunFolder,
} from './run-folders';
export {
  judgeJobCheckpoints,
  listedCheckpoints,
  listedCheckpointVerdict,
  runFolderIndex,
  type JudgedCheckpoint,
  type ListedCheckpoint,
} from './job-checkpoints';
export { isRunId, listRunIds, runDir, runFiles, type RunFiles } from './local-runs';
