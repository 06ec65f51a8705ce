/**
 * `rlvr eval --local`: the same eval job on this machine's Docker engine (lib/local/run.ts), its
 * checkpoints bound where the SageMaker job's channels put them: local folders as they are, S3 folders
 * through the local cache.
 */
import type { AwsClients } from '../aws';
import { cacheFromS3, type Bind, type LocalJob } from '../local';
import type { EvalPlan } from './plan';

export function localJobOfEval(plan: EvalPlan): LocalJob {
  const request = plan.buildRequest(plan.jobName);
  return {
    stem: 'eval',
    instanceCount: plan.hosts,
    networkIsolation: true,
    environment: request.Environment ?? {},
    configFiles: plan.uploads(),
    binds: async (aws: AwsClients | undefined) => {
      const binds: Bind[] = [];
      for (const c of plan.checkpoints) {
        const container = plan.jobPlan.checkpoints.find((p) => p.label === c.label)!.containerPath;
        const host = c.local ?? (await cacheFromS3(aws, c.s3!.bucket, c.s3!.key, `Checkpoint ${c.label}`));
        binds.push({ host, container, readOnly: true, what: `checkpoint ${c.label}` });
      }
      return binds;
    },
  };
}
