/**
 * What a pass@k campaign leaves behind and how it is read back: the plan the job is told
 * (`passk-plan.json`), the script's shard folders, the merge of their results and the pass@k estimators.
 * Shared by the launcher (lib/passk), the job itself (lib/container) and the dashboard's report.
 */
export * from './job-plan';
export * from './merged';
export * from './estimator';
export * from './merge';
export * from './read-folder';
export * from './format';
