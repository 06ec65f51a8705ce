/**
 * `rlvr diff <jobA> <jobB>`: what differs between two jobs — the config the trainer read (flattened
 * dotted keys), how they ran (instance, runtime, spot, volume, retries, isolation, environment), image,
 * source archive, input channels and eval config — from each job's request and files (job-record.ts).
 */
import { parse } from 'yaml';
import type { CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import type { JobContext } from '../aws';
import { UserError } from '../errors';
import { CHANNELS, JOB_ENV, JOB_FILES } from '../layout';
import { readJobFile, readJobRecord, type JobRecord } from './job-record';

export type DiffSection = 'config' | 'options' | 'image' | 'source' | 'channels' | 'eval config';

export interface JobDifference {
  readonly section: DiffSection;
  readonly key: string;
  /** Undefined: absent in that job. */
  readonly a: unknown;
  readonly b: unknown;
}

export interface JobDiff {
  readonly a: string;
  readonly b: string;
  readonly identical: boolean;
  readonly differences: readonly JobDifference[];
  /** What could not be compared (a job without a resolved config, …). */
  readonly notes: readonly string[];
}

/** Every leaf of a parsed YAML/JSON value by dotted path (`roles.0.config.model`); `{}` and `[]` are leaves. */
export function flattenKeys(
  value: unknown,
  prefix = '',
  out: Record<string, unknown> = {},
): Record<string, unknown> {
  const isContainer = value !== null && typeof value === 'object';
  const entries = isContainer ? Object.entries(value as Record<string, unknown>) : [];
  if (!isContainer || entries.length === 0) {
    if (prefix !== '') out[prefix] = value;
    return out;
  }
  for (const [k, v] of entries) flattenKeys(v, prefix ? `${prefix}.${k}` : k, out);
  return out;
}

/**
 * How a job ran, by name: everything in its request but what differs for every job by construction
 * (its name, the URIs holding its name, its submit id, its tags).
 */
export function runFacts(request: CreateTrainingJobRequest): Record<DiffSection, Record<string, unknown>> {
  const r = request.ResourceConfig;
  const s = request.StoppingCondition;
  const options: Record<string, unknown> = {
    'instance type': r?.InstanceType,
    'instance count': r?.InstanceCount,
    'volume GB': r?.VolumeSizeInGB,
    'keep alive seconds': r?.KeepAlivePeriodInSeconds,
    'max runtime seconds': s?.MaxRuntimeInSeconds,
    'max wait seconds': s?.MaxWaitTimeInSeconds,
    spot: request.EnableManagedSpotTraining,
    'max retries': request.RetryStrategy?.MaximumRetryAttempts,
    'network isolation': request.EnableNetworkIsolation,
    'inter-container encryption': request.EnableInterContainerTrafficEncryption,
    role: request.RoleArn,
    subnets: request.VpcConfig?.Subnets?.join(','),
    'security groups': request.VpcConfig?.SecurityGroupIds?.join(','),
    'output path': request.OutputDataConfig?.S3OutputPath,
    'metric definitions': request.AlgorithmSpecification?.MetricDefinitions
      ? JSON.stringify(request.AlgorithmSpecification.MetricDefinitions)
      : undefined,
  };
  for (const [k, v] of Object.entries(request.Environment ?? {}))
    if (k !== JOB_ENV.submitId && k !== JOB_ENV.sourceSha256 && k !== JOB_ENV.image)
      options[`environment ${k}`] = v;
  const channels: Record<string, unknown> = {};
  let source: string | undefined = request.Environment?.[JOB_ENV.sourceSha256];
  for (const c of request.InputDataConfig ?? []) {
    if (c.ChannelName === CHANNELS.config) continue;
    const s3 = c.DataSource?.S3DataSource;
    const fs = c.DataSource?.FileSystemDataSource;
    const where =
      s3?.S3Uri ?? (fs ? `${fs.FileSystemType}:${fs.FileSystemId}${fs.DirectoryPath}` : undefined);
    if (c.ChannelName === CHANNELS.code) {
      source ??= where;
      continue;
    }
    channels[c.ChannelName!] = `${where}${c.InputMode ? ` (${c.InputMode})` : ''}`;
  }
  return {
    config: {},
    options,
    image: { image: request.AlgorithmSpecification?.TrainingImage },
    source: { 'source sha256': source },
    channels,
    'eval config': {},
  };
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function compare(
  section: DiffSection,
  a: Record<string, unknown>,
  b: Record<string, unknown>,
): JobDifference[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return keys.filter((k) => !sameValue(a[k], b[k])).map((key) => ({ section, key, a: a[key], b: b[key] }));
}

/** Only the keys that are set (an absent option and one reported as undefined are the same). */
function defined(facts: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(facts).filter(([, v]) => v !== undefined));
}

async function parsedFile(context: JobContext, record: JobRecord, file: string): Promise<unknown> {
  const text = await readJobFile(context, record, file);
  return text === undefined ? undefined : (parse(text) as unknown);
}

/** What differs between two jobs; identical when nothing does. Unknown job: UserError (exit 2). */
export async function diffJobs(context: JobContext, a: string, b: string): Promise<JobDiff> {
  // Both looked up before either failure is said: two unknown names are named together.
  const [sa, sb] = await Promise.allSettled([readJobRecord(context, a), readJobRecord(context, b)]);
  const failed = [sa, sb].filter((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed.length === 2 && failed.every((f) => f.reason instanceof UserError))
    throw new UserError(failed.map((f) => (f.reason as Error).message).join('\n'), 'NoSuchJob');
  if (failed.length > 0) throw failed[0].reason;
  const ra = (sa as PromiseFulfilledResult<JobRecord>).value;
  const rb = (sb as PromiseFulfilledResult<JobRecord>).value;
  const notes: string[] = [];
  const differences: JobDifference[] = [];
  for (const [section, file] of [
    ['config', JOB_FILES.resolvedConfig],
    ['eval config', JOB_FILES.evalConfig],
  ] as const) {
    const [ca, cb] = await Promise.all([parsedFile(context, ra, file), parsedFile(context, rb, file)]);
    if (section === 'config')
      for (const [job, c] of [
        [a, ca],
        [b, cb],
      ] as const)
        if (c === undefined) notes.push(`${job} has no ${file}: its config is not compared`);
    if (section === 'config' && (ca === undefined || cb === undefined)) continue;
    differences.push(...compare(section, flattenKeys(ca ?? {}), flattenKeys(cb ?? {})));
  }
  const fa = runFacts(ra.request);
  const fb = runFacts(rb.request);
  for (const section of ['options', 'image', 'source', 'channels'] as const)
    differences.push(...compare(section, defined(fa[section]), defined(fb[section])));
  return { a, b, identical: differences.length === 0, differences, notes };
}
