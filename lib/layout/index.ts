/**
 * The one module that spells S3 keys, prefixes, container paths, parameter names and job-name rules.
 * Infrastructure, launcher and container entrypoint all import it, so the S3 layout, SageMaker's /opt/ml contract and the run folder are spelled once.
 */

import * as path from 'node:path';

export const DEFAULT_ROOT_PREFIX = 'rlvr-experiments/';
export const DEFAULT_JOB_NAME_PREFIX = 'annotations-adhoc';

/** SSM parameters the infrastructure stack publishes and the launcher reads. */
export const SETTINGS_PARAMETER_NAME = '/rlvr-infra/settings';
export const TEMPLATE_PARAMETER_PREFIX = '/rlvr-infra/templates/';
export function templateParameterName(template: string): string {
  return `${TEMPLATE_PARAMETER_PREFIX}${template}`;
}

/** The training-job log group SageMaker writes to. */
export const TRAINING_LOG_GROUP = '/aws/sagemaker/TrainingJobs';

/** Normalises a root prefix to `a/b/` form (no leading slash, one trailing slash). */
export function normalisePrefix(prefix: string): string {
  const trimmed = prefix.replace(/^\/+/, '').replace(/\/+$/, '');
  return trimmed === '' ? '' : `${trimmed}/`;
}

/** A bucket and key, as in `s3://bucket/key`. */
export interface S3Location {
  readonly bucket: string;
  readonly key: string;
}

export function parseS3Uri(uri: string): S3Location | undefined {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
  return m ? { bucket: m[1], key: m[2] } : undefined;
}

export function s3Uri(location: S3Location): string {
  return `s3://${location.bucket}/${location.key}`;
}

/** S3 keys under the root prefix: the team's S3 layout. All prefixes end with `/`. */
export class S3Layout {
  readonly root: string;

  constructor(
    readonly bucket: string,
    rootPrefix: string = DEFAULT_ROOT_PREFIX,
  ) {
    this.root = normalisePrefix(rootPrefix);
  }

  uri(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }

  datasetsPrefix(): string {
    return `${this.root}datasets/`;
  }
  datasetPrefix(name: string): string {
    return `${this.datasetsPrefix()}${name}/`;
  }
  /** A dataset that is one file (e.g. an SFT JSONL), beside the save_to_disk folders. */
  datasetFileKey(file: string): string {
    return `${this.datasetsPrefix()}${file}`;
  }
  curriculaPrefix(): string {
    return `${this.root}curricula/`;
  }
  curriculumKey(file: string): string {
    return `${this.curriculaPrefix()}${file}`;
  }
  modelsPrefix(): string {
    return `${this.root}models/`;
  }
  modelPrefix(name: string): string {
    return `${this.modelsPrefix()}${name}/`;
  }
  /** Every job's run folder (what the jobs stream), `checkpoints/`. */
  checkpointsRootPrefix(): string {
    return `${this.root}checkpoints/`;
  }
  checkpointsPrefix(job: string): string {
    return `${this.checkpointsRootPrefix()}${job}/`;
  }
  /** The run folder's traces, streamed with the checkpoints. */
  tracesPrefix(job: string): string {
    return `${this.checkpointsPrefix(job)}${RUN_FOLDER.traces}/`;
  }
  /** The config the job ran with, at the top of its run folder. */
  runConfigKey(job: string): string {
    return `${this.checkpointsPrefix(job)}${RUN_FOLDER.config}`;
  }
  /** The trainer's source, content-addressed: `source/<sha256 of the .tar.gz>.tar.gz`. */
  sourceKey(sha256: string): string {
    return `${this.sourcePrefix()}${sha256}.tar.gz`;
  }
  sourcePrefix(): string {
    return `${this.root}source/`;
  }
  /** The files the launcher uploads for every job, `jobs/`. */
  jobsPrefix(): string {
    return `${this.root}jobs/`;
  }
  jobPrefix(job: string): string {
    return `${this.jobsPrefix()}${job}/`;
  }
  /** Files the launcher uploads for a job, relative to `jobPrefix(job)`. */
  jobKey(job: string, file: JobFile | string): string {
    return `${this.jobPrefix(job)}${file}`;
  }
  /** SageMaker appends `<job>/output/model.tar.gz` to this path. */
  outputPath(): string {
    return `${this.root}output`;
  }
  /** `outputPath()` as a prefix (`output/`): every job's model artifact is under it. */
  outputPrefix(): string {
    return `${this.outputPath()}/`;
  }
  modelArtifactKey(job: string): string {
    return `${this.outputPath()}/${job}/output/model.tar.gz`;
  }
  /** The prefixes a job reads: the launcher's uploads (datasets, curricula, models, job files, source). */
  jobInputPrefixes(): readonly string[] {
    return [
      this.datasetsPrefix(),
      this.curriculaPrefix(),
      this.modelsPrefix(),
      this.jobsPrefix(),
      this.sourcePrefix(),
    ];
  }
  /** The prefixes a job writes: its run folder and SageMaker's model artifact. */
  jobOutputPrefixes(): readonly string[] {
    return [this.checkpointsRootPrefix(), this.outputPrefix()];
  }
  /** Every top-level prefix under the root, the job's inputs first. */
  topLevelPrefixes(): readonly string[] {
    return [...this.jobInputPrefixes(), ...this.jobOutputPrefixes()];
  }
}

