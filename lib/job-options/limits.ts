import type { CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import type { Problem } from '../errors';
import { isValidTrainingJobName, SETTINGS_ENV } from '../layout';
import { MAX_KEEP_ALIVE_SECONDS, MAX_RETRIES, MAX_RUNTIME_SECONDS } from './options';

/** CreateTrainingJob's limits, checked before sending so the user gets a clear error. */
export const LIMITS = {
  hyperParameters: 100,
  hyperParameterKey: 256,
  hyperParameterValue: 2500,
  environment: 100,
  environmentKey: 512,
  environmentValue: 512,
  tags: 50,
  tagKey: 128,
  tagValue: 256,
  channels: 20,
  channelName: 64,
  metricDefinitions: 40,
  metricRegex: 500,
  metricName: 255,
  trainingImage: 255,
  securityGroups: 5,
  subnets: 16,
} as const;

const ENV_KEY = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const CHANNEL_NAME = /^[A-Za-z0-9.\-_]+$/;
const TAG_KEY = /^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$/u;

/** Records one problem: where in the request, what is wrong, and how to fix it. */
type AddProblem = (where: string, message: string, hint?: string) => void;

function checkNameAndImage(request: CreateTrainingJobRequest, add: AddProblem): void {
  if (!isValidTrainingJobName(request.TrainingJobName ?? '')) {
    add(
      'job name',
      `"${request.TrainingJobName}" is not a valid training job name (1–63 of [a-zA-Z0-9-], starting and ending alphanumeric)`,
      'Shorten or fix the job-name prefix.',
    );
  }
  const image = request.AlgorithmSpecification?.TrainingImage ?? '';
  if (image.length === 0 || image.length > LIMITS.trainingImage) {
    add('image', `the image URI is ${image.length} characters (SageMaker takes 1–${LIMITS.trainingImage})`);
  }
}

function checkHyperParameters(request: CreateTrainingJobRequest, add: AddProblem): void {
  const hp = Object.entries(request.HyperParameters ?? {});
  if (hp.length > LIMITS.hyperParameters)
    add('HyperParameters', `${hp.length} entries (limit ${LIMITS.hyperParameters})`);
  for (const [k, v] of hp) {
    if (k.length > LIMITS.hyperParameterKey)
      add(`HyperParameters.${k}`, `key longer than ${LIMITS.hyperParameterKey}`);
    if (v.length > LIMITS.hyperParameterValue)
      add(`HyperParameters.${k}`, `value longer than ${LIMITS.hyperParameterValue}`);
  }
}

function checkEnvironment(request: CreateTrainingJobRequest, add: AddProblem): void {
  const env = Object.entries(request.Environment ?? {});
  if (env.length > LIMITS.environment)
    add('Environment', `${env.length} variables (limit ${LIMITS.environment})`);
  for (const [k, v] of env) {
    if (!ENV_KEY.test(k) || k.length > LIMITS.environmentKey)
      add(`Environment.${k}`, 'not a valid variable name');
    if (v.length > LIMITS.environmentValue) {
      add(
        `Environment.${k}`,
        `value is ${v.length} characters (limit ${LIMITS.environmentValue})`,
        'Shorten it (e.g. the trainer command).',
      );
    }
  }
}

function checkTags(request: CreateTrainingJobRequest, add: AddProblem): void {
  const tags = request.Tags ?? [];
  if (tags.length > LIMITS.tags)
    add('Tags', `${tags.length} tags (limit ${LIMITS.tags})`, 'Remove some launcher.tags.');
  const tagKeys = new Set<string>();
  for (const t of tags) {
    if (!t.Key || t.Key.length > LIMITS.tagKey || !TAG_KEY.test(t.Key) || t.Key.startsWith('aws:')) {
      add(
        `Tags.${t.Key}`,
        `not a valid tag key (1–${LIMITS.tagKey} letters, digits, spaces, _.:/=+-@; not aws:)`,
      );
    }
    if ((t.Value ?? '').length > LIMITS.tagValue)
      add(`Tags.${t.Key}`, `value longer than ${LIMITS.tagValue}`);
    if (tagKeys.has(t.Key ?? '')) add(`Tags.${t.Key}`, 'given twice');
    tagKeys.add(t.Key ?? '');
  }
}

function checkChannels(request: CreateTrainingJobRequest, add: AddProblem): void {
  const channels = request.InputDataConfig ?? [];
  if (channels.length < 1 || channels.length > LIMITS.channels) {
    add(
      'InputDataConfig',
      `${channels.length} channels (SageMaker takes 1–${LIMITS.channels})`,
      'Use fewer datasets or order files in one job.',
    );
  }
  const channelNames = new Set<string>();
  for (const c of channels) {
    const name = c.ChannelName ?? '';
    if (!CHANNEL_NAME.test(name) || name.length > LIMITS.channelName)
      add(`channel ${name}`, 'not a valid channel name');
    if (channelNames.has(name)) add(`channel ${name}`, 'two channels have this name');
    channelNames.add(name);
  }
}

function checkMetrics(request: CreateTrainingJobRequest, add: AddProblem): void {
  const metrics = request.AlgorithmSpecification?.MetricDefinitions ?? [];
  if (metrics.length > LIMITS.metricDefinitions)
    add('MetricDefinitions', `${metrics.length} (limit ${LIMITS.metricDefinitions})`);
  for (const m of metrics) {
    if ((m.Regex ?? '').length > LIMITS.metricRegex)
      add(`metric ${m.Name}`, `regex longer than ${LIMITS.metricRegex}`);
    if ((m.Name ?? '').length > LIMITS.metricName)
      add(`metric ${m.Name}`, `name longer than ${LIMITS.metricName}`);
  }
}

/** Runtime, spot wait and warm-pool keep-alive. */
function checkTimes(request: CreateTrainingJobRequest, add: AddProblem): void {
  const stop = request.StoppingCondition ?? {};
  if (!stop.MaxRuntimeInSeconds || stop.MaxRuntimeInSeconds > MAX_RUNTIME_SECONDS) {
    add('MaxRuntimeInSeconds', `must be 1–${MAX_RUNTIME_SECONDS} (28 days)`);
  }
  if (request.EnableManagedSpotTraining) {
    if (!stop.MaxWaitTimeInSeconds || stop.MaxWaitTimeInSeconds < (stop.MaxRuntimeInSeconds ?? 0)) {
      add('MaxWaitTimeInSeconds', 'spot training needs max_wait ≥ max_runtime');
    }
  } else if (stop.MaxWaitTimeInSeconds !== undefined) {
    add('MaxWaitTimeInSeconds', 'applies only to spot training');
  }
  const keepAlive = request.ResourceConfig?.KeepAlivePeriodInSeconds;
  if (keepAlive !== undefined && (keepAlive < 0 || keepAlive > MAX_KEEP_ALIVE_SECONDS)) {
    add('KeepAlivePeriodInSeconds', `must be 0–${MAX_KEEP_ALIVE_SECONDS}`);
  }
}

/** RetryStrategy, when set: SageMaker retries a job failed by an internal error 1–30 times. */
function checkRetries(request: CreateTrainingJobRequest, add: AddProblem): void {
  if (!request.RetryStrategy) return;
  const n = request.RetryStrategy.MaximumRetryAttempts;
  if (n === undefined || !Number.isInteger(n) || n < MAX_RETRIES.min || n > MAX_RETRIES.max) {
    add(
      'RetryStrategy.MaximumRetryAttempts',
      `must be ${MAX_RETRIES.min}–${MAX_RETRIES.max}, got ${String(n)}`,
      'Set --max-retries (launcher.max_retries) to a whole number from 1 to 30.',
    );
  }
}

function checkVpc(request: CreateTrainingJobRequest, add: AddProblem): void {
  if (!request.VpcConfig) return;
  const sg = request.VpcConfig.SecurityGroupIds ?? [];
  const sn = request.VpcConfig.Subnets ?? [];
  if (sg.length < 1 || sg.length > LIMITS.securityGroups) {
    add(
      'VpcConfig.SecurityGroupIds',
      `${sg.length} security groups (SageMaker takes 1–${LIMITS.securityGroups})`,
      `Set ${SETTINGS_ENV.securityGroups} with the subnets.`,
    );
  }
  if (sn.length < 1 || sn.length > LIMITS.subnets) {
    add(
      'VpcConfig.Subnets',
      `${sn.length} subnets (SageMaker takes 1–${LIMITS.subnets})`,
      `Set ${SETTINGS_ENV.subnets} with the security groups.`,
    );
  }
}

export function checkRequestLimits(request: CreateTrainingJobRequest): Problem[] {
  const problems: Problem[] = [];
  const add: AddProblem = (where, message, hint) => problems.push({ where, message, hint });
  for (const check of [
    checkNameAndImage,
    checkHyperParameters,
    checkEnvironment,
    checkTags,
    checkChannels,
    checkMetrics,
    checkTimes,
    checkRetries,
    checkVpc,
  ])
    check(request, add);
  return problems;
}
