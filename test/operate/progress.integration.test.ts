import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { openJobContext } from '../../lib/aws';
import { jobStatus } from '../../lib/operate';
import { runCli } from '../helpers/cli';
import { BUCKET, clients, IMAGE, jobNames } from '../helpers/emulator-data';
import { makeTrainerRepo } from '../helpers/fixtures';
import { useEmulator } from '../helpers/emulator-suite';
import { describeWithPeer, motoAvailable } from '../helpers/moto';
import { traceLines } from '../helpers/traces';
import { jobContract } from '../helpers/past-runs';

/*
 * A running job's progress from its trace as it grows in S3 (the emulator keeps jobs InProgress for ten
 * minutes): step N of M, the rate, the ETA, cost so far and at finish, and the flag when the ETA is past
 * what is left of its max runtime.
 */
describeWithPeer('moto_server', motoAvailable())(
  'status and jobs of a running job (its trace growing)',
  () => {
    const emulator = useEmulator({ trainingSeconds: 600 });

    async function putTrace(job: string, steps: number, stepSeconds: number): Promise<void> {
      const { s3 } = clients(emulator.moto.endpoint);
      await s3.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `rlvr-experiments/checkpoints/${job}/traces/trace.jsonl`,
          Body: [...traceLines({ steps, stepSeconds, stepJitter: 0.05, startTs: 120 })].join(''),
        }),
      );
    }

    it('shows step N of M, the rate, the ETA and the cost at finish, each moving as the trace grows', async () => {
      const repo = makeTrainerRepo();
      const submitted = await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE], {
        env: emulator.cliEnv(),
        cwd: repo.root,
      });
      expect(submitted.code).toBe(0);
      const [job] = await jobNames(emulator.moto.endpoint);
      // The job recorded the steps it trains for (its contract), which status reads back.
      const contract = await jobContract(emulator.moto.endpoint, job);
      expect(contract.forecast).toMatchObject({
        maxSteps: 200,
        similarRuns: 0,
        shape: { trainer: 'grpo-sft' },
      });

      const etaOf = (out: string) => {
        const m =
          /progress: step (\d+) of 200, (\d+\.\d) s\/step, ETA (\S+), cost \$[\d.]+ so far, \$([\d.]+) at finish/.exec(
            out,
          );
        expect(m).not.toBeNull();
        return { step: Number(m![1]), rate: Number(m![2]), eta: m![3], atFinish: Number(m![4]) };
      };
      await putTrace(job, 20, 40);
      const early = await runCli(['status', job], { env: emulator.cliEnv(), cwd: repo.root });
      expect(early.code).toBe(0);
      const a = etaOf(early.stdout);
      expect(a.step).toBe(20);
      expect(Math.abs(a.rate - 40)).toBeLessThan(4);
      expect(a.eta).toMatch(/^1h5\dm$|^2h0\dm$/); // 180 steps × ~40 s
      expect(early.stdout).not.toMatch(/!! ETA/);

      await putTrace(job, 120, 40);
      const later = await runCli(['status', job, '--json'], { env: emulator.cliEnv(), cwd: repo.root });
      const report = JSON.parse(later.stdout);
      expect(report.progress.step).toBe(120);
      expect(report.progress.maxSteps).toBe(200);
      expect(report.progress.etaSeconds).toBeGreaterThan(80 * 36);
      expect(report.progress.etaSeconds).toBeLessThan(80 * 44);
      expect(report.progress.costAtFinish).toBeGreaterThan(report.progress.costSoFar);
      expect(report.progress.costAtFinish).toBeLessThan(a.atFinish);
      expect(report.progress.pastMaxRuntime).toBe(false);

      const jobs = await runCli(['jobs'], { env: emulator.cliEnv(), cwd: repo.root });
      expect(jobs.stdout).toMatch(new RegExp(`${job} .*step 120/200, ETA 5\\dm`));

      // One ranged read of the trace serves the latest step and the progress; the forecast comes from
      // the run.json already read (once the container wrote it), not another request.
      const { s3 } = clients(emulator.moto.endpoint);
      await s3.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `rlvr-experiments/checkpoints/${job}/run.json`,
          Body: JSON.stringify({ job, forecast: contract.forecast }),
        }),
      );
      const gets: string[] = [];
      const context = await openJobContext({
        settings: {},
        configureClients: (client) =>
          (client as unknown as S3Client).middlewareStack.add(
            (next, ctx) => async (args) => {
              if (ctx.commandName === 'GetObjectCommand') {
                const input = args.input as { Key?: string; Range?: string };
                gets.push(`${String(input.Key).split(`${job}/`)[1]} ${input.Range ?? ''}`.trim());
              }
              return next(args);
            },
            { step: 'initialize', name: 'record-gets' },
          ),
      });
      try {
        const inProcess = await jobStatus(context, job);
        expect(inProcess.progress).toMatchObject({ step: 120, maxSteps: 200 });
        expect(gets.sort()).toEqual(['run.json', `traces/trace.jsonl bytes=-${inProcess.trace!.bytesRead}`]);
      } finally {
        context.close();
      }
    });

    it('flags a running job whose ETA is past its remaining max runtime, with the step it would stop at', async () => {
      const repo = makeTrainerRepo();
      const submitted = await runCli(
        ['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--max-runtime', '1h'],
        {
          env: emulator.cliEnv(),
          cwd: repo.root,
        },
      );
      expect(submitted.code).toBe(0);
      const [job] = await jobNames(emulator.moto.endpoint);
      await putTrace(job, 10, 60);
      const { stdout } = await runCli(['status', job], { env: emulator.cliEnv(), cwd: repo.root });
      expect(stdout).toMatch(/progress: step 10 of 200, \d+\.\d s\/step, ETA 3h\d+m/);
      expect(stdout).toMatch(
        /!! ETA 3h\d+m is past the \S+ of max runtime left: SageMaker will stop it at about step (\d+) of 200, before its last checkpoint/,
      );
      const step = Number(/stop it at about step (\d+)/.exec(stdout)![1]);
      expect(step).toBeGreaterThan(60);
      expect(step).toBeLessThanOrEqual(72);
      const jobs = await runCli(['jobs'], { env: emulator.cliEnv(), cwd: repo.root });
      expect(jobs.stdout).toMatch(new RegExp(`!! ${job}: ETA 3h\\d+m is past`));
    });
  },
);
