/**
 * Submits a batch evaluation plan through the one submit path: a name (`<prefix>-eval-…`), the plan
 * and the channels' manifests under `jobs/<job>/`, the job, its job-log row.
 */
import type { AwsClients } from '../aws';
import { EVAL_KIND } from '../job-kinds';
import { batchSubmission, submitBatch, type BatchSubmitOptions, type JobSubmission } from '../submission';
import type { EvalPlan } from './plan';

/** What a submitted eval job is: its name, ARN and where it writes. */
export type EvalSubmitResult = Awaited<ReturnType<typeof submitBatch>>;

/** An eval plan as the one submit path takes it. */
export function evalSubmission(plan: EvalPlan, jobLogPath: string): JobSubmission {
  return batchSubmission(EVAL_KIND, plan, {
    jobLogPath,
    jobLog: {
      config: `rlvr eval (${plan.request.benchmarksFrom})`,
      description: `eval: ${plan.checkpoints.map((c) => c.label).join(', ')} × ${plan.request.benchmarks.map((b) => `${b.task}:${b.numFewshot}`).join(', ')}`,
    },
  });
}

export function submitEval(plan: EvalPlan, aws: AwsClients, options: BatchSubmitOptions) {
  return submitBatch(evalSubmission(plan, options.jobLogPath), aws, options);
}
