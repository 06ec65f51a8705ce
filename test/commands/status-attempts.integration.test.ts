import { PutObjectCommand } from '@aws-sdk/client-s3';
import { DescribeTrainingJobCommand, type SageMakerClient } from '@aws-sdk/client-sagemaker';
import { submit } from '../../lib/training/submit';
import { RUN_FOLDER, S3Layout } from '../../lib/layout';
import { runCli } from '../helpers/cli';
import { BUCKET, clients, IMAGE, jobNames } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { makeTrainerRepo } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable } from '../helpers/moto';

const layout = new S3Layout(BUCKET, 'rlvr-experiments/');

/** What the container writes after a spot restart (lib/container/setup.ts planRestart / writeRunInfo). */
function runInfo(job: string) {
  const resume = {
    kind: 'weights',
    from: 'gsm8k_step20',
    step: 20,
    note: 'the policy continues from the checkpoint; optimizer state starts fresh',
  };
  return {
    job,
    startedAt: '2026-01-01T02:00:00.000Z',
    resume,
    attempts: [
      { startedAt: '2026-01-01T00:00:00.000Z', host: 'algo-1' },
      {
        startedAt: '2026-01-01T02:00:00.000Z',
        host: 'algo-1',
        resume,
        endedAt: '2026-01-01T05:00:00.000Z',
        status: 'Completed',
      },
    ],
  };
}

describeWithPeer('moto_server', motoAvailable())('retries and attempts against moto_server', () => {
  const emulator = useEmulator();

  it('a submit with --max-retries sends RetryStrategy, and moto accepts the request', async () => {
    const repo = makeTrainerRepo();
    const sent: Record<string, unknown>[] = [];
    const result = await submit(
      emulator.submitInput(repo.configPath, {
        options: { max_retries: '4', spot: true, max_wait: '48h' },
        configureClients: (client) =>
          (client as SageMakerClient).middlewareStack.add(
            (next, context) => async (args) => {
              if (context.commandName === 'CreateTrainingJobCommand')
                sent.push(args.input as Record<string, unknown>);
              return next(args);
            },
            { step: 'initialize', name: 'record-create' },
          ),
      }),
    );
    expect(sent).toHaveLength(1);
    expect(sent[0].RetryStrategy).toEqual({ MaximumRetryAttempts: 4 });
    expect(sent[0].StoppingCondition).toMatchObject({ MaxWaitTimeInSeconds: 172800 });
    expect(await jobNames(emulator.moto.endpoint)).toEqual([result.jobName]);
    const { sagemaker } = clients(emulator.moto.endpoint);
    const described = await sagemaker.send(
      new DescribeTrainingJobCommand({ TrainingJobName: result.jobName }),
    );
    expect(described.EnableManagedSpotTraining).toBe(true);

    // The CLI flag takes the same path.
    const cli = await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--max-retries', '2'], {
      env: emulator.cliEnv(),
      cwd: repo.root,
    });
    expect(cli.stderr).not.toMatch(/^error/m);
    expect(cli.code).toBe(0);
  });

  it('status shows the attempts and the resumed step that run.json records, as text and JSON', async () => {
    const repo = makeTrainerRepo();
    const { jobName } = await submit(emulator.submitInput(repo.configPath));
    const { s3 } = clients(emulator.moto.endpoint);
    const put = (key: string, body: string) =>
      s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));

    // Before the job wrote anything: one attempt (moto's job went through Training), no resume.
    const before = await runCli(['status', jobName, '--json'], { env: emulator.cliEnv(), cwd: repo.root });
    const beforeJson = JSON.parse(before.stdout);
    expect(beforeJson.attempts).toMatchObject({ interruptions: 0, recorded: [] });
    expect(beforeJson.attempts.resume).toBeUndefined();

    const prefix = layout.checkpointsPrefix(jobName);
    await put(`${prefix}${RUN_FOLDER.runInfo}`, JSON.stringify(runInfo(jobName)));
    await put(`${prefix}checkpoints/gsm8k_step40/model.safetensors`, 'w');
    await put(`${prefix}checkpoints/gsm8k_final/model.safetensors`, 'w');

    const text = await runCli(['status', jobName], { env: emulator.cliEnv(), cwd: repo.root });
    expect(text.stdout).toContain('  attempts: 2 · resumed from step 20 (gsm8k_step20)\n');
    expect(text.stdout).toMatch(
      / {4}1\. started 2026-01-01T00:00:00\.000Z on algo-1, no end recorded\n {4}2\. started 2026-01-01T02:00:00\.000Z on algo-1, ended 2026-01-01T05:00:00\.000Z \(Completed\), resumed from step 20\n/,
    );
    expect(text.stdout).toMatch(
      /restarted: the policy continues from the checkpoint.*\(from gsm8k_step20, step 20\)/,
    );

    const json = await runCli(['status', jobName, '--json'], { env: emulator.cliEnv(), cwd: repo.root });
    const report = JSON.parse(json.stdout);
    expect(report.attempts).toMatchObject({
      count: 2,
      interruptions: 0,
      resume: { kind: 'weights', from: 'gsm8k_step20', step: 20 },
    });
    expect(report.attempts.recorded).toHaveLength(2);
    expect(report.attempts.recorded[1]).toMatchObject({ status: 'Completed', resume: { step: 20 } });
  });
});
