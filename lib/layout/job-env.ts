/** The environment of a job: what the launcher sets, what the entrypoint adds, what the platform owns. */

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
  /** The job's kind (lib/job-kinds): unset for training. */
  mode: 'RLVR_MODE',
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