/** An S3 key pattern (IAM `s3:prefix` conditions, object ARNs): every key under `prefix`. */
export function keyPattern(prefix: string): string {
  return `${prefix}*`;
}

/** Names of the files the launcher uploads under `jobs/<job>/` (and the entrypoint reads). */
export const JOB_FILES = {
  /** Written first, with If-None-Match: claims the job name across machines. */
  reservation: 'reservation.json',
  configAsWritten: 'config.yaml',
  resolvedConfig: 'resolved-config.yaml',
  evalConfig: 'eval-config.yaml',
  plan: 'plan.json',
  /** What the entrypoint must know of the trainer at run time (lib/trainers/job-contract.ts). */
  contract: 'contract.json',
  /** The exact CreateTrainingJob request the job was created with (no secrets): what a rerun resubmits. */
  request: 'request.json',
  patchesDir: 'patches/',
} as const;
export type JobFile = (typeof JOB_FILES)[keyof typeof JOB_FILES];

/** Source-state capture, in `jobs/<job>/patches/` and the run folder's `patches/`. */
export const PATCH_FILES = {
  status: 'git_status.txt',
  diff: 'git_diff.patch',
  diffCached: 'git_diff_cached.patch',
  untracked: 'git_untracked.txt',
  commit: 'git_commit.txt',
} as const;

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

/**
 * The environment variables the launcher sets for the job, and the entrypoint and trainer read.
 * The entrypoint adds RUNTIME_ENV for the trainer and the eval watcher.
 */
export const JOB_ENV = {
  runName: 'RLVR_RUN_NAME',
  config: 'RLVR_CONFIG',
  evalConfig: 'RLVR_EVAL_CONFIG',
  trainGpus: 'RLVR_TRAIN_GPUS',
  evalGpus: 'RLVR_EVAL_GPUS',
  trainerCommand: 'RLVR_TRAINER_COMMAND',
  /** Seconds the eval watcher may take once training has ended. */
  evalWait: 'RLVR_EVAL_WAIT_S',
  useRay: 'RLVR_USE_RAY',
  modelDir: 'RLVR_MODEL_DIR',
  datasetsDir: 'RLVR_DATASETS_DIR',
  sourceSha256: 'RLVR_SOURCE_SHA256',
  submitId: 'RLVR_SUBMIT_ID',
  /** The image the job runs (repository@sha256:…), recorded in run.json. */
  image: 'RLVR_IMAGE',
  /** Local runs: the instance type recorded in run.json (SageMaker jobs have it in resourceconfig.json). */
  instanceType: 'RLVR_INSTANCE_TYPE',
  /** Tests only: replaces the trainer contract's eval command. */
  evalCommand: 'RLVR_EVAL_COMMAND',
  /** Multi-host jobs: how long hosts may take to form the Ray cluster (seconds; default 600). */
  clusterJoinTimeout: 'RLVR_CLUSTER_JOIN_TIMEOUT_S',
  /** Multi-host jobs: silence after which a host counts as lost (seconds; default 30). */
  clusterLostAfter: 'RLVR_CLUSTER_LOST_S',
  /** Multi-host jobs: other ports than CLUSTER's (`<ray>,<status>`; tests running hosts side by side). */
  clusterPorts: 'RLVR_CLUSTER_PORTS',
  /** `eval`: the image runs a batch evaluation (lib/container/eval-batch.ts), not a trainer. */
  mode: 'RLVR_MODE',
} as const;

/**
 * The channel a pass@k job reads an earlier run of its campaign from (`--continue`, a rerun): each shard
 * with no results of its own starts from that run's.
 */
