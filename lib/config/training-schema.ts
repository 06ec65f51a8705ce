import { z } from 'zod';
import { launcherSectionSchema } from './launcher-schema';

/*
 * The trainer's config belongs to the trainer, and it changes every week: this schema types only what
 * the launcher acts on (model, data and order references, the numbers the GPU split, the checkpoints
 * and the end of training depend on, and the rollout settings the incident rules read). Every object is
 * open: other keys pass through untouched, and likely typos are found against the trainer profile's
 * keys (typos.ts). Only the launcher's own section is closed.
 * `max_staleness` is an experimental variable: typed, never changed.
 */

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().min(0);
const positiveNumber = z.number().positive();
const fraction = z.number().gt(0).max(1);
const reference = z.string().min(1);
/** A count the trainer treats as "off" when 0 or null (`if training["checkpoint_interval"]`). */
const countOrOff = nonNegativeInt.nullable();

/** Titan parallelism degrees: positive, or -1 (torchtitan: "the rest of the GPUs"). */
const degree = z.union([positiveInt, z.literal(-1)]);

const titanConfig = z.looseObject({
  model: z.looseObject({ hf_assets_path: reference.optional() }).optional(),
  // lr 0 is a real experiment (ratio checks with frozen weights): a warning, not an error.
  optimizer: z.looseObject({ lr: z.number().min(0).optional(), eps: positiveNumber.optional() }).optional(),
  parallelism: z
    .looseObject({
      data_parallel_replicate_degree: degree.optional(),
      data_parallel_shard_degree: degree.optional(),
      tensor_parallel_degree: degree.optional(),
      context_parallel_degree: degree.optional(),
      dp_replicate: degree.optional(),
      dp_shard: degree.optional(),
      tensor_parallel: degree.optional(),
      context_parallel: degree.optional(),
    })
    .optional(),
  checkpoint: z
    .looseObject({
      enable: z.boolean().optional(),
      folder: z.string().optional(),
      interval: positiveInt.optional(),
      export_dtype: z.enum(['float16', 'bfloat16', 'float32']).optional(),
    })
    .optional(),
});

const vllmConfig = z.looseObject({
  model: reference,
  tensor_parallel_size: positiveInt.optional(),
  pipeline_parallel_size: positiveInt.optional(),
  data_parallel_size: positiveInt.optional(),
  max_model_len: positiveInt.optional(),
  gpu_memory_utilization: fraction.optional(),
});

const role = z.discriminatedUnion('kind', [
  z.looseObject({ name: z.string().min(1), kind: z.literal('titan'), config: titanConfig.optional() }),
  z.looseObject({ name: z.string().min(1), kind: z.literal('vllm'), config: vllmConfig }),
]);

const datasetEntry = z.looseObject({
  name: z.string().min(1),
  split: z.string().min(1).optional(),
  weight: z.number().min(0).optional(),
  count: positiveInt.nullable().optional(),
  order: reference.optional(),
  path: reference.optional(),
});

/** `data` and `sft_data`: a loader name and its parameters, or `mixed` with a list of entries. */
const dataSection = z.looseObject({
  dataset: z.string().min(1),
  datasets: z
    .array(z.union([datasetEntry, z.string()]))
    .min(1)
    .optional(),
  split: z.string().min(1).optional(),
  order: reference.optional(),
  path: reference.optional(),
  mode: z.string().optional(),
  seed: z.number().int().optional(),
});

const dataIterator = z.looseObject({
  system_prompt: z.string().nullable().optional(),
  assistant_prefix: z.string().nullable().optional(),
  skip_chat_template: z.boolean().optional(),
  order: reference.optional(),
});

export const trainingConfigSchema = z.looseObject({
  run: z
    .looseObject({
      name: z.string().min(1).max(256).optional(),
      port_start: z.number().int().min(1024).max(65000).optional(),
      seed: z.number().int().optional(),
    })
    .optional(),
  model: z.looseObject({ path: reference }),
  tokenizer: z
    .looseObject({ pretrained_model_name_or_path: reference.optional(), use_fast: z.boolean().optional() })
    .optional(),
  training: z.looseObject({
    max_steps: countOrOff.optional(),
    num_epochs: countOrOff.optional(),
    checkpoint_interval: countOrOff.optional(),
    resume_step: nonNegativeInt.optional(),
    max_staleness: nonNegativeInt.optional(),
    seq_len_buckets: z.array(positiveInt).min(1).optional(),
    completion_len_buckets: z.array(positiveInt).min(1).nullable().optional(),
    // A number, or one per sequence-length bucket (E/train_grpo_sft.py:58-64).
    completions_per_micro_batch: z.union([positiveInt, z.record(z.string(), positiveInt)]).optional(),
  }),
  loss: z.looseObject({ name: z.string().min(1).optional(), beta: z.number().min(0).optional() }).optional(),
  data: dataSection.optional(),
  data_iter: dataIterator.optional(),
  sft_data: dataSection.optional(),
  sft_data_iter: dataIterator.optional(),
  sampling: z
    .looseObject({
      temperature: z.number().min(0).optional(),
      top_p: fraction.optional(),
      top_k: z.number().int().min(-1).optional(),
      max_tokens: positiveInt.optional(),
      n: positiveInt.optional(),
      stop: z.array(z.string().min(1)).optional(),
    })
    .optional(),
  buffer: z.looseObject({ maxsize: nonNegativeInt.optional(), max_reads: positiveInt.optional() }).optional(),
  roles: z.array(role).min(1),
  sync: z
    .looseObject({
      wiring: z.array(z.looseObject({ src: z.string().min(1), dst: z.string().min(1) })).optional(),
    })
    .optional(),
  launcher: launcherSectionSchema.optional(),
});

export type TrainingConfig = z.infer<typeof trainingConfigSchema>;
export type Role = TrainingConfig['roles'][number];
