import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { AddTagsCommand } from '@aws-sdk/client-sagemaker';
import type { JobContext } from '../../lib/aws/session';
import { DashboardData } from '../../lib/dashboard/data';
import { jobViews } from '../../lib/dashboard/jobs';
import { startLive } from '../../lib/dashboard/live';
import { JOB_FACTS } from '../../lib/dashboard/runs';
import { submit } from '../../lib/training/submit';
import { openJobContext } from '../../lib/aws';
import { BUCKET, clients } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { makeTrainerRepo } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable } from '../helpers/moto';
import { traceLines } from '../helpers/traces';

/*
 * The jobs view from SageMaker's listing, and Live: a running job's trace kept current from S3 with
 * sync-traces' incremental sync (moto for SageMaker and S3; jobs stay InProgress for 10 minutes).
 */

function trace(steps: number, firstStep = 1): string {
  return [...traceLines({ steps, firstStep, batch: 4, bufferEvents: 6 })].join('');
}

describeWithPeer('moto_server', motoAvailable())('the dashboard with SageMaker (moto)', () => {
  const emulator = useEmulator({ trainingSeconds: 600 });
  let context: JobContext;
  let results: string;

  beforeEach(async () => {
    context = await openJobContext({ settings: {} });
    results = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-dash-live-'));
  });
  afterEach(() => {
    context.close();
    fs.rmSync(results, { recursive: true, force: true });
  });

  it('lists a running job from SageMaker, syncs its trace from S3 by the bytes it grew, and flags it stalled when it stops growing', async () => {
    const repo = makeTrainerRepo();
    const job = await submit(emulator.submitInput(repo.configPath));
    const { s3, sagemaker } = clients(emulator.moto.endpoint);
    await sagemaker.send(
      new AddTagsCommand({
        ResourceArn: job.jobArn,
        Tags: [
          { Key: 'rlvr:sweep', Value: 'sweep-20261124-030000' },
          { Key: 'rlvr:overrides', Value: 'optimizer.lr=1e-6' },
        ],
      }),
    );
    const key = `rlvr-experiments/checkpoints/${job.jobName}/traces/trace.jsonl`;
    const first = trace(20);
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: first }));

    const data = new DashboardData({ resultsDir: results });
    const notified: string[] = [];
    let latest: string[] = [];
    const live = startLive({
      resultsDir: results,
      context,
      pollSeconds: 3600,
      watchMs: 3600_000,
      running: () => latest,
      notify: (event, id) => notified.push(`${event} ${id ?? ''}`.trim()),
    });
    try {
      const view = () =>
        jobViews({
          resultsDir: results,
          context,
          stallMinutes: 30,
          progress: (id) => data.progress(id),
          grewAt: live.grewAt,
        });
      const listed = await view();
      let jobs = listed.jobs;
      expect(listed.aws).toBe('ok');
      expect(jobs).toHaveLength(1);
      expect(jobs[0]).toMatchObject({
        name: job.jobName,
        source: 'sagemaker',
        status: 'InProgress',
        sweep: 'sweep-20261124-030000',
        overrides: 'optimizer.lr=1e-6',
        costFinal: false,
        hasTrace: false,
        s3Checkpoints: { count: 0, latestStep: undefined, final: false },
        flags: [],
      });
      expect(jobs[0].instance).toMatch(/^1× ml\./);

      latest = jobs.filter((j) => j.status === 'InProgress').map((j) => j.name);
      await live.syncNow();
      const local = path.join(results, job.jobName, 'traces', 'trace.jsonl');
      expect(fs.readFileSync(local, 'utf8')).toBe(first);
      expect(notified).toContain('jobs');
      ({ jobs } = await view());
      expect(jobs[0]).toMatchObject({ source: 'sagemaker+local', hasTrace: true, latestStep: 20 });
      // what SageMaker said is kept beside the run, for views without AWS
      expect(JSON.parse(fs.readFileSync(path.join(results, job.jobName, JOB_FACTS), 'utf8'))).toMatchObject({
        sweep: 'sweep-20261124-030000',
        status: 'InProgress',
      });

      await s3.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `rlvr-experiments/checkpoints/${job.jobName}/checkpoints/qwen3_step10/config.json`,
          Body: '{}',
        }),
      );
      const grown = first + trace(5, 21);
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: grown }));
      await live.syncNow();
      expect(fs.readFileSync(local, 'utf8')).toBe(grown);
      expect(notified).toContain(`run ${job.jobName}`);
      const run = (await data.run(job.jobName)) as {
        steps: { last: number };
        index: { lastUpdate: Record<string, unknown> };
      };
      expect(run.steps.last).toBe(25);
      ({ jobs } = await view());
      expect(jobs[0].s3Checkpoints).toEqual({ count: 1, latestStep: 10, final: false });
      // A running job's progress from its trace in S3: step 25 of the config's 200, at 30 s a step.
      expect(jobs[0].progress).toMatchObject({ step: 25, maxSteps: 200, pastMaxRuntime: false });
      expect(jobs[0].progress!.secondsPerStep).toBeCloseTo(30, 6);
      expect(jobs[0].progress!.etaSeconds).toBeCloseTo(175 * 30, 3);
      // the index parsed only the appended bytes (and the 64 before them that prove the rest unchanged)
      expect(run.index.lastUpdate).toEqual({
        bytesRead: grown.length - first.length + 64,
        linesAdded: expect.any(Number),
        rebuilt: false,
      });

      ({ jobs } = await jobViews({
        resultsDir: results,
        context,
        stallMinutes: 30,
        progress: (id) => data.progress(id),
        grewAt: live.grewAt,
        now: Date.now() + 45 * 60_000,
      }));
      expect(jobs[0].flags).toEqual([expect.stringMatching(/^stalled: no trace growth for 4[56] min$/)]);
    } finally {
      live.stop();
    }
  });

  it('shows the local runs with the reason when SageMaker cannot be listed', async () => {
    fs.mkdirSync(path.join(results, 'annotations-adhoc-20261124-040000', 'traces'), { recursive: true });
    fs.writeFileSync(
      path.join(results, 'annotations-adhoc-20261124-040000', 'traces', 'trace.jsonl'),
      trace(3),
    );
    const data = new DashboardData({ resultsDir: results });
    // SageMaker answers, but this caller may not list jobs
    const broken = await openJobContext({
      settings: {},
      configureClients: (client: unknown) => {
        const c = client as {
          middlewareStack?: { add: (m: unknown, o: unknown) => void };
          constructor: { name: string };
        };
        if (c.constructor.name !== 'SageMakerClient') return;
        c.middlewareStack!.add(
          () => async () => {
            throw Object.assign(new Error('User is not authorized to perform: sagemaker:ListTrainingJobs'), {
              name: 'AccessDeniedException',
              $fault: 'client',
              $metadata: { httpStatusCode: 400 },
            });
          },
          { step: 'finalizeRequest', name: 'deny' },
        );
      },
    });
    try {
      const { jobs, aws } = await jobViews({
        resultsDir: results,
        context: broken,
        stallMinutes: 30,
        progress: (id) => data.progress(id),
      });
      expect(aws).toMatch(/^SageMaker listing failed: .*not authorized/);
      expect(jobs.map((j) => [j.name, j.source, j.latestStep])).toEqual([
        ['annotations-adhoc-20261124-040000', 'local', 3],
      ]);
    } finally {
      broken.close();
    }
  });
});
