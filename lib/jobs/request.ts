import type { Channel, CreateTrainingJobRequest, Tag } from '@aws-sdk/client-sagemaker';
import { formatGpuList } from '../config';
import { channelPath, CHANNELS, CONTAINER, JOB_ENV, JOB_FILES, S3Layout } from '../layout';
import { hasLocalStorage } from '../job-options/instance-types';

export { JOB_ENV };
import { s3Uri, type InputPlan } from './inputs';
import type { JobOptions } from '../job-options/options';

/** The settings a request needs; in a dry-run without AWS, placeholders stand in. */
export interface RequestSettings {
  readonly bucket: string;
  readonly prefix: string;
  readonly roleArn: string;
  readonly subnets?: readonly string[];
  readonly securityGroups?: readonly string[];
  readonly kmsKeyId?: string;
}

export interface RequestInput {
  readonly jobName: string;
  readonly settings: RequestSettings;
  readonly image: string;
  readonly options: JobOptions;
  readonly inputs: InputPlan;
  readonly sourceSha256: string;
  /** Unique per submit: lets a retried create recognise the job it already created. */
  readonly submitId: string;
  readonly runName: string;
  readonly hasEvalConfig: boolean;
  /** The eval config runs benchmarks that execute generated code. */
  readonly codeEval: boolean;
  /** Launcher tags: config path, git commit, user, template, submit id… (values sanitised here). */
  readonly tags: Readonly<Record<string, string>>;
}

/** Tag values allow letters, digits, spaces and `_.:/=+-@` (≤256); anything else becomes `_`. */
export function sanitizeTagValue(value: string): string {
  return value.replace(/[^\p{L}\p{Z}\p{N}_.:/=+\-@]/gu, '_').slice(0, 256);
}

export function s3Channel(
  name: string,
  uri: string,
  mode: 'File' | 'FastFile',
  distribution = 'FullyReplicated',
): Channel {
  return {
    ChannelName: name,
    InputMode: mode,
    DataSource: {
      S3DataSource: {
        S3DataType: 'S3Prefix',
        S3Uri: uri,
        S3DataDistributionType: distribution as 'FullyReplicated',
      },
    },
  };
}

/**
 * Jobs cannot reach the Hub: they fail at once rather than hang on a download, and read what the image
 * cached (lm_eval's datasets and metrics); the usage reports of vLLM and Ray are not attempted.
 */
export const OFFLINE_ENVIRONMENT: Readonly<Record<string, string>> = {
  HF_HUB_OFFLINE: '1',
  HF_DATASETS_OFFLINE: '1',
  TRANSFORMERS_OFFLINE: '1',
  HF_EVALUATE_OFFLINE: '1',
  HF_HUB_DISABLE_TELEMETRY: '1',
  VLLM_NO_USAGE_STATS: '1',
  DO_NOT_TRACK: '1',
  RAY_USAGE_STATS_ENABLED: '0',
};

/** From (config, settings, flags) to the exact CreateTrainingJob input. Pure. */
export function buildCreateTrainingJobRequest(input: RequestInput): CreateTrainingJobRequest {
  const { options, settings, inputs } = input;
  const layout = new S3Layout(settings.bucket, settings.prefix);

  const channels: Channel[] = [
    s3Channel(CHANNELS.config, layout.uri(layout.jobPrefix(input.jobName)), 'File'),
    s3Channel(CHANNELS.code, layout.uri(layout.sourceKey(input.sourceSha256)), 'File'),
    s3Channel(CHANNELS.model, s3Uri(inputs.model.location), options.modelInputMode),
    ...inputs.otherModels.map((m) => s3Channel(m.channel, s3Uri(m.location), options.modelInputMode)),
    ...inputs.datasets.map((d) => s3Channel(d.channel, s3Uri(d.location), 'File')),
    ...inputs.orderFiles.map((o) => s3Channel(o.channel, s3Uri(o.location), 'File')),
  ];

  const environment: Record<string, string> = {
    [JOB_ENV.runName]: input.runName,
    [JOB_ENV.config]: `${channelPath(CHANNELS.config)}/${JOB_FILES.resolvedConfig}`,
    [JOB_ENV.trainGpus]: formatGpuList(options.trainGpus),
    [JOB_ENV.evalGpus]: formatGpuList(options.evalGpus),
    [JOB_ENV.trainerCommand]: options.trainerCommand,
    [JOB_ENV.useRay]: options.useRay ? '1' : '0',
    [JOB_ENV.modelDir]: inputs.model.containerPath,
    [JOB_ENV.datasetsDir]: CONTAINER.dataDir,
    [JOB_ENV.sourceSha256]: input.sourceSha256,
    [JOB_ENV.submitId]: input.submitId,
    [JOB_ENV.image]: input.image,
    ...OFFLINE_ENVIRONMENT,
  };
  if (input.hasEvalConfig) {
    environment[JOB_ENV.evalConfig] = `${channelPath(CHANNELS.config)}/${JOB_FILES.evalConfig}`;
    environment[JOB_ENV.evalWait] = String(options.evalWaitSeconds);
  }
  if (input.codeEval) environment.HF_ALLOW_CODE_EVAL = '1';
  if (options.instanceCount > 1)
    environment[JOB_ENV.clusterJoinTimeout] = String(options.clusterJoinTimeoutSeconds);

  const userTags = Object.entries(options.tags).map(([Key, Value]) => ({
    Key,
    Value: sanitizeTagValue(Value),
  }));
  const tags: Tag[] = [
    ...Object.entries(input.tags).map(([Key, Value]) => ({ Key, Value: sanitizeTagValue(Value) })),
    ...userTags.filter((t) => !(t.Key in input.tags)),
  ];

  return assembleRequest({
    jobName: input.jobName,
    settings,
    image: input.image,
    channels,
    environment,
    tags,
    metricDefinitions: options.metricDefinitions.map((m) => ({ Name: m.Name, Regex: m.Regex })),
    options,
  });
}

