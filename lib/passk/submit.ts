/**
 * Submits a campaign plan through the one submit path: the trainer's source (content-addressed, shared
 * with training jobs), a name (`<prefix>-passk-…`), the plan under `jobs/<job>/`, the job, its job-log row.
 */
import type { AwsClients } from '../aws';
import { PASSK_KIND } from '../job-kinds';
import { batchSubmission, submitBatch, type BatchSubmitOptions, type JobSubmission } from '../submission';
import type { PasskPlan } from './plan';

export function passkSubmission(plan: PasskPlan, jobLogPath: string): JobSubmission {
  const { campaign } = plan.jobPlan;
  return batchSubmission(PASSK_KIND, plan, {
    jobLogPath,
    shared: [
      {
        key: plan.layout.sourceKey(plan.source.packed.sha256),
        body: plan.source.packed.gzip,
        contentType: 'application/gzip',
        what: "the trainer's source",
      },
    ],
    jobLog: {
      config: `rlvr passk ${campaign.dataset}/${campaign.split} n=${campaign.n}`,
      description: `pass@${campaign.n}: ${campaign.model.label} on ${campaign.dataset}/${campaign.split}${plan.continued ? ` (continues ${plan.continued.from})` : ''}`,
    },
  });
}

export function submitPassk(plan: PasskPlan, aws: AwsClients, options: BatchSubmitOptions) {
  return submitBatch(passkSubmission(plan, options.jobLogPath), aws, options);
}
