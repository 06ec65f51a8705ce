import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ListTrainingJobsCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { SETTINGS_PARAMETER_NAME } from '../../lib/layout';
import { TEST_ACCOUNT, TEST_REGION } from './moto';

export const BUCKET = `sagemaker-${TEST_REGION}-${TEST_ACCOUNT}`;
export const ROLE_ARN = `arn:aws:iam::${TEST_ACCOUNT}:role/rlvr-sagemaker-execution`;
export const REPOSITORY_URI = `${TEST_ACCOUNT}.dkr.ecr.${TEST_REGION}.amazonaws.com/rlvr-experiments`;
export const IMAGE = `${REPOSITORY_URI}@sha256:${'b'.repeat(64)}`;

export const SETTINGS_ENV = {
  RLVR_BUCKET: BUCKET,
  RLVR_ROLE_ARN: ROLE_ARN,
  RLVR_REPOSITORY_URI: REPOSITORY_URI,
};

const cache = new Map<string, ReturnType<typeof makeClients>>();

/** SDK clients on the emulator, made once per endpoint; `closeClients` frees their sockets. */
export function clients(endpoint: string) {
  if (!cache.has(endpoint)) cache.set(endpoint, makeClients(endpoint));
  return cache.get(endpoint)!;
}

export function closeClients(): void {
  for (const c of cache.values()) for (const client of Object.values(c)) client.destroy();
  cache.clear();
}

function makeClients(endpoint: string) {
  const common = {
    region: TEST_REGION,
    endpoint,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  };
  return {
    s3: new S3Client({ ...common, forcePathStyle: true }),
    sagemaker: new SageMakerClient(common),
    ssm: new SSMClient(common),
  };
}

/** What a team has in S3 before its first job: the model, datasets and curricula. */
export const SEEDED_KEYS = [
  'rlvr-experiments/models/Qwen3-1.7B-Base/config.json',
  'rlvr-experiments/models/Qwen3-1.7B-Base/model.safetensors',
  'rlvr-experiments/models/Qwen3-1.7B-Base/tokenizer.json',
  'rlvr-experiments/models/Qwen3-1.7B-Base/tokenizer_config.json',
  'rlvr-experiments/datasets/gsm8k_train/dataset_info.json',
  'rlvr-experiments/datasets/gsm8k_train/data-00000-of-00001.arrow',
  'rlvr-experiments/datasets/math_train/dataset_info.json',
  'rlvr-experiments/datasets/math_train/data-00000-of-00001.arrow',
  // A DatasetDict saved whole: save_to_disk, but not the split folder their loaders read.
  'rlvr-experiments/datasets/gsm8k_test/dataset_dict.json',
  'rlvr-experiments/datasets/gsm8k_test/test/dataset_info.json',
  'rlvr-experiments/datasets/gsm8k_test/test/data-00000-of-00001.arrow',
  'rlvr-experiments/curricula/gsm8k_curriculum.txt',
  'rlvr-experiments/curricula/math_curriculum.txt',
];

/** The smallest whole safetensors file: header length 2, header `{}` (the pre-flight reads headers). */
export const SAFETENSORS = Buffer.concat([Buffer.from([2, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('{}')]);

export async function seed(endpoint: string): Promise<void> {
  const { s3 } = clients(endpoint);
  await s3.send(
    new CreateBucketCommand({
      Bucket: BUCKET,
      CreateBucketConfiguration: { LocationConstraint: TEST_REGION },
    }),
  );
  for (const key of SEEDED_KEYS) {
    const body = key.endsWith('.txt') ? '1\n2\n3\n' : key.endsWith('.safetensors') ? SAFETENSORS : '{}';
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
  }
}

export async function publishSettings(
  endpoint: string,
  overrides: Record<string, unknown> = {},
): Promise<void> {
  const { ssm } = clients(endpoint);
  await ssm.send(
    new PutParameterCommand({
      Name: SETTINGS_PARAMETER_NAME,
      Type: 'String',
      Overwrite: true,
      Value: JSON.stringify({
        bucket: BUCKET,
        prefix: 'rlvr-experiments/',
        roleArn: ROLE_ARN,
        repositoryUri: REPOSITORY_URI,
        region: TEST_REGION,
        ...overrides,
      }),
    }),
  );
}

export async function allKeys(endpoint: string): Promise<string[]> {
  const { s3 } = clients(endpoint);
  const out = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }));
  return (out.Contents ?? []).map((o) => o.Key!).sort();
}

export async function jobNames(endpoint: string): Promise<string[]> {
  const { sagemaker } = clients(endpoint);
  const out = await sagemaker.send(new ListTrainingJobsCommand({ MaxResults: 100 }));
  return (out.TrainingJobSummaries ?? []).map((j) => j.TrainingJobName!).sort();
}
