/**
 * `rlvr eval --local`: the same eval job on this machine's Docker engine (lib/local), its checkpoints
 * bound where the SageMaker job's channels put them: local folders as they are, S3 folders through the
 * local cache.
 */
import type { AwsClients } from '../aws';
import type { ResultsTable } from '../eval-records';
import { EVAL_KIND } from '../job-kinds';
import { cacheFromS3, localBatchJob, requireLocalImage as requireImage, runBatchLocally } from '../local';
import type { Bind, LocalJob, LocalRunOptions, LocalRunResult } from '../local';
import type { EvalPlan } from './plan';
import { localRunTable } from './tables';

export function localJobOfEval(plan: EvalPlan): LocalJob {
  return localBatchJob(EVAL_KIND, plan, {
    binds: async (aws: AwsClients | undefined) => {
      const binds: Bind[] = [];
      for (const c of plan.checkpoints) {
        const container = plan.jobPlan.checkpoints.find((p) => p.label === c.label)!.containerPath;
        const host = c.local ?? (await cacheFromS3(aws, c.s3!.bucket, c.s3!.key, `Checkpoint ${c.label}`));
        binds.push({ host, container, readOnly: true, what: `checkpoint ${c.label}` });
      }
      return binds;
    },
  });
}

/** A local run needs an image this machine has: named, or found from a training job through AWS. */
export function requireLocalImage(plan: EvalPlan): void {
  requireImage(
    plan,
    '--image (a local image rlvr built), or a training job among --checkpoints with AWS access to find its image',
  );
}

/** Runs the plan's units in local Docker and reads the table of the run (and of the units it skipped). */
export async function runEvalLocally(
  plan: EvalPlan,
  options: Omit<LocalRunOptions, 'job' | 'image' | 'gpus'>,
): Promise<{ readonly result: LocalRunResult; readonly table: ResultsTable }> {
  requireLocalImage(plan);
  const result = await runBatchLocally(localJobOfEval(plan), plan, options);
  return { result, table: localRunTable(plan, result.runDir) };
}
