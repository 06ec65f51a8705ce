import { z } from 'zod';
import { parseDuration, parseGpuList } from './units';

const duration = z.union([z.number(), z.string()]).superRefine((v, ctx) => {
  if (parseDuration(v) === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `${JSON.stringify(v)} is not a duration`,
      params: { hint: 'Write seconds (86400) or a duration such as "24h", "90m", "1h30m".' },
    });
  }
});

const gpuList = z.union([z.string(), z.array(z.number())]).superRefine((v, ctx) => {
  if (parseGpuList(v) === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `${JSON.stringify(v)} is not a GPU list`,
      params: { hint: 'Write GPU indices as "0,1,2,3", a range "0-5", or a list [0, 1].' },
    });
  }
});

const metricDefinition = z.strictObject({
  Name: z.string().min(1).max(255),
  Regex: z.string().min(1).max(500),
});

const allowReason = z.custom<string>((v) => typeof v === 'string' && v.trim() !== '', {
  message: 'needs a reason: why this config may break the rule',
  params: { hint: 'Write RLVRnnn: "<why>" (the plan shows it with each finding it silences).' },
});

/**
 * How a job runs: the fields a job template sets (published by the infrastructure stack) and that the
 * config's `launcher` section and CLI flags override.
 */
export const jobOptionsShape = {
  instance_type: z.string().min(1),
  instance_count: z.number().int().min(1).max(64),
  volume_gb: z.number().int().min(1).max(16384),
  train_gpus: gpuList,
  eval_gpus: gpuList,
  max_runtime: duration,
  spot: z.boolean(),
  max_wait: duration,
  /** SageMaker's RetryStrategy.MaximumRetryAttempts: how often SageMaker retries a failed job. */
  max_retries: z.number().int().min(1).max(30),
  keep_alive: duration,
  /** Once training ends, how long the eval watcher may take to finish the checkpoints left. */
  eval_wait: duration,
  cluster_join_timeout: duration,
  model_input_mode: z.enum(['FastFile', 'File']),
  network_isolation: z.boolean(),
  /**
   * Network isolation of a job that mounts the shared file system: AWS does not document whether a
   * file-system channel works with EnableNetworkIsolation, so it can be turned off for those jobs alone.
   */
  shared_fs_network_isolation: z.boolean(),
  use_ray: z.boolean(),
  /**
   * Keep the platform's values of the variables it owns (the interfaces, and the transports on hosts
   * with EFA) in every Python process of the job, against a trainer module that assigns them at import.
   */
  hold_platform_env: z.boolean(),
  trainer_command: z.string().min(1),
  metric_definitions: z.array(metricDefinition).max(40),
  tags: z.record(z.string(), z.string()),
};

export const jobTemplateSchema = z
  .strictObject({
    description: z.string().optional(),
    ...jobOptionsShape,
  })
  .partial();
export type JobTemplate = z.infer<typeof jobTemplateSchema>;

/** The config's own `launcher:` section: one file describes one job. */
export const launcherSectionSchema = z
  .strictObject({
    template: z.string().min(1),
    /** The trainer profile (lib/trainers): which of the team's trainers runs this config. */
    trainer: z.string().min(1),
    /** Incident rules this config knowingly breaks, by id (each is still shown in the plan). */
    acknowledge: z.array(z.string().min(1)),
    /**
     * Rules whose findings this config may break, by id, each with the reason (`{RLVR120: "why"}`): they
     * are shown in the plan as allowed, not as problems. Which ids may be allowed: config/rules.
     */
    allow: z.record(z.string(), allowReason),
    description: z.string(),
    trainer_src: z.string().min(1),
    include: z.array(z.string().min(1)),
    exclude: z.array(z.string().min(1)),
    eval_config: z.string().min(1),
    image: z.string().min(1),
    ...jobOptionsShape,
  })
  .partial();
export type LauncherSection = z.infer<typeof launcherSectionSchema>;

export type JobOptionName = keyof typeof jobOptionsShape;
