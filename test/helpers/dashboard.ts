import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DashboardData } from '../../lib/dashboard/data';
import { jobViews } from '../../lib/dashboard/jobs';
import { startLive, type Live } from '../../lib/dashboard/live';
import { startServer, type DashboardServer } from '../../lib/dashboard/server';
import { pyJson, writeTrace } from './traces';

/*
 * A results folder as the dashboard finds it on a researcher's machine: a training run with the
 * watcher's eval summary (steps 100, 200) and an eval job's results about its checkpoints; a sweep of 4
 * runs (SageMaker's facts kept by the dashboard: sweep id and overrides; configs differing in lr); an
 * empty folder; a run without a trace. Traces in the trainer's event format (traces.ts).
 */

const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'eval-results');
export const TRAINING_RUN = 'annotations-adhoc-20260125-192905';
export const EVAL_RUN = 'annotations-adhoc-20260126-090000-eval';
export const SWEEP_ID = 'sweep-20261124-010000';
export const SWEEP_LRS = [1e-6, 2e-6, 5e-6, 1e-5];
export const sweepRun = (i: number): string => `annotations-adhoc-20261124-01000${i}`;

function rollouts(dir: string, steps: number): void {
  const r: string[] = [];
  const s: string[] = [];
  for (let step = 1; step <= steps; step++) {
    for (let k = 0; k < 2; k++) {
      const id = `p${step}-${k}`;
      // rollout_logger.py writes json.dumps (Python's spacing); sample_logger.py too
      r.push(
        pyJson({
          prompt_id: id,
          prompt: `What is ${step} + ${k}?`,
          completions: [`${step + k}`, 'I do not know'],
          rewards: [1, 0],
          generated_at_version: step - 1,
        }),
      );
      s.push(pyJson({ event: 'buffered', ts: step * 30 - 5, prompt_id: id, version: step - 1 }));
      s.push(JSON.stringify({ event: 'trained', ts: step * 30, prompt_id: id, trained_at_step: step }));
    }
  }
  fs.writeFileSync(path.join(dir, 'rollouts.jsonl'), `${r.join('\n')}\n`);
  fs.writeFileSync(path.join(dir, 'samples.jsonl'), `${s.join('\n')}\n`);
}

function config(lr: number): string {
  return `model: Qwen/Qwen3-1.7B-Base\ntraining:\n  lr: ${lr}\n  beta: 0.01\nrlvr:\n  instance_type: ml.p4d.24xlarge\n`;
}

export interface ResultsFixture {
  readonly root: string;
  readonly trainingTrace: string;
  readonly sweepTraces: string[];
}

export function makeResultsFixture(
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-dash-')),
): ResultsFixture {
  const training = path.join(root, TRAINING_RUN);
  fs.mkdirSync(path.join(training, 'traces'), { recursive: true });
  const trainingTrace = path.join(training, 'traces', 'trace.jsonl');
  writeTrace(trainingTrace, { steps: 200, batch: 4, bufferEvents: 6, stepSeconds: 20 });
  rollouts(path.join(training, 'traces'), 200);
  fs.writeFileSync(path.join(training, 'config.yaml'), config(1e-6));
  fs.writeFileSync(path.join(training, 'RESULTS.md'), '# Results\n\ngsm8k 0.76 at step 200\n');
  fs.writeFileSync(path.join(training, 'run.json'), JSON.stringify({ job: TRAINING_RUN, attempts: 1 }));
  fs.mkdirSync(path.join(training, 'checkpoints', 'qwen3_gsm8k_grpo_final'), { recursive: true });
  fs.cpSync(path.join(FIXTURES, 'training-run', 'evals'), path.join(training, 'evals'), { recursive: true });
  fs.writeFileSync(
    path.join(training, '.rlvr-job.json'),
    JSON.stringify({
      status: 'Completed',
      instanceType: 'ml.p4d.24xlarge',
      instanceCount: 1,
      description: 'gsm8k baseline',
    }),
  );
  fs.cpSync(path.join(FIXTURES, 'eval-run'), path.join(root, EVAL_RUN), { recursive: true });
  const sweepTraces = SWEEP_LRS.map((lr, i) => {
    const dir = path.join(root, sweepRun(i));
    fs.mkdirSync(path.join(dir, 'traces'), { recursive: true });
    const trace = path.join(dir, 'traces', 'trace.jsonl');
    writeTrace(trace, { steps: 40, batch: 4, bufferEvents: 6, rewardOffset: i * 0.1 });
    fs.writeFileSync(path.join(dir, 'config.yaml'), config(lr));
    fs.writeFileSync(
      path.join(dir, '.rlvr-job.json'),
      JSON.stringify({
        status: i === 3 ? 'InProgress' : 'Completed',
        instanceType: 'ml.g6e.12xlarge',
        instanceCount: 1,
        sweep: SWEEP_ID,
        overrides: `training.lr=${lr}`,
      }),
    );
    fs.mkdirSync(path.join(dir, 'checkpoints', `run_step40`), { recursive: true });
    return trace;
  });
  fs.mkdirSync(path.join(root, 'annotations-adhoc-20261124-020000'));
  return { root, trainingTrace, sweepTraces };
}

export interface LocalDashboard {
  readonly data: DashboardData;
  readonly server: DashboardServer;
  /** Live over the results folder, with its timers idle: tests call check() themselves. */
  readonly live: Live;
  stop(): Promise<void>;
}

/** The dashboard over a results folder without AWS, as `rlvr dashboard --no-aws` runs it. */
export async function startLocalDashboard(resultsDir: string): Promise<LocalDashboard> {
  const data = new DashboardData({ resultsDir });
  const server = await startServer({
    data,
    jobs: () =>
      jobViews({ resultsDir, stallMinutes: 30, progress: (id) => data.progress(id).catch(() => undefined) }),
  });
  const live = startLive({
    resultsDir,
    pollSeconds: 3600,
    watchMs: 3600_000,
    running: () => [],
    notify: server.notify,
  });
  return {
    data,
    server,
    live,
    stop: async () => {
      live.stop();
      await server.close();
    },
  };
}