export const PASSK_RESUME_CHANNEL = 'resume';

/**
 * Jobs that write results, never checkpoints (`RLVR_MODE`): a batch evaluation and a pass@k campaign.
 * "Completed without a checkpoint" is no incident for them.
 */
export function writesResultsOnly(environment: Readonly<Record<string, string>> | undefined): boolean {
  const mode = environment?.[JOB_ENV.mode];
  return mode === 'eval' || mode === 'passk';
}

/** Multi-host jobs: the ports hosts use between them (inside the job's network only). */
export const CLUSTER = {
  /** Ray's GCS on the head (`ray start --head --port`). */
  rayPort: 6379,
  /** The head's status endpoint: workers join, heartbeat and learn how the trainer ended. */
  statusPort: 6390,
} as const;

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

/** Set by the entrypoint for the processes it starts. */
export const RUNTIME_ENV = {
  /** The run folder: streamed to S3 as it is written. */
  runDir: 'RLVR_RUN_DIR',
  /** Where the trainer writes `<run>_step<N>/` and `<run>_final/`: `$RLVR_RUN_DIR/checkpoints`. */
  checkpointDir: 'RLVR_CHECKPOINT_DIR',
  /** The eval watcher: created when training has ended; evaluate what is left, then exit. */
  evalDoneFile: 'RLVR_EVAL_DONE_FILE',
  /** Which process this is (`trainer` or `eval`). */
  role: 'RLVR_ROLE',
  /** The host's name in a multi-instance job (`algo-1`, …). */
  host: 'RLVR_HOST',
} as const;

/**
 * Variables the job's platform owns, by what they decide. The entrypoint sets the interfaces on every
 * job (from resourceconfig.json) and the transports on hosts with EFA devices; the GPU split and the
 * rendezvous are set per process (by the entrypoint and by Ray or torch): a trainer's module that
 * assigns any of them when imported overrides the platform in every process that imports it.
 */
