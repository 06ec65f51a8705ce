import type { JobTemplate } from '../config';

/**
 * Metric definitions over the trainer's log lines (`reward=0.41`, `kl: 0.0012`, `loss=…`), so
 * SageMaker charts them. SageMaker takes the first capture group.
 */
export const DEFAULT_METRIC_DEFINITIONS = [
  { Name: 'train:reward', Regex: '\\breward(?:_mean)?[=:]\\s*(-?[0-9]+(?:\\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)' },
  { Name: 'train:kl', Regex: '\\bkl(?:_mean)?[=:]\\s*(-?[0-9]+(?:\\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)' },
  { Name: 'train:loss', Regex: '\\bloss[=:]\\s*(-?[0-9]+(?:\\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)' },
];

/**
 * The lowest precedence: what a job gets when neither flags, config nor template say otherwise. The
 * trainer command's default is the trainer profile's (lib/trainers), chosen per config.
 */
export const BUILT_IN_DEFAULTS = {
  instance_type: 'ml.p4de.24xlarge',
  instance_count: 1,
  volume_gb: 200,
  max_runtime: 24 * 3600,
  spot: false,
  keep_alive: 0,
  eval_wait: 30 * 60,
  cluster_join_timeout: 10 * 60,
  model_input_mode: 'FastFile' as const,
  network_isolation: true,
  shared_fs_network_isolation: true,
  use_ray: true,
  hold_platform_env: false,
  metric_definitions: DEFAULT_METRIC_DEFINITIONS,
  tags: {} as Record<string, string>,
};

/** When an eval config is given on an 8-GPU instance without a split: train 0–5, eval 6–7, the team's split. */
export const DEFAULT_EVAL_GPU_COUNT = 2;

/**
 * The named templates the infrastructure stack publishes; these definitions stand in until it is
 * deployed (and are what it publishes).
 */
export const BUILT_IN_TEMPLATES: Readonly<Record<string, JobTemplate>> = {
  'p4de-train-eval': {
    description: '8×A100-80GB: trainer on GPUs 0–5, eval watcher on 6–7 (the standard layout)',
    instance_type: 'ml.p4de.24xlarge',
    train_gpus: '0-5',
    eval_gpus: '6-7',
    max_runtime: '24h',
  },
  'p4de-train': {
    description: '8×A100-80GB, all GPUs train, no eval watcher',
    instance_type: 'ml.p4de.24xlarge',
    train_gpus: '0-7',
    eval_gpus: '',
    max_runtime: '24h',
  },
  'p5-train-eval': {
    description: '8×H100: trainer on GPUs 0–5, eval watcher on 6–7',
    instance_type: 'ml.p5.48xlarge',
    train_gpus: '0-5',
    eval_gpus: '6-7',
    max_runtime: '24h',
  },
  'g5-smoke': {
    description: '1×A10G smoke run, capped at 1 hour',
    instance_type: 'ml.g5.2xlarge',
    train_gpus: '0',
    eval_gpus: '',
    max_runtime: '1h',
    volume_gb: 100,
  },
};
