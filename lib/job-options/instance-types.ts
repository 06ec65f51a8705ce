import { didYouMean } from '../config';

let trainingInstanceTypes: ReadonlySet<string> | undefined;

/**
 * Every instance type CreateTrainingJob accepts, from the SDK's own model of the API. Loaded on first
 * use, and only to explain a type the GPU table does not have: the SageMaker client package costs
 * ~40 ms, which commands that never check an instance type should not pay at start, and `cdk synth`
 * (which checks the built-in job templates) must not load it at all.
 */
function knownTypes(): ReadonlySet<string> {
  if (!trainingInstanceTypes) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy, synchronous load (see above)
    const sdk = require('@aws-sdk/client-sagemaker') as typeof import('@aws-sdk/client-sagemaker');
    trainingInstanceTypes = new Set(Object.values(sdk.TrainingInstanceType));
  }
  return trainingInstanceTypes;
}

/**
 * GPUs per instance for the GPU families we run on (AWS instance specifications). Every entry is a
 * SageMaker training instance type (test/training/instance-types.test.ts checks it against the SDK), so a
 * type found here needs no look-up in the SDK's list.
 */
const GPU_COUNTS: Readonly<Record<string, number>> = {
  'ml.p4d.24xlarge': 8,
  'ml.p4de.24xlarge': 8,
  'ml.p5.4xlarge': 1,
  'ml.p5.48xlarge': 8,
  'ml.p5e.48xlarge': 8,
  'ml.p5en.48xlarge': 8,
  'ml.g5.xlarge': 1,
  'ml.g5.2xlarge': 1,
  'ml.g5.4xlarge': 1,
  'ml.g5.8xlarge': 1,
  'ml.g5.16xlarge': 1,
  'ml.g5.12xlarge': 4,
  'ml.g5.24xlarge': 4,
  'ml.g5.48xlarge': 8,
  'ml.g6.xlarge': 1,
  'ml.g6.2xlarge': 1,
  'ml.g6.4xlarge': 1,
  'ml.g6.8xlarge': 1,
  'ml.g6.16xlarge': 1,
  'ml.g6.12xlarge': 4,
  'ml.g6.24xlarge': 4,
  'ml.g6.48xlarge': 8,
  'ml.g6e.xlarge': 1,
  'ml.g6e.2xlarge': 1,
  'ml.g6e.4xlarge': 1,
  'ml.g6e.8xlarge': 1,
  'ml.g6e.16xlarge': 1,
  'ml.g6e.12xlarge': 4,
  'ml.g6e.24xlarge': 4,
  'ml.g6e.48xlarge': 8,
};

export function isTrainingInstanceType(type: string): boolean {
  return knownTypes().has(type);
}

export function suggestInstanceType(type: string): string | undefined {
  const withPrefix = type.startsWith('ml.') ? type : `ml.${type}`;
  if (knownTypes().has(withPrefix)) return withPrefix;
  return didYouMean(type, [...knownTypes()]);
}

/**
 * Families whose instances carry local NVMe storage (AWS instance specifications). Their volumes are
 * encrypted by the instance's hardware, and CreateTrainingJob refuses a VolumeKmsKeyId for them
 * (API reference, ResourceConfig.VolumeKmsKeyId: "You can't request a VolumeKmsKeyId when using an
 * instance type with local storage").
 */
const LOCAL_STORAGE_FAMILY = /^ml\.(p3dn|p4d|p4de|p5|p5e|p5en|g4dn|g5|g6|g6e|trn1|trn1n|[cmr]\d+[a-z]*d)\./;

/**
 * Training instance types with EFA network interfaces (AWS's list of EFA-capable types): on these, hosts
 * of one job reach each other over EFA when the image has libfabric and the aws-ofi-nccl plugin.
 */
const EFA_TYPES =
  /^ml\.(p3dn\.24xlarge|p4d\.24xlarge|p4de\.24xlarge|p5\.48xlarge|p5e\.48xlarge|p5en\.48xlarge|g5\.48xlarge|g6e\.48xlarge|trn1n?\.32xlarge)$/;

export function hasEfa(type: string): boolean {
  return EFA_TYPES.test(type);
}

export function hasLocalStorage(type: string): boolean {
  return LOCAL_STORAGE_FAMILY.test(type);
}

/** GPUs on one instance of `type`; undefined for types outside the table (CPU or unknown families). */
export function gpuCount(type: string): number | undefined {
  return GPU_COUNTS[type];
}

/** The instance types a job may run on: the GPU table's. */
export function gpuInstanceTypes(): string[] {
  return Object.keys(GPU_COUNTS);
}

/** Whether a job may run on an instance type, and if not, why. */
export type InstanceTypeVerdict =
  | { readonly ok: true; readonly gpus: number }
  /** SageMaker training does not accept it (a typo, most likely). */
  | { readonly ok: false; readonly reason: 'not-training-type'; readonly suggestion?: string }
  /** SageMaker accepts it, but it is not a GPU type this launcher can split. */
  | { readonly ok: false; readonly reason: 'not-gpu-type' };

/**
 * Checks `type` as a job's instance type. A job runs only on the GPU table's types, each a SageMaker
 * training type; the SDK's full list is consulted only for a type outside the table, to say whether it
 * is a typo or a real but unsupported type.
 */
export function checkInstanceType(type: string): InstanceTypeVerdict {
  const gpus = gpuCount(type);
  if (gpus !== undefined) return { ok: true, gpus };
  if (isTrainingInstanceType(type)) return { ok: false, reason: 'not-gpu-type' };
  return { ok: false, reason: 'not-training-type', suggestion: suggestInstanceType(type) };
}
