import type { JobContext } from '../aws';
import type { ProgressListener } from '../progress';
import { jobStatus, type JobStatusReport } from './inspect';
import { watchJob } from './watch';

export interface WaitResult {
  readonly jobName: string;
  /** SageMaker's final status. */
  readonly status: string;
  readonly failureReason: string | undefined;
  /** The post-job check: what is wrong with a job that ended (no checkpoints, …). */
  readonly report: JobStatusReport;
  /** Completed, with what a completed job must leave behind. */
  readonly ok: boolean;
}

/**
 * `submit --wait`: reports status transitions and log lines until the job ends, then the post-job
 * verdict; ok only for Completed with checkpoints.
 */
export async function waitForJob(
  context: JobContext,
  jobName: string,
  options: { readonly pollMs: number; readonly onEvent?: ProgressListener },
): Promise<WaitResult> {
  const watch = watchJob(context, jobName, { follow: true, statusEvents: true, pollMs: options.pollMs });
  let next = await watch.next();
  while (!next.done) {
    options.onEvent?.(next.value);
    next = await watch.next();
  }
  const final = next.value;
  const report = await jobStatus(context, jobName);
  const status = final.TrainingJobStatus ?? 'Unknown';
  return {
    jobName,
    status,
    failureReason: final.FailureReason,
    report,
    ok: status === 'Completed' && !report.problem,
  };
}
