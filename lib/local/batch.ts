/**
 * A batch job kind's plan (an evaluation, a pass@k campaign, any registered) in local Docker: the
 * request's environment, the plan's files in the config channel, no network, the kind's own channels
 * bound by the kind; the image must be one this machine has.
 */
import type { JobKind } from '../job-kinds';
import type { BatchPlan } from '../submission';
import { UserError } from '../errors';
import type { AwsClients } from '../aws';
import { runLocal, type Bind, type LocalJob, type LocalRunOptions, type LocalRunResult } from './run';

/** What a local run needs of a batch plan beyond what it submits with. */
export interface LocalBatchPlan extends BatchPlan {
  readonly jobName: string;
  readonly image: string;
  /** Settings that stand in for ones not resolved (`image` among them: no local image named). */
  readonly placeholders: readonly string[];
  readonly request: BatchPlan['request'] & { readonly local?: { readonly gpus?: readonly number[] } };
}

/** The plan as a local job: the kind names its run folder; its channels are its own. */
export function localBatchJob(
  kind: JobKind,
  plan: LocalBatchPlan,
  own: {
    readonly binds: (aws: AwsClients | undefined) => Promise<Bind[]>;
    /** The trainer's source, mounted where the job unpacks it. */
    readonly sourceRoot?: string;
  },
): LocalJob {
  const request = plan.buildRequest(plan.jobName);
  return {
    stem: kind.id,
    instanceCount: plan.hosts,
    networkIsolation: true,
    environment: request.Environment ?? {},
    configFiles: plan.uploads(),
    ...(own.sourceRoot !== undefined ? { sourceRoot: own.sourceRoot } : {}),
    binds: own.binds,
  };
}

/** A local run needs an image this machine has; `hint` says how to name one for this kind. */
export function requireLocalImage(plan: Pick<LocalBatchPlan, 'placeholders'>, hint: string): void {
  if (plan.placeholders.includes('image')) throw new UserError(`--local needs ${hint}`, 'NoImage');
}

/** Runs a batch job locally on the GPUs its request names. */
export function runBatchLocally(
  job: LocalJob,
  plan: LocalBatchPlan,
  options: Omit<LocalRunOptions, 'job' | 'image' | 'gpus'>,
): Promise<LocalRunResult> {
  return runLocal({ ...options, job, image: plan.image, gpus: plan.request.local!.gpus });
}
