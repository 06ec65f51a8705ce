import type { Channel, CreateTrainingJobRequest, Tag } from '@aws-sdk/client-sagemaker';
import {
  assembleRequest,
  fileSystemChannel,
  OFFLINE_ENVIRONMENT,
  s3Channel,
  sanitizeTagValue,
  type RequestSettings,
} from '../submission';
import { formatGpuList } from '../config';
import { channelPath, CHANNELS, CONTAINER, JOB_ENV, JOB_FILES, S3Layout } from '../layout';

import { s3Uri, type InputPlan } from './inputs';
import type { JobOptions } from '../job-options';

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
  /**
   * The file system every host mounts (a multi-host job of a trainer whose hosts share a folder), and
   * the job's network isolation with it (shared_fs_network_isolation); absent for every other job.
   */
  readonly sharedFileSystem?: {
    readonly channel: string;
    readonly fileSystemId: string;
    readonly directoryPath: string;
    readonly networkIsolation: boolean;
  };
}

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
  const shared = input.sharedFileSystem;
  if (shared) channels.push(fileSystemChannel(shared.channel, shared.fileSystemId, shared.directoryPath));

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
    options: shared ? { ...options, networkIsolation: shared.networkIsolation } : options,
  });
}
