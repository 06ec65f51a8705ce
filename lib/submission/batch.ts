/**
 * What every batch job kind (an evaluation, a pass@k campaign, any registered) shares below its own
 * planner: the request's fixed parts (the kind's mode, the submit id, the image, no network, no warm
 * pool), its submission through the one submit path, and its job-log row. A kind supplies only what is
 * its own: channels, extra environment and tags, the row's words.
 */
import * as os from 'node:os';
import type { Channel, CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import type { AwsClients } from '../aws';
import { KIND_TAG, modeEnvironment, type JobKind } from '../job-kinds';
import { JOB_ENV, type S3Layout } from '../layout';
import { assembleRequest, OFFLINE_ENVIRONMENT, sanitizeTagValue, type RequestSettings } from './request';
import { submitJob, type JobSubmission, type SubmitListener, type SubmittedJob } from './submit-job';

/** The request options a batch job's plan gives. */
export interface BatchRequestOptions {
  readonly instanceType: string;
  readonly instanceCount: number;
  readonly volumeGb: number;
  readonly spot: boolean;
  readonly maxRetries?: number;
}

/** A batch job's CreateTrainingJob request: the kind's own channels, environment and tags on the shared parts. */
export function batchRequest(
  kind: JobKind,
  o: {
    readonly jobName: string;
    readonly settings: RequestSettings;
    readonly image: string;
    readonly submitId: string;
    readonly channels: readonly Channel[];
    /** The kind's own variables, beside its mode, the submit id and the image. */
    readonly environment?: Readonly<Record<string, string>>;
    /** The kind's own tags, beside its kind and who submitted it. */
    readonly tags?: Readonly<Record<string, string>>;
    readonly options: BatchRequestOptions;
    readonly maxRuntimeSeconds: number;
  },
): CreateTrainingJobRequest {
  return assembleRequest({
    jobName: o.jobName,
    settings: o.settings,
    image: o.image,
    channels: [...o.channels],
    environment: {
      ...modeEnvironment(kind),
      [JOB_ENV.submitId]: o.submitId,
      [JOB_ENV.image]: o.image,
      ...o.environment,
      ...OFFLINE_ENVIRONMENT,
    },
    tags: Object.entries({ [KIND_TAG]: kind.id, 'rlvr:user': os.userInfo().username, ...o.tags }).map(
      ([Key, Value]) => ({ Key, Value: sanitizeTagValue(Value) }),
    ),
    metricDefinitions: [],
    options: {
      instanceType: o.options.instanceType,
      instanceCount: o.options.instanceCount,
      volumeGb: o.options.volumeGb,
      keepAliveSeconds: 0,
      maxRuntimeSeconds: o.maxRuntimeSeconds,
      spot: o.options.spot,
      maxWaitSeconds: undefined,
      maxRetries: o.options.maxRetries,
      // A batch job needs no network: what it reads comes in channels, the Hub is off.
      networkIsolation: true,
    },
  });
}

/** What the one submit path needs of a batch job's plan. */
export interface BatchPlan {
  readonly layout: S3Layout;
  readonly jobNamePrefix: string;
  readonly submittedAt: Date;
  readonly submitId: string;
  readonly hosts: number;
  readonly request: { readonly instanceType: string; readonly spot: boolean; readonly description?: string };
  /** The job's own files under `jobs/<job>/`. */
  uploads(): { readonly file: string; readonly body: string }[];
  buildRequest(jobName: string): CreateTrainingJobRequest;
}

/** A batch job's submission: its files as JSON, its job-log row from the kind's words. */
export function batchSubmission(
  kind: JobKind,
  plan: BatchPlan,
  o: {
    readonly jobLogPath: string;
    /** The job log's config column (`rlvr eval (…)`) and the description when the user gave none. */
    readonly jobLog: { readonly config: string; readonly description: string };
    readonly shared?: JobSubmission['shared'];
  },
): JobSubmission {
  return {
    kind: kind.what,
    layout: plan.layout,
    namePrefix: plan.jobNamePrefix,
    submittedAt: plan.submittedAt,
    submitId: plan.submitId,
    reservation: { kind: kind.id },
    ...(o.shared ? { shared: o.shared } : {}),
    files: plan.uploads().map((f) => ({ ...f, contentType: 'application/json' })),
    request: (jobName) => plan.buildRequest(jobName),
    quota: { instanceType: plan.request.instanceType, spot: plan.request.spot },
    jobLog: {
      path: o.jobLogPath,
      row: (jobName) => ({
        jobName,
        config: o.jobLog.config,
        description: plan.request.description ?? o.jobLog.description,
        submitted: plan.submittedAt,
        instance: `${plan.hosts}× ${plan.request.instanceType}${plan.request.spot ? ' (spot)' : ''}`,
        template: kind.id,
        commit: '',
      }),
    },
  };
}

/** How a batch submit is watched and stopped. */
export interface BatchSubmitOptions {
  readonly jobLogPath: string;
  readonly signal?: AbortSignal;
  readonly listener?: SubmitListener;
}

/** Submits a batch job's submission through the one submit path. */
export function submitBatch(
  submission: JobSubmission,
  aws: AwsClients,
  options: BatchSubmitOptions,
): Promise<SubmittedJob> {
  return submitJob(submission, aws, {
    ...(options.listener ? { listener: options.listener } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
