import { PutObjectCommand } from '@aws-sdk/client-s3';
import { submit } from '../../lib/training/submit';
import { runCli } from '../helpers/cli';
import { BUCKET, clients } from '../helpers/emulator-data';
import { makeTrainerRepo } from '../helpers/fixtures';
import { useEmulator } from '../helpers/emulator-suite';
import { describeWithPeer, motoAvailable } from '../helpers/moto';

/*
 * `rlvr jobs --forecast`: ended jobs (the emulator completes them at once) whose run.json, as their
 * container leaves it, keeps the forecast they were given beside each attempt's start and trainer end.
 */
describeWithPeer('moto_server', motoAvailable())('forecast against actual (jobs --forecast)', () => {
  const emulator = useEmulator();

  async function ended(
    repo: { configPath: string },
    runInfo: Record<string, unknown>,
    final: boolean,
  ): Promise<string> {
    const { jobName } = await submit(emulator.submitInput(repo.configPath));
    const { s3 } = clients(emulator.moto.endpoint);
    const prefix = `rlvr-experiments/checkpoints/${jobName}/`;
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `${prefix}run.json`,
        Body: JSON.stringify({ job: jobName, ...runInfo }),
      }),
    );
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `${prefix}run_${final ? 'final' : 'step100'}/model.safetensors`,
        Body: 'w',
      }),
    );
    return jobName;
  }

  const at = (s: number) => new Date(Date.UTC(2026, 10, 1) + s * 1000).toISOString();

  it('lists each forecast beside the actual, and the median error over those that reached their last step', async () => {
    const repo = makeTrainerRepo();
    const shape = { trainer: 'grpo-sft' };
    const short = await ended(
      repo,
      {
        forecast: { shape, maxSteps: 200, secondsPerStep: 16.5, wallSeconds: 3600, similarRuns: 3 },
        attempts: [{ startedAt: at(0), trainerEndedAt: at(4000), endedAt: at(5800), status: 'Completed' }],
      },
      true,
    );
    const restarted = await ended(
      repo,
      {
        forecast: { shape, maxSteps: 200, secondsPerStep: 35, wallSeconds: 7200, similarRuns: 2 },
        attempts: [
          { startedAt: at(0), trainerEndedAt: at(2000), status: 'Failed' },
          { startedAt: at(2500), trainerEndedAt: at(6500), status: 'Completed' },
        ],
      },
      true,
    );
    const unforecast = await ended(
      repo,
      {
        forecast: { shape, maxSteps: 200, similarRuns: 0 },
        attempts: [{ startedAt: at(0), trainerEndedAt: at(3000) }],
      },
      true,
    );
    const cut = await ended(
      repo,
      {
        forecast: { shape, maxSteps: 200, secondsPerStep: 18, wallSeconds: 3600, similarRuns: 1 },
        attempts: [{ startedAt: at(0), trainerEndedAt: at(1800) }],
      },
      false,
    );

    const { code, stdout } = await runCli(['jobs', '--forecast', '--json'], {
      env: emulator.cliEnv(),
      cwd: repo.root,
    });
    expect(code).toBe(0);
    const checks = JSON.parse(stdout);
    const byName = new Map(checks.jobs.map((j: { name: string }) => [j.name, j]));
    expect(byName.get(short)).toMatchObject({
      stepsReached: 200,
      forecastWallSeconds: 3600,
      actualWallSeconds: 4000,
    });
    expect((byName.get(short) as { error: number }).error).toBeCloseTo(-0.1, 6);
    expect(byName.get(restarted)).toMatchObject({ actualWallSeconds: 6000 });
    expect((byName.get(restarted) as { error: number }).error).toBeCloseTo(0.2, 6);
    expect(byName.get(unforecast)).not.toHaveProperty('forecastWallSeconds');
    expect((byName.get(unforecast) as { error?: number }).error).toBeUndefined();
    // Stopped short of its last step: nothing to compare.
    expect(byName.get(cut)).toMatchObject({ stepsReached: 100 });
    expect((byName.get(cut) as { error?: number }).error).toBeUndefined();
    expect(checks.compared).toBe(2);
    expect(checks.medianAbsError).toBeCloseTo(0.15, 6);

    const text = await runCli(['jobs', '--forecast'], { env: emulator.cliEnv(), cwd: repo.root });
    expect(text.stdout).toMatch(
      new RegExp(`${short} +Completed +200/200 +1h \\(16\\.5 s/step\\) +1h7m +-10% +3 runs`),
    );
    expect(text.stdout).toMatch(
      new RegExp(`${unforecast} +Completed +200/200 +none \\(no similar run\\) +50m +- +0 runs`),
    );
    expect(text.stdout).toMatch(
      /Over 2 jobs that reached their last step with a forecast: median \|error\| 15%, median error \+5%/,
    );
  });
});
