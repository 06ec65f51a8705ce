/**
 * What a job ran with, as `rerun` and `diff` read it: its CreateTrainingJob request (the `request.json`
 * every submit writes beside the job's files, or, for a job submitted before there was one, the same
 * request rebuilt from DescribeTrainingJob and its tags) and the files under `jobs/<job>/`.
 */
import type { CreateTrainingJobRequest, DescribeTrainingJobResponse, Tag } from '@aws-sdk/client-sagemaker';
import { describeJob, isAwsError, requireLayout, type JobContext } from '../aws';
import { CHANNELS, JOB_FILES, parseS3Uri, type S3Location } from '../layout';
import { isObject } from '../util';

export interface JobRecord {
  readonly name: string;
  readonly described: DescribeTrainingJobResponse;
  readonly tags: Readonly<Record<string, string>>;
  readonly request: CreateTrainingJobRequest;
  /** Where the request came from: the job's own `request.json`, or rebuilt from what SageMaker says. */
  readonly requestSource: 'request.json' | 'DescribeTrainingJob';
  /** The job's files (`jobs/<job>/`, the config channel): bucket and the prefix they are under. */
  readonly filesAt: S3Location;
  /** Names relative to `filesAt` (`resolved-config.yaml`, `patches/git_diff.patch`, …). */
  readonly files: readonly string[];
}

/** The config channel's S3 location, where the job's own files are. */
export function configChannelLocation(request: CreateTrainingJobRequest): S3Location | undefined {
  const channel = request.InputDataConfig?.find((c) => c.ChannelName === CHANNELS.config);
  const uri = channel?.DataSource?.S3DataSource?.S3Uri;
  return uri ? parseS3Uri(uri) : undefined;
}

/** Tags SageMaker adds itself (`aws:…`) are not the job's: a create may not set them. */
function ownTags(tags: Readonly<Record<string, string>>): Tag[] {
  return Object.entries(tags)
    .filter(([k]) => !k.startsWith('aws:'))
    .map(([Key, Value]) => ({ Key, Value }));
}

/**
 * The request as it would have been sent, from DescribeTrainingJob and ListTags: every field of a
 * CreateTrainingJob the launcher sets, copied where DescribeTrainingJob reports it.
 */
export function requestFromDescription(
  job: DescribeTrainingJobResponse,
  tags: Readonly<Record<string, string>>,
): CreateTrainingJobRequest {
  const spec: Partial<NonNullable<DescribeTrainingJobResponse['AlgorithmSpecification']>> =
    job.AlgorithmSpecification ?? {};
  const request: CreateTrainingJobRequest = {
    TrainingJobName: job.TrainingJobName,
    RoleArn: job.RoleArn,
    AlgorithmSpecification: {
      TrainingImage: spec.TrainingImage,
      TrainingInputMode: spec.TrainingInputMode,
      ...(spec.MetricDefinitions ? { MetricDefinitions: spec.MetricDefinitions } : {}),
      ...(spec.EnableSageMakerMetricsTimeSeries !== undefined
        ? { EnableSageMakerMetricsTimeSeries: spec.EnableSageMakerMetricsTimeSeries }
        : {}),
    },
    InputDataConfig: job.InputDataConfig,
    OutputDataConfig: job.OutputDataConfig,
    ...(job.CheckpointConfig ? { CheckpointConfig: job.CheckpointConfig } : {}),
    ResourceConfig: job.ResourceConfig,
    StoppingCondition: job.StoppingCondition,
    ...(job.RetryStrategy ? { RetryStrategy: job.RetryStrategy } : {}),
    ...(job.EnableManagedSpotTraining !== undefined
      ? { EnableManagedSpotTraining: job.EnableManagedSpotTraining }
      : {}),
    ...(job.EnableNetworkIsolation !== undefined
      ? { EnableNetworkIsolation: job.EnableNetworkIsolation }
      : {}),
    ...(job.EnableInterContainerTrafficEncryption !== undefined
      ? { EnableInterContainerTrafficEncryption: job.EnableInterContainerTrafficEncryption }
      : {}),
    ...(job.Environment ? { Environment: job.Environment } : {}),
    ...(job.VpcConfig ? { VpcConfig: job.VpcConfig } : {}),
    ...(job.HyperParameters && Object.keys(job.HyperParameters).length
      ? { HyperParameters: job.HyperParameters }
      : {}),
    Tags: ownTags(tags),
  };
  return JSON.parse(JSON.stringify(request)) as CreateTrainingJobRequest;
}

/** The job's request, description, tags and files. Unknown job: UserError (exit 2). */
export async function readJobRecord(context: JobContext, name: string): Promise<JobRecord> {
  const layout = requireLayout(context);
  const described = await describeJob(context, name);
  const tags = await context.aws.sagemaker.listTags(described.TrainingJobArn!);
  const fromDescription = requestFromDescription(described, tags);
  const filesAt = configChannelLocation(fromDescription) ?? {
    bucket: layout.bucket,
    key: layout.jobPrefix(name),
  };
  const prefix = filesAt.key.endsWith('/') ? filesAt.key : `${filesAt.key}/`;
  let request = fromDescription;
  let requestSource: JobRecord['requestSource'] = 'DescribeTrainingJob';
  try {
    const parsed: unknown = JSON.parse(
      await context.aws.s3.getObjectText(filesAt.bucket, `${prefix}${JOB_FILES.request}`),
    );
    if (isObject(parsed) && parsed.TrainingJobName === name) {
      request = parsed as unknown as CreateTrainingJobRequest;
      requestSource = 'request.json';
    }
  } catch (err) {
    if (!isAwsError(err, 'NotFound')) throw err;
  }
  const listed = await context.aws.s3.listObjects(filesAt.bucket, prefix);
  return {
    name,
    described,
    tags,
    request,
    requestSource,
    filesAt: { bucket: filesAt.bucket, key: prefix },
    files: listed.map((o) => o.key.slice(prefix.length)).filter((f) => f !== '' && !f.endsWith('/')),
  };
}

/** One of the job's files as text; undefined when it has none of that name. */
export async function readJobFile(
  context: JobContext,
  record: JobRecord,
  file: string,
): Promise<string | undefined> {
  if (!record.files.includes(file)) return undefined;
  return context.aws.s3.getObjectText(record.filesAt.bucket, `${record.filesAt.key}${file}`);
}