/** What every job the launcher creates (training, evaluation) is made of. */
export interface RequestParts {
  readonly jobName: string;
  readonly settings: RequestSettings;
  readonly image: string;
  readonly channels: Channel[];
  readonly environment: Record<string, string>;
  readonly tags: Tag[];
  readonly metricDefinitions: { Name: string; Regex: string }[];
  readonly options: Pick<
    JobOptions,
    | 'instanceType'
    | 'instanceCount'
    | 'volumeGb'
    | 'keepAliveSeconds'
    | 'maxRuntimeSeconds'
    | 'spot'
    | 'maxWaitSeconds'
    | 'maxRetries'
    | 'networkIsolation'
  >;
}

/** The CreateTrainingJob request from its parts, with the launcher's secure defaults. Pure. */
export function assembleRequest(parts: RequestParts): CreateTrainingJobRequest {
  const { options, settings } = parts;
  const layout = new S3Layout(settings.bucket, settings.prefix);
  const request: CreateTrainingJobRequest = {
    TrainingJobName: parts.jobName,
    RoleArn: settings.roleArn,
    AlgorithmSpecification: {
      TrainingImage: parts.image,
      TrainingInputMode: 'File',
      MetricDefinitions: parts.metricDefinitions,
      EnableSageMakerMetricsTimeSeries: true,
    },
    InputDataConfig: parts.channels,
    OutputDataConfig: {
      S3OutputPath: layout.uri(layout.outputPath()),
      ...(settings.kmsKeyId ? { KmsKeyId: settings.kmsKeyId } : {}),
    },
    CheckpointConfig: {
      S3Uri: layout.uri(layout.checkpointsPrefix(parts.jobName)),
      LocalPath: CONTAINER.checkpointsDir,
    },
    ResourceConfig: {
      InstanceType: options.instanceType as NonNullable<
        CreateTrainingJobRequest['ResourceConfig']
      >['InstanceType'],
      InstanceCount: options.instanceCount,
      VolumeSizeInGB: options.volumeGb,
      // Instances with local storage encrypt it in hardware and refuse a volume key.
      ...(settings.kmsKeyId && !hasLocalStorage(options.instanceType)
        ? { VolumeKmsKeyId: settings.kmsKeyId }
        : {}),
      ...(options.keepAliveSeconds > 0 ? { KeepAlivePeriodInSeconds: options.keepAliveSeconds } : {}),
    },
    StoppingCondition: {
      MaxRuntimeInSeconds: options.maxRuntimeSeconds,
      ...(options.spot ? { MaxWaitTimeInSeconds: options.maxWaitSeconds ?? options.maxRuntimeSeconds } : {}),
    },
    ...(options.maxRetries !== undefined
      ? { RetryStrategy: { MaximumRetryAttempts: options.maxRetries } }
      : {}),
    EnableManagedSpotTraining: options.spot,
    EnableNetworkIsolation: options.networkIsolation,
    // Always: it costs nothing on one instance, and a stack that requires it (IAM sees no instance
    // count) then admits every job.
    EnableInterContainerTrafficEncryption: true,
    Environment: parts.environment,
    Tags: parts.tags,
  };
  if (settings.subnets?.length || settings.securityGroups?.length) {
    request.VpcConfig = {
      Subnets: [...(settings.subnets ?? [])],
      SecurityGroupIds: [...(settings.securityGroups ?? [])],
    };
  }
  return request;
}
