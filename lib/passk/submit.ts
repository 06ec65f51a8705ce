/**
 * Submits a campaign plan through the one submit path: the trainer's source (content-addressed, shared
 * with training jobs), a name (`<prefix>-passk-…`), the plan under `jobs/<job>/`, the job, its job-log row.
 */
import type { AwsClients } from '../aws';
import { submitJob, type JobSubmission, type SubmitListener, type SubmittedJob } from '../submission';
import type { PasskPlan } from './plan';

export function passkSubmission(plan: PasskPlan, jobLogPath: string): JobSubmission {
  const { campaign } = plan.jobPlan;
  return {
    kind: 'pass@k job',
    layout: plan.layout,
    namePrefix: plan.jobNamePrefix,
    submittedAt: plan.submittedAt,
    submitId: plan.submitId,
    reservation: { kind: 'passk' },
    shared: [
      {
        key: plan.layout.sourceKey(plan.source.packed.sha256),
        body: plan.source.packed.gzip,
        contentType: 'application/gzip',
        what: "the trainer's source",
      },
    ],
    files: plan.uploads().map((f) => ({ ...f, contentType: 'application/json' })),
    request: (jobName) => plan.buildRequest(jobName),
    quota: { instanceType: plan.request.instanceType, spot: plan.request.spot },
    jobLog: {
      path: jobLogPath,
      row: (jobName) => ({
        jobName,
        config: `rlvr passk ${campaign.dataset}/${campaign.split} n=${campaign.n}`,
        description:
          plan.request.description ??
          `pass@${campaign.n}: ${campaign.model.label} on ${campaign.dataset}/${campaign.split}${plan.continued ? ` (continues ${plan.continued.from})` : ''}`,
        submitted: plan.submittedAt,
        instance: `${plan.hosts}× ${plan.request.instanceType}${plan.request.spot ? ' (spot)' : ''}`,
        template: 'passk',
        commit: '',
      }),
    },
  };
}

export function submitPassk(
  plan: PasskPlan,
  aws: AwsClients,
  options: { readonly jobLogPath: string; readonly signal?: AbortSignal; readonly listener?: SubmitListener },
): Promise<SubmittedJob> {
  return submitJob(passkSubmission(plan, options.jobLogPath), aws, {
    ...(options.listener ? { listener: options.listener } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
