/**
 * The one module that spells S3 keys, prefixes, container paths, parameter names and job-name rules.
 * Infrastructure, launcher and container entrypoint all import it, so the S3 layout, SageMaker's /opt/ml contract and the run folder are spelled once.
 */
export {
  SETTINGS_PARAMETER_NAME,
  TEMPLATE_PARAMETER_PREFIX,
  templateParameterName,
  TRAINING_LOG_GROUP,
  consoleJobUrl,
  ecrLayerBucketName,
} from './aws-names';
export { SETTINGS_ENV, SETTINGS_ENV_PATTERN, CLI_ENV, LOCAL } from './cli';
export {
  CONTAINER,
  CONTAINER_CONFIG_FILES,
  containerPathUnder,
  CHANNELS,
  RESERVED_CHANNEL_NAMES,
  SHARED_FILE_SYSTEM,
  channelPath,
  PASSK_RESUME_CHANNEL,
  CLUSTER,
} from './container';
export { MODEL_INDEX_FILE, DATASET_MARKERS } from './hugging-face';
export { JOB_ENV, RUNTIME_ENV, PLATFORM_ENV } from './job-env';
export { JOB_FILES, PATCH_FILES } from './job-files';
export {
  DEFAULT_JOB_NAME_PREFIX,
  jobNameTimestamp,
  jobNamePrefixOf,
  jobNameCandidate,
  isValidTrainingJobName,
} from './job-name';
export { RUN_FOLDER, workerFileName, parseCheckpointFolder, checkpointFolderOfKey } from './run-folder';
export {
  DEFAULT_ROOT_PREFIX,
  normalisePrefix,
  parseS3Uri,
  s3Uri,
  S3Layout,
  keyPattern,
  type S3Location,
} from './s3-layout';
