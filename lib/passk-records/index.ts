/**
 * What a pass@k campaign leaves behind and how it is read back: the plan the job is told
 * (`passk-plan.json`), the script's shard folders, the merge of their results and the pass@k estimators.
 * Shared by the launcher (lib/passk), the job itself (lib/container) and the dashboard's report.
 */
export {
  PASSK_PLAN_FILE,
  PASSK_DIR,
  type PasskCampaign,
  type PlannedShard,
  type PasskJobPlan,
  type PasskFiles,
  shardFolder,
  SHARD_RECORD_FILE,
  type ShardAttempt,
  type ShardRecord,
} from './job-plan';
export { type PassAtK, type MergedPasskResults } from './merged';
export { isCorrectScore, parsePythonJson, mergeShards, shardGaps } from './merge';
export * from './read-folder';
export { segmentName, segmentSeq, isStreamFile, streamOrder } from './segments';
export { unequalNNote, passkMarkdown, passkCsv, passAtKCsv, passkJson } from './format';
