/**
 * The CreateTrainingJob request of any job the launcher creates (training, evaluation), from its parts,
 * with the launcher's secure defaults. Pure.
 */
import type { Channel, CreateTrainingJobRequest, Tag } from '@aws-sdk/client-sagemaker';
import { hasLocalStorage, type JobOptions } from '../job-options';
import { CONTAINER, S3Layout } from '../layout';
import type { Placeholders } from './placeholders';

/** The settings a request needs; in a dry-run without AWS, placeholders stand in. */
export interface RequestSettings {
  readonly bucket: string;
  readonly prefix: string;
  readonly roleArn: string;
  readonly subnets?: readonly string[];
  readonly securityGroups?: readonly string[];
  readonly kmsKeyId?: string;
}

/**
 * A request's settings from the launcher's: the layout's bucket and prefix, the role (a marked placeholder
 * in a dry-run without AWS), the VPC and the key.
 */
export function requestSettingsOf(
  values: {
    readonly roleArn?: string;
    readonly subnets?: readonly string[];
    readonly securityGroups?: readonly string[];
    readonly kmsKeyId?: string;
  },
  layout: S3Layout,
  placeholders: Placeholders,
): RequestSettings {
  return {
    bucket: layout.bucket,
    prefix: layout.root,
    roleArn: placeholders.value('roleArn', values.roleArn),
    subnets: values.subnets,
    securityGroups: values.securityGroups,
    kmsKeyId: values.kmsKeyId,
  };
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
 * A channel mounting an EFS file system on every host, read-write (`FileSystemAccessMode: 'rw'`): the
 * hosts of a multi-host job share what is written there. It needs the job's VpcConfig (the file
 * system's mount targets are in the VPC) and runs in File mode, as SageMaker requires of file systems.
 */
export function fileSystemChannel(name: string, fileSystemId: string, directoryPath: string): Channel {
  return {
    ChannelName: name,
    InputMode: 'File',
    DataSource: {
      FileSystemDataSource: {
        FileSystemId: fileSystemId,
        FileSystemType: 'EFS',
        DirectoryPath: directoryPath,
        FileSystemAccessMode: 'rw',
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
