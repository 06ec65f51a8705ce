import * as fs from 'node:fs';
import * as path from 'node:path';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { runCli } from '../helpers/cli';
import { BUCKET, clients, IMAGE, jobNames } from '../helpers/emulator-data';
import { makeTrainerRepo, tempDir } from '../helpers/fixtures';
import { useEmulator } from '../helpers/emulator-suite';
import { describeWithPeer, motoAvailable } from '../helpers/moto';
import { assertNothingCreated, snapshot } from '../helpers/nothing-created';
import { jobContract, putRunOutputs } from '../helpers/past-runs';

/*
 * SageMaker's record of completed jobs as the forecast's past runs: a job submitted (the emulator
 * completes it at once), its run.json and trace in S3 as its container leaves them; the next plan
 * forecasts from it, reads it once (a completed job is cached), and a real submit whose max runtime
 * cannot cover the forecast exits 2 with nothing created.
 */
describeWithPeer('moto_server', motoAvailable())('forecasts from SageMaker’s completed jobs', () => {
  const emulator = useEmulator();

  /** Submits, then leaves in S3 what the job's container would: run.json with the contract's forecast, and its trace. */
  async function completedRun(repoRoot: string, stepSeconds: number): Promise<string> {
    const submitted = await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE], {
      env: emulator.cliEnv(),
      cwd: repoRoot,
    });
    expect(submitted.code).toBe(0);
    const [job] = await jobNames(emulator.moto.endpoint);
    const contract = await jobContract(emulator.moto.endpoint, job);
    await putRunOutputs(emulator.moto.endpoint, job, {
      runInfo: {
        job,
        trainer: contract.trainer,
        forecast: contract.forecast,
        trainerRun: { folder: 'run_x' },
      },
      trace: { steps: 80, stepSeconds, stepJitter: 0.1, startTs: 240 },
      traceAt: 'run_x/traces/trace.jsonl',
      checkpoints: ['run_x/checkpoints/run_step50/model.safetensors'],
    });
    return job;
  }

  it('a plan forecasts from a completed job’s trace in S3, and reads that job only once', async () => {
    const repo = makeTrainerRepo();
    const job = await completedRun(repo.root, 45);
    const cache = tempDir('rlvr-cache-');
    const env = emulator.cliEnv({ XDG_CACHE_HOME: cache });
    const plan = async () => {
      const { code, stdout } = await runCli(
        ['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--dry-run', '--json', '--results-dir', 'none'],
        { env, cwd: repo.root },
      );
      expect(code).toBe(0);
      return JSON.parse(stdout).forecast;
    };
    const first = await plan();
    // what it measured: its steps (the trace's own step numbers), the checkpoint its prefix holds, how it ended
    expect(first.similar).toEqual([
      {
        id: job,
        source: 'sagemaker',
        secondsPerStep: expect.any(Number),
        measuredSteps: 79,
        steps: 80,
        plannedSteps: 200,
        checkpoints: 1,
        ended: 'Completed',
        used: true,
      },
    ]);
    expect(first.basis).toBe('measured');
    expect(Math.abs(first.secondsPerStep.median - 45) / 45).toBeLessThan(0.1);
    expect(first.outsideSeconds).toBeGreaterThan(150);
    const cached = fs.readdirSync(path.join(cache, 'rlvr', 'runs'), { recursive: true }) as string[];
    expect(cached.some((f) => f.endsWith(`${job}.json`))).toBe(true);

    // Completed jobs do not change: the next plan does not read the trace again.
    await clients(emulator.moto.endpoint).s3.send(
      new DeleteObjectCommand({
        Bucket: BUCKET,
        Key: `rlvr-experiments/checkpoints/${job}/run_x/traces/trace.jsonl`,
      }),
    );
    const second = await plan();
    expect(second.secondsPerStep.median).toBe(first.secondsPerStep.median);
  });

  it('a submit whose max runtime cannot cover the forecast exits 2 before anything is written', async () => {
    const repo = makeTrainerRepo();
    await completedRun(repo.root, 45);
    const env = emulator.cliEnv({ XDG_CACHE_HOME: tempDir('rlvr-cache-') });
    const before = await snapshot(emulator.moto.endpoint, [path.join(repo.root, 'docs')]);
    const { code, stdout, stderr } = await runCli(
      ['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--max-runtime', '2h', '--results-dir', 'none'],
      { env, cwd: repo.root },
    );
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(
      /max runtime 2h would stop training at about step 1\d\d of 200: 200 steps at 4\d\.\d s\/step \(1 similar run\)/,
    );
    await assertNothingCreated(emulator.moto.endpoint, before);
  });
});

describeWithPeer('moto_server', motoAvailable())('forecasts from SageMaker’s stopped jobs', () => {
  // Jobs run ten minutes here, so one can be stopped, as SageMaker stops a job at its max runtime.
  const emulator = useEmulator({ trainingSeconds: 600 });

  it('a job stopped before its end (the slowest of its shape, often) counts', async () => {
    const repo = makeTrainerRepo();
    const env = emulator.cliEnv({ XDG_CACHE_HOME: tempDir('rlvr-cache-') });
    expect(
      (await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE], { env, cwd: repo.root })).code,
    ).toBe(0);
    const [job] = await jobNames(emulator.moto.endpoint);
    const contract = await jobContract(emulator.moto.endpoint, job);
    await putRunOutputs(emulator.moto.endpoint, job, {
      runInfo: { job, forecast: contract.forecast },
      trace: { steps: 40, stepSeconds: 70, startTs: 100 },
    });
    expect((await runCli(['stop', job], { env, cwd: repo.root })).code).toBe(0);
    const status = await runCli(['status', job, '--json'], { env, cwd: repo.root });
    expect(JSON.parse(status.stdout).job.TrainingJobStatus).toBe('Stopped');
    const { code, stdout } = await runCli(
      ['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--dry-run', '--json', '--results-dir', 'none'],
      { env, cwd: repo.root },
    );
    expect(code).toBe(0);
    const f = JSON.parse(stdout).forecast;
    expect(f.similar.map((s: { id: string }) => s.id)).toEqual([job]);
    expect(f.secondsPerStep.median).toBeCloseTo(70, 3);
    // stopped at step 40 with no checkpoint in its prefix: not enough alone, so the forecast is rough
    expect(f.similar[0]).toMatchObject({ steps: 40, checkpoints: 0, ended: 'Stopped' });
    expect(f.basis).toBe('rough');
    expect(f.verdict).not.toMatch(/covers|thin|generous/);
  });
});
