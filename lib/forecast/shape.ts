import { isObject } from '../util';
import { isMap, valueAtDotted, valueAtPath, type YamlMap } from '../trainers';

/*
 * What makes two runs' steps take the same time: the same trainer on the same model, on the same
 * instances with the same GPU split, with the same batch (prompts per optimizer step, completions per
 * prompt, the longest completion). The learning rate, the seed, the data mix, the reward and the run's
 * name are not in it: they change what a step learns, not (much) how long it takes.
 */

/** The keys a forecast matches runs on, in the order the plan names them. */
export const SHAPE_KEYS = [
  'trainer',
  'model',
  'instanceType',
  'instanceCount',
  'trainGpus',
  'evalGpus',
  'batch',
] as const;
export type ShapeKey = (typeof SHAPE_KEYS)[number];

/** A run's shape: every value a string, so shapes compare and print alike. */
export type RunShape = Readonly<Record<ShapeKey, string>>;

/** The config keys of the batch, as the trainer reads them. */
export const BATCH_KEYS = ['training.prompts_per_optim_step', 'sampling.n', 'sampling.max_tokens'] as const;

/** How SHAPE_KEYS read in a plan. */
export const SHAPE_LABELS: Readonly<Record<ShapeKey, string>> = {
  trainer: 'trainer',
  model: 'model',
  instanceType: 'instance type',
  instanceCount: 'instance count',
  trainGpus: 'train GPUs',
  evalGpus: 'eval GPUs',
  batch: `batch (${BATCH_KEYS.join(', ')})`,
};

/** The batch keys' values, `32×8×1024`; `?` for a key the config does not set. */
export function batchOf(config: YamlMap): string {
  return BATCH_KEYS.map((k) => {
    const v = valueAtDotted(config, k);
    return typeof v === 'number' || typeof v === 'string' ? String(v) : '?';
  }).join('×');
}

/** The model's folder name: `s3://b/models/Qwen3-1.7B-Base/` → `Qwen3-1.7B-Base`. */
export function modelName(reference: string): string {
  const parts = reference.replace(/\/+$/, '').split('/');
  return parts[parts.length - 1] ?? reference;
}

/** A GPU list's size: `0,1,2` → `3`; [] or '' → `0`. */
function gpuCountOf(gpus: readonly unknown[] | string): string {
  if (Array.isArray(gpus)) return String(gpus.length);
  const s = String(gpus).trim();
  return s === '' ? '0' : String(s.split(',').length);
}

export interface ShapeInput {
  readonly trainer: string;
  readonly model: string;
  readonly instanceType: string;
  readonly instanceCount: number;
  readonly trainGpus: readonly unknown[] | string;
  readonly evalGpus: readonly unknown[] | string;
  readonly config: YamlMap;
}

export function shapeOf(input: ShapeInput): RunShape {
  return {
    trainer: input.trainer,
    model: modelName(input.model),
    instanceType: input.instanceType,
    instanceCount: String(input.instanceCount),
    trainGpus: gpuCountOf(input.trainGpus),
    evalGpus: gpuCountOf(input.evalGpus),
    batch: batchOf(input.config),
  };
}

/** A shape recorded by a job (run.json, contract.json), read defensively: undefined unless whole. */
export function readShape(value: unknown): RunShape | undefined {
  if (!isObject(value)) return undefined;
  const out: Partial<Record<ShapeKey, string>> = {};
  for (const k of SHAPE_KEYS) {
    const v = value[k];
    if (typeof v !== 'string' || v === '') return undefined;
    out[k] = v;
  }
  return out as RunShape;
}

/** The keys two shapes differ in. */
export function shapeDifferences(a: RunShape, b: RunShape): ShapeKey[] {
  return SHAPE_KEYS.filter((k) => a[k] !== b[k]);
}

/** The steps a config trains for: `training.max_steps`, else the trainer's default (undefined: not known). */
export function maxStepsOf(config: YamlMap, defaultSteps?: number): number | undefined {
  const training = isMap(config.training) ? config.training : {};
  const v = training.max_steps;
  if (typeof v === 'number' && Number.isInteger(v) && v > 0) return v;
  return defaultSteps;
}

/** The instance type a local run (`submit --local`) records: its steps say nothing of SageMaker's. */
export const LOCAL_INSTANCE = 'local';

/** The step a resumed job starts from: its trainer's resume key, when the config sets it. */
export function resumeStepOf(
  config: YamlMap,
  stepKey: string | readonly (string | number)[] | undefined,
): number | undefined {
  if (stepKey === undefined) return undefined;
  const v = typeof stepKey === 'string' ? valueAtDotted(config, stepKey) : valueAtPath(config, stepKey);
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;
}