export const PLATFORM_ENV = {
  interfaces: ['NCCL_SOCKET_IFNAME', 'GLOO_SOCKET_IFNAME'],
  transports: ['NCCL_NET', 'NCCL_NET_PLUGIN', 'NCCL_IB_DISABLE', 'FI_PROVIDER', 'FI_EFA_USE_DEVICE_RDMA'],
  gpus: ['CUDA_VISIBLE_DEVICES'],
  rendezvous: ['MASTER_ADDR', 'MASTER_PORT'],
  offline: ['HF_HUB_OFFLINE', 'HF_DATASETS_OFFLINE', 'TRANSFORMERS_OFFLINE'],
  /** Other variables of the same libraries, listed by the doctor (their defaults are harmless). */
  prefixes: ['NCCL_', 'GLOO_', 'FI_', 'TORCH_NCCL_'],
  /**
   * Set for a job that holds the platform's values: a JSON map of each held variable to its value (null:
   * unset); the image's Python start-up hook keeps them against any later write.
   */
  holdVariable: 'RLVR_HOLD_PLATFORM_ENV',
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

/** Job names: `<prefix>-YYYYMMDD-HHMMSS` in UTC, then `-2`, `-3`, … when taken. */
export const TRAINING_JOB_NAME_PATTERN = /^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/;
export const TRAINING_JOB_NAME_MAX_LENGTH = 63;

export function jobNameTimestamp(date: Date): string {
  const iso = date.toISOString(); // 2026-11-22T04:05:06.789Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

/** The n-th candidate name for a submit at `date` (n = 1 is the plain name). */
/** The prefix a job's name was made from (`<prefix>-YYYYMMDD-HHMMSS[-N]`), when it was made so. */
export function jobNamePrefixOf(name: string): string | undefined {
  return /^(.+)-\d{8}-\d{6}(-\d+)?$/.exec(name)?.[1];
}

export function jobNameCandidate(prefix: string, date: Date, n: number): string {
  const base = `${prefix}-${jobNameTimestamp(date)}`;
  return n <= 1 ? base : `${base}-${n}`;
}

export function isValidTrainingJobName(name: string): boolean {
  return name.length <= TRAINING_JOB_NAME_MAX_LENGTH && TRAINING_JOB_NAME_PATTERN.test(name);
}

/** The run folder: the same names in `checkpoints/<job>/` and in `results/<job>/`. */
export const RUN_FOLDER = {
  config: 'config.yaml',
  results: 'RESULTS.md',
  runInfo: 'run.json',
  patches: 'patches',
  logs: 'logs',
  evals: 'evals',
  /** Small final artifacts the entrypoint copies into /opt/ml/model. */
  summary: 'summary.json',
  /** Local runs: the container's whole output, and the job's failure file when it failed. */
  localRunLog: 'logs-local-run.txt',
  failure: 'failure.txt',
  traces: 'traces',
  trace: 'trace.jsonl',
  /** Where checkpoint folders go in `results/<job>/`. */
  checkpoints: 'checkpoints',
} as const;

/**
 * A worker host's own file in the run folder its hosts share: `run.json` → `run-algo-2.json`. The head's
 * (or the one host's) files keep their names: they are the job's.
 */
export function workerFileName(name: string, host: string): string {
  const ext = path.posix.extname(name);
  return `${name.slice(0, name.length - ext.length)}-${host}${ext}`;
}

/** A checkpoint folder is `<run>_step<N>` or `<run>_final`. */
export function parseCheckpointFolder(
  name: string,
): { readonly step?: number; readonly final: boolean } | undefined {
  const m = /_(?:step(\d+)|(final))$/.exec(name);
  if (!m) return undefined;
  return m[2] ? { final: true } : { step: Number(m[1]), final: false };
}

/** Hugging Face conventions the launcher checks: the sharded-weights index, save_to_disk markers. */
export const MODEL_INDEX_FILE = 'model.safetensors.index.json';
export const DATASET_MARKERS: readonly string[] = ['dataset_info.json', 'dataset_dict.json', 'state.json'];

/** Local folders: where results land on the researcher's machine. */
export const LOCAL = {
  resultsDir: 'results',
  defaultJobLog: 'docs/job_log.md',
} as const;

export function consoleJobUrl(region: string, job: string): string {
  return `https://${region}.console.aws.amazon.com/sagemaker/home?region=${region}#/jobs/${job}`;
}

/**
 * The S3 bucket ECR keeps image layers in (`prod-<region>-starport-layer-bucket`): a VPC without internet
 * pulls layers from it through the S3 gateway endpoint, whose policy must name it (Amazon ECR User Guide,
 * "Amazon ECR interface VPC endpoints (AWS PrivateLink)": minimum Amazon S3 bucket permissions).
 */
export function ecrLayerBucketName(region: string): string {
  return `prod-${region}-starport-layer-bucket`;
}

/** A checkpoint folder a key lies in (keys relative to `checkpoints/<job>/`). */
export interface CheckpointFolderKey {
  /** e.g. `A/checkpoints/A_step20`, `checkpoints/r_step20`, or `r_step40` (a trainer that wrote at the top). */
  readonly path: string;
  /** The folder holding it: `A/checkpoints`, `checkpoints`, or `` (the top). */
  readonly parent: string;
  /** `A_step20` */
  readonly folder: string;
  /** The step, or undefined for `<run>_final`. */
  readonly step?: number;
  readonly final: boolean;
  /** The key's path inside the checkpoint folder. */
  readonly inner: string;
}

/**
 * The checkpoint folder of a key relative to `checkpoints/<job>/`: `<run>_step<N>/` or `<run>_final/`
 * inside any `…/checkpoints/` (the entrypoint's RLVR_CHECKPOINT_DIR `checkpoints/`, or a trainer's own run
 * folder's `<folder>/checkpoints/`), inside a folder in `checkpointDirs`, or at the top of the job prefix.
 * A folder of that name elsewhere (e.g. `evals/<checkpoint>/`) is not a checkpoint. The checkpoint-expiry
 * function and download (lib/results/run-folders.ts) read the job prefix by this one rule.
 */
export function checkpointFolderOfKey(
  relative: string,
  checkpointDirs: readonly string[] = [],
): CheckpointFolderKey | undefined {
  const parts = relative.split('/');
  for (let i = 0; i < parts.length - 1; i++) {
    const parsed = parseCheckpointFolder(parts[i]);
    if (!parsed) continue;
    const parent = parts.slice(0, i).join('/');
    if (i === 0 || parts[i - 1] === RUN_FOLDER.checkpoints || checkpointDirs.includes(parent)) {
      return {
        path: parts.slice(0, i + 1).join('/'),
        parent,
        folder: parts[i],
        ...(parsed.step !== undefined ? { step: parsed.step } : {}),
        final: parsed.final,
        inner: parts.slice(i + 1).join('/'),
      };
    }
  }
  return undefined;
}
