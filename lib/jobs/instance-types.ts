import { TrainingInstanceType } from '@aws-sdk/client-sagemaker';
import { didYouMean } from '../config';

/** Every instance type CreateTrainingJob accepts, from the SDK's own model of the API. */
const TRAINING_INSTANCE_TYPES: ReadonlySet<string> = new Set(Object.values(TrainingInstanceType));

/** GPUs per instance for the GPU families we run on (AWS instance specifications). */
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
  return TRAINING_INSTANCE_TYPES.has(type);
}

export function suggestInstanceType(type: string): string | undefined {
  const withPrefix = type.startsWith('ml.') ? type : `ml.${type}`;
  if (TRAINING_INSTANCE_TYPES.has(withPrefix)) return withPrefix;
  return didYouMean(type, [...TRAINING_INSTANCE_TYPES]);
}

/** GPUs on one instance of `type`; undefined for types outside the table (CPU or unknown families). */
export function gpuCount(type: string): number | undefined {
  return GPU_COUNTS[type];
}
