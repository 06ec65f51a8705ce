/** The researcher's machine: the variables the CLI reads and the folders it writes. */

/**
 * The environment variables the CLI reads settings from (flags > these > the stack's parameter);
 * the region comes from AWS_REGION / AWS_DEFAULT_REGION.
 */
export const SETTINGS_ENV = {
  bucket: 'RLVR_BUCKET',
  prefix: 'RLVR_PREFIX',
  roleArn: 'RLVR_ROLE_ARN',
  repositoryUri: 'RLVR_REPOSITORY_URI',
  subnets: 'RLVR_SUBNETS',
  securityGroups: 'RLVR_SECURITY_GROUPS',
  kmsKeyId: 'RLVR_KMS_KEY',
  jobNamePrefix: 'RLVR_JOB_NAME_PREFIX',
  fileSystemId: 'RLVR_FILE_SYSTEM_ID',
} as const;
/** How help texts and messages name the settings variables together. */
export const SETTINGS_ENV_PATTERN = 'RLVR_*';

/** Other variables the CLI reads. */
export const CLI_ENV = {
  /** The job log's path (default LOCAL.defaultJobLog in the repository). */
  jobLog: 'RLVR_JOB_LOG',
  /**
   * `none`: local runs share --gpus out and number them for the job without asking the engine for the
   * devices (an engine without the NVIDIA runtime: tests, CPU-only machines).
   */
  localGpuDevices: 'RLVR_LOCAL_GPU_DEVICES',
} as const;

/** Local folders: where results land on the researcher's machine. */
export const LOCAL = {
  resultsDir: 'results',
  defaultJobLog: 'docs/job_log.md',
} as const;
