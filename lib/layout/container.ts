/** SageMaker's container contract and what a job's hosts share: /opt/ml, channels, the shared file system, ports. */
import * as path from 'node:path';

/** SageMaker's container contract: the /opt/ml paths and the files it writes there. */
export const CONTAINER = {
  root: '/opt/ml',
  inputConfigDir: '/opt/ml/input/config',
  dataDir: '/opt/ml/input/data',
  modelDir: '/opt/ml/model',
  outputDir: '/opt/ml/output',
  failureFile: '/opt/ml/output/failure',
  checkpointsDir: '/opt/ml/checkpoints',
  /** The trainer's source: unpacked from the `code` channel, or mounted read-only in local runs. */
  codeDir: '/opt/ml/code',
  olmesPython: '/opt/olmes-venv/bin/python',
} as const;

/** The files SageMaker writes into CONTAINER.inputConfigDir. */
export const CONTAINER_CONFIG_FILES = {
  resources: 'resourceconfig.json',
  inputData: 'inputdataconfig.json',
  hyperparameters: 'hyperparameters.json',
} as const;

/** A container path (`/opt/ml/…`) under a folder standing in for `/opt/ml` (local runs, tests). */
export function containerPathUnder(root: string, containerPath: string): string {
  return path.join(root, path.posix.relative(CONTAINER.root, containerPath));
}

/** Input channel names the launcher creates and the entrypoint reads. */
export const CHANNELS = {
  config: 'config',
  code: 'code',
  model: 'model',
  curricula: 'curricula',
  /** The shared file system of a multi-host job (SHARED_FILE_SYSTEM). */
  shared: 'shared',
} as const;
export const RESERVED_CHANNEL_NAMES: readonly string[] = Object.values(CHANNELS);

/**
 * The file system the hosts of a multi-host job share (the stack's EFS, or a Docker volume in a local
 * rehearsal), mounted as the `shared` channel read-write on every host. The channel mounts the file
 * system's root: a FileSystemDataSource takes no access point, and its directory must exist before the
 * job starts, which only the root is sure to. Every job keeps to `<jobsFolder>/<job name>/` in it: the
 * trainer's run root (`run/`, every host writes its exports there) and the shared-folder variable of its
 * profile (`shared/`); the head copies the run root into the streamed run folder and removes the job's
 * folder when the job ends.
 */
export const SHARED_FILE_SYSTEM = {
  channel: CHANNELS.shared,
  directoryPath: '/',
  jobsFolder: 'rlvr-jobs',
  runRoot: 'run',
  sharedFolder: 'shared',
} as const;

export function channelPath(channel: string): string {
  return `${CONTAINER.dataDir}/${channel}`;
}

/**
 * The channel a pass@k job reads an earlier run of its campaign from (`--continue`, a rerun): each shard
 * with no results of its own starts from that run's.
 */
export const PASSK_RESUME_CHANNEL = 'resume';

/** Multi-host jobs: the ports hosts use between them (inside the job's network only). */
export const CLUSTER = {
  /** Ray's GCS on the head (`ray start --head --port`). */
  rayPort: 6379,
  /** The head's status endpoint: workers join, heartbeat and learn how the trainer ended. */
  statusPort: 6390,
} as const;
