/**
 * The frame of the image's batch modes (eval, passk): no trainer, processes of their own. SIGTERM (a stop,
 * spot) signals every running process and lets the mode end as stopped; any failure is written to the
 * failure file SageMaker reports and the mode exits 1.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { signalGroup, type Started } from './process';
import { JobFailure, type ContainerJob } from './setup';

export interface BatchRun {
  /** The processes running now: a stop signals each. */
  readonly running: Set<Started>;
  readonly stopping: () => boolean;
}

export async function runBatchMode(
  job: ContainerJob,
  signal: AbortSignal | undefined,
  mode: { readonly name: string; readonly onStop: string },
  body: (run: BatchRun) => Promise<number>,
): Promise<number> {
  let stopRequested = false;
  const running = new Set<Started>();
  const onTerm = () => {
    stopRequested = true;
    job.say(`SIGTERM: ${mode.onStop}`);
    for (const p of running) signalGroup(p, 'SIGTERM');
  };
  if (signal?.aborted) onTerm();
  signal?.addEventListener('abort', onTerm);
  try {
    return await body({ running, stopping: () => stopRequested });
  } catch (err) {
    const failure =
      err instanceof JobFailure ? err : new JobFailure(`${mode.name} mode error: ${(err as Error).message}`);
    fs.mkdirSync(path.dirname(job.failureFile), { recursive: true });
    fs.writeFileSync(job.failureFile, `${failure.message}\n`);
    job.say(`FAILED: ${failure.message}`);
    return 1;
  } finally {
    signal?.removeEventListener('abort', onTerm);
  }
}
