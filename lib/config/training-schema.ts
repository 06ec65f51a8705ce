import { z } from 'zod';
import { launcherSectionSchema } from './launcher-schema';

/*
 * The trainer's config as it really is (BRIEF §5). Objects are strict so a misspelt key is an error
 * (a misspelt `checkpoint_interval` silently meant "no checkpoints"); sections whose contents belong
 * to the trainer's sub-libraries (profiling, metrics, activation_checkpoint, compile) are passed through.
 * `max_staleness` is an experimental variable: typed, never changed.
 */

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().min(0);
const positiveNumber = z.number().positive();
const buckets = z.array(positiveInt).min(1);
const passthrough = z.record(z.string(), z.unknown());
const fraction = z.number().gt(0).max(1);

const run = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only'),
  port_start: z.number().int().min(1024).max(65000).optional(),
});

const training = z.strictObject({
  max_steps: positiveInt,
  checkpoint_interval: positiveInt,
  max_staleness: nonNegativeInt.optional(),
  abort_in_flight: z.boolean().optional(),
  seq_len_buckets: buckets.optional(),
  completion_len_buckets: buckets.optional(),
  prompts_per_rollout_sync: positiveInt.optional(),
  prompts_per_reference_sync: positiveInt.optional(),
  prompts_per_optim_step: positiveInt.optional(),
  prompts_per_forward_backward: positiveInt.optional(),
  completions_per_micro_batch: positiveInt.optional(),
  alpha_grpo: z.number().min(0).optional(),
  alpha_sft: z.number().min(0).optional(),
  sft: z
    .strictObject({
      seq_len_buckets: buckets.optional(),
      completion_len_buckets: buckets.optional(),
      micro_batch_size: positiveInt.optional(),
    })
    .optional(),
});

const datasetEntry = z.strictObject({
  name: z.string().min(1),
  split: z.string().min(1).optional(),
  weight: positiveNumber.optional(),
  difficulty: z.union([z.string(), z.number()]).optional(),
  order: z.string().min(1).optional(),
});

const data = z.strictObject({
  dataset: z.string().min(1),
  datasets: z.array(datasetEntry).min(1).optional(),
  split: z.string().min(1).optional(),
  order: z.string().min(1).optional(),
  seed: z.number().int().optional(),
});

const sampling = z.strictObject({
  temperature: z.number().min(0),
  top_p: fraction.optional(),
  top_k: z.number().int().min(-1).optional(),
  max_tokens: positiveInt,
  n: positiveInt,
  logprobs: z.union([nonNegativeInt, z.boolean()]).optional(),
  stop: z.array(z.string().min(1)).optional(),
  // Not a trainer key: caught by the semantic checks with the incident it caused.
  seed: z.unknown().optional(),
});

const titanConfig = z.strictObject({
  trainable: z.boolean().optional(),
  profiling: passthrough.optional(),
  metrics: passthrough.optional(),
  model: z
    .strictObject({
      name: z.string().min(1),
      flavor: z.string().min(1),
      hf_assets_path: z.string().min(1).optional(),
    })
    .optional(),
  optimizer: z.strictObject({
    name: z.string().min(1),
    lr: positiveNumber,
    eps: positiveNumber.optional(),
    weight_decay: z.number().min(0).optional(),
  }),
  lr_scheduler: z
    .strictObject({
      warmup_steps: nonNegativeInt.optional(),
      decay_ratio: z.number().min(0).max(1).nullable().optional(),
      decay_type: z.string().optional(),
      min_lr_factor: z.number().min(0).optional(),
    })
    .optional(),
  training: z
    .strictObject({
      seq_len: positiveInt.optional(),
      dtype: z.string().optional(),
      mixed_precision_param: z.string().optional(),
      mixed_precision_reduce: z.string().optional(),
    })
    .optional(),
  parallelism: z
    .strictObject({
      dp_replicate: z.number().int().optional(),
      dp_shard: z.number().int().optional(),
      fsdp_reshard_after_forward: z.union([z.string(), z.boolean()]).optional(),
      tensor_parallel: positiveInt.optional(),
      context_parallel: positiveInt.optional(),
      disable_loss_parallel: z.boolean().optional(),
    })
    .optional(),
  checkpoint: z
    .strictObject({
      enable: z.boolean().optional(),
      folder: z.string().optional(),
      initial_load_in_hf: z.boolean().optional(),
      interval: positiveInt.optional(),
      last_save_model_only: z.boolean().optional(),
      export_dtype: z.enum(['float16', 'bfloat16', 'float32']).optional(),
      async_mode: z.string().optional(),
    })
    .optional(),
  activation_checkpoint: passthrough.optional(),
  compile: passthrough.optional(),
});

const vllmConfig = z.strictObject({
  model: z.string().min(1),
  max_concurrent_per_replica: positiveInt.optional(),
  max_num_seqs: positiveInt.optional(),
  tensor_parallel_size: positiveInt.optional(),
  data_parallel_size: positiveInt.optional(),
  max_model_len: positiveInt.optional(),
  gpu_memory_utilization: fraction.optional(),
  dtype: z.string().optional(),
  logprobs_mode: z.string().optional(),
  max_num_batched_tokens: positiveInt.optional(),
  enable_prefix_caching: z.boolean().optional(),
  enable_chunked_prefill: z.boolean().optional(),
});

const role = z.discriminatedUnion('kind', [
  z.strictObject({ name: z.string().min(1), kind: z.literal('titan'), config: titanConfig }),
  z.strictObject({ name: z.string().min(1), kind: z.literal('vllm'), config: vllmConfig }),
]);

export const trainingConfigSchema = z.strictObject({
  run,
  model: z.strictObject({ path: z.string().min(1) }),
  tokenizer: z
    .strictObject({ pretrained_model_name_or_path: z.string().min(1), use_fast: z.boolean().optional() })
    .optional(),
  training,
  verifier: z.strictObject({ num_workers: positiveInt }).optional(),
  loss: z.strictObject({
    name: z.enum(['grpo', 'drgrpo']),
    beta: z.number().min(0),
    eps: positiveNumber.optional(),
  }),
  data,
  data_iter: z
    .strictObject({
      system_prompt: z.string().optional(),
      assistant_prefix: z.string().optional(),
      skip_chat_template: z.boolean().optional(),
    })
    .optional(),
  sampling,
  buffer: z.strictObject({ max_reads: positiveInt.optional(), maxsize: positiveInt.optional() }).optional(),
  roles: z.array(role).min(1),
  sync: z
    .strictObject({
      chunk_mb: positiveNumber.optional(),
      wiring: z.array(z.strictObject({ src: z.string().min(1), dst: z.string().min(1) })).optional(),
    })
    .optional(),
  launcher: launcherSectionSchema.optional(),
});

export type TrainingConfig = z.infer<typeof trainingConfigSchema>;
export type Role = TrainingConfig['roles'][number];
