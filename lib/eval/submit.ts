/**
 * Submits a batch evaluation plan through the one submit path: a name (`<prefix>-eval-…`), the plan
 * and the channels' manifests under `jobs/<job>/`, the job, its job-log row.
 */
import type { AwsClients } from '../aws';
import { submitJob, type JobSubmission, type SubmitListener, type SubmittedJob } from '../submission';
import type { EvalPlan } from './plan';

export type EvalSubmitResult = SubmittedJob;

/** An eval plan as the one submit path takes it. */
export function evalSubmission(plan: EvalPlan, jobLogPath: string): JobSubmission {
  return {
    kind: 'eval job',
    layout: plan.layout,
    namePrefix: plan.jobNamePrefix,
    submittedAt: plan.submittedAt,
    submitId: plan.submitId,
    reservation: { kind: 'eval' },
    files: plan.uploads().map((f) => ({ ...f, contentType: 'application/json' })),
    request: (jobName) => plan.buildRequest(jobName),
    quota: { instanceType: plan.request.instanceType, spot: plan.request.spot },
    jobLog: {
      path: jobLogPath,
      row: (jobName) => ({
        jobName,
        config: `rlvr eval (${plan.request.benchmarksFrom})`,
        description:
          plan.request.description ??
          `eval: ${plan.checkpoints.map((c) => c.label).join(', ')} × ${plan.request.benchmarks.map((b) => `${b.task}:${b.numFewshot}`).join(', ')}`,
        submitted: plan.submittedAt,
        instance: `${plan.hosts}× ${plan.request.instanceType}${plan.request.spot ? ' (spot)' : ''}`,
        template: 'eval',
        commit: '',
      }),
    },
  };
}

export function submitEval(
  plan: EvalPlan,
  aws: AwsClients,
  options: { readonly jobLogPath: string; readonly signal?: AbortSignal; readonly listener?: SubmitListener },
): Promise<EvalSubmitResult> {
  return submitJob(evalSubmission(plan, options.jobLogPath), aws, {
    ...(options.listener ? { listener: options.listener } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
