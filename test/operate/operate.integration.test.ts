import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  CloudWatchLogsClient,
  CreateLogGroupCommand,
  CreateLogStreamCommand,
  PutLogEventsCommand,
} from '@aws-sdk/client-cloudwatch-logs';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { ListTagsCommand, type SageMakerClient, DescribeTrainingJobCommand } from '@aws-sdk/client-sagemaker';
import { submit } from '../../lib/training/submit';
import { jobStatus, listJobs } from '../../lib/operate';
import { openJobContext } from '../../lib/aws';
import { runCli } from '../helpers/cli';
import { BUCKET, clients, IMAGE, jobNames } from '../helpers/emulator-data';
import { makeTrainerRepo } from '../helpers/fixtures';
import { useEmulator } from '../helpers/emulator-suite';
import { describeWithPeer, motoAvailable, TEST_REGION } from '../helpers/moto';

const hasMoto = motoAvailable();

function logRows(repoRoot: string): string[] {
  return fs
    .readFileSync(path.join(repoRoot, 'docs', 'job_log.md'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('| annotations-adhoc-'));
}

/** The SDK middleware a test uses to answer the first `times` calls of `command` with throttling. */
function throttle(command: string, times: number, counter: { calls: number }) {
  return (client: unknown) => {
    (client as SageMakerClient).middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === command && ++counter.calls <= times) {
          throw Object.assign(new Error('Rate exceeded (injected)'), {
            name: 'ThrottlingException',
            $fault: 'client',
            $metadata: { httpStatusCode: 400 },
          });
        }
        return next(args);
      },
      { step: 'deserialize', name: 'inject-throttling' },
    );
  };
}

describeWithPeer('moto_server', hasMoto)('operating jobs (moto: jobs complete at once)', () => {
  const emulator = useEmulator();
  const cliEnv = () => emulator.cliEnv();
  const input = emulator.submitInput;
  const moto = {
    get endpoint() {
      return emulator.moto.endpoint;
    },
  };

  it('a 4×2 sweep creates 8 jobs with 8 distinct names, 8 log rows and the overrides in each config', async () => {
    const repo = makeTrainerRepo();
    const { code, stdout, stderr } = await runCli(
      [
        'submit',
        'configs/gsm8k.yaml',
        '--image',
        IMAGE,
        '--description',
        'lr x beta',
        '--sweep',
        'optimizer.lr=5e-5,1e-5,5e-6,1e-6',
        '--sweep',
        'loss.beta=0.001,0.0001',
      ],
      { env: cliEnv(), cwd: repo.root },
    );
    expect(stderr).not.toMatch(/^error/m);
    expect(code).toBe(0);
    const names = await jobNames(moto.endpoint);
    expect(names).toHaveLength(8);
    expect(new Set(names).size).toBe(8);
    expect(stdout).toMatch(/Submitted sweep sweep-\d{8}-\d{6}: 8 jobs/);
    const rows = logRows(repo.root);
    expect(rows).toHaveLength(8);
    expect(rows.map((r) => r.split(' | ')[0].slice(2)).sort()).toEqual(names);
    expect(rows.some((r) => r.includes('lr x beta [optimizer.lr=1.0e-6 loss.beta=0.0001]'))).toBe(true);

    // Each job's config as written carries its own overrides, in the PyYAML-safe float form.
    const { s3, sagemaker } = clients(moto.endpoint);
    const seen = new Set<string>();
    for (const name of names) {
      const text = await getText(s3, `rlvr-experiments/jobs/${name}/config.yaml`);
      const lr = /lr: (\S+)/.exec(text)![1];
      const beta = /beta: (\S+)/.exec(text)![1];
      seen.add(`${lr} ${beta}`);
      expect(text).toContain('# GRPO on GSM8K'); // comments and layout kept
      const described = await sagemaker.send(new DescribeTrainingJobCommand({ TrainingJobName: name }));
      const tags = await sagemaker.send(new ListTagsCommand({ ResourceArn: described.TrainingJobArn }));
      const tagMap = Object.fromEntries((tags.Tags ?? []).map((t) => [t.Key, t.Value]));
      expect(tagMap['rlvr:overrides']).toBe(`optimizer.lr=${lr} loss.beta=${beta}`);
      expect(tagMap['rlvr:sweep']).toMatch(/^sweep-\d{8}-\d{6}$/);
    }
    expect(seen).toEqual(
      new Set(['5.0e-5', '1.0e-5', '5.0e-6', '1.0e-6'].flatMap((lr) => [`${lr} 0.001`, `${lr} 0.0001`])),
    );
  });

  it('one invalid combination stops the whole sweep before anything is submitted', async () => {
    const repo = makeTrainerRepo();
    const { code, stderr } = await runCli(
      ['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--sweep', 'optimizer.lr=1e-5,-1e-5'],
      { env: cliEnv(), cwd: repo.root },
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /configs\/gsm8k\.yaml \[optimizer\.lr=-1\.0e-5\]:\d+:\d+: roles\[0\]\.config\.optimizer\.lr: must be ≥ 0/,
    );
    expect(await jobNames(moto.endpoint)).toEqual([]);
    expect(fs.existsSync(path.join(repo.root, 'docs', 'job_log.md'))).toBe(false);
  });

  it('a misspelt sweep key exits 2 with a suggestion', async () => {
    const repo = makeTrainerRepo();
    const { code, stderr } = await runCli(
      ['submit', 'configs/gsm8k.yaml', '--dry-run', '--sweep', 'optimizer.learning_rate=1e-5'],
      {
        env: cliEnv(),
        cwd: repo.root,
      },
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(/--sweep optimizer\.learning_rate: the config has no such value/);
  });

  it('sweep --dry-run lists every job with the total estimated cost', async () => {
    const repo = makeTrainerRepo();
    const { code, stdout } = await runCli(
      [
        'submit',
        'configs/gsm8k.yaml',
        '--image',
        IMAGE,
        '--dry-run',
        '--json',
        '--sweep',
        'optimizer.lr=5e-5,1e-5',
        '--max-runtime',
        '10h',
      ],
      { env: cliEnv(), cwd: repo.root },
    );
    expect(code).toBe(0);
    const json = JSON.parse(stdout);
    expect(json.jobs.map((j: { overrides: string }) => j.overrides)).toEqual([
      'optimizer.lr=5.0e-5',
      'optimizer.lr=1.0e-5',
    ]);
    expect(json.totalEstimatedCost).toBeCloseTo(2 * json.jobs[0].estimate.perHour * 10, 5);
    // Each job shows the name the submit would claim for it: distinct, in order, and said to be provisional.
    const names = json.jobs.map(
      (j: { createTrainingJobRequest: { TrainingJobName: string } }) =>
        j.createTrainingJobRequest.TrainingJobName,
    );
    expect(names[0]).toMatch(/^annotations-adhoc-\d{8}-\d{6}$/);
    expect(names[1]).toBe(`${names[0]}-2`);
    expect(json.jobs.map((j: { jobName: string }) => j.jobName)).toEqual(names);
    expect(json.namesProvisional).toMatch(/claimed when submitting/);
    expect(await jobNames(moto.endpoint)).toEqual([]);
  });

  it('lists our jobs with config, description and cost, and flags a Completed job without checkpoints', async () => {
    const repo = makeTrainerRepo();
    const withCkpt = await submit(input(repo.configPath, { description: 'has checkpoints' }));
    const without = await submit(input(repo.configPath, { description: 'saved nothing' }));
    const { s3 } = clients(moto.endpoint);
    for (const f of [
      'qwen3-1.7B-gsm8k-grpo_step20/model.safetensors',
      'qwen3-1.7B-gsm8k-grpo_final/model.safetensors',
    ]) {
      await s3.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `rlvr-experiments/checkpoints/${withCkpt.jobName}/${f}`,
          Body: 'w',
        }),
      );
    }
    const { code, stdout } = await runCli(['jobs'], { env: cliEnv(), cwd: repo.root });
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    const good = lines.find((l) => l.startsWith(withCkpt.jobName))!;
    expect(good).toMatch(/Completed +1× ml\.p4de\.24xlarge .* configs\/gsm8k\.yaml +has checkpoints$/);
    expect(
      lines.find((l) => l.includes(without.jobName) && l.startsWith('!! ') && l.includes('saved nothing')),
    ).toBeDefined();
    expect(stdout).toContain(`!! ${without.jobName}: COMPLETED WITHOUT ANY CHECKPOINT IN S3`);
    const json = JSON.parse((await runCli(['jobs', '--json'], { env: cliEnv(), cwd: repo.root })).stdout);
    expect(json.map((r: { name: string }) => r.name).sort()).toEqual(
      [withCkpt.jobName, without.jobName].sort(),
    );
  });

  it('jobs survives throttling of ListTrainingJobs (backoff with jitter)', async () => {
    const repo = makeTrainerRepo();
    const job = await submit(input(repo.configPath));
    const counter = { calls: 0 };
    const context = await openJobContext({
      settings: {},
      configureClients: throttle('ListTrainingJobsCommand', 3, counter),
    });
    try {
      const rows = await listJobs(context, { limit: 10 });
      expect(rows.map((r) => r.name)).toEqual([job.jobName]);
      expect(counter.calls).toBe(4);
    } finally {
      context.close();
    }
  });

  it('status reads the latest step and reward with one ranged read of the trace tail', async () => {
    const repo = makeTrainerRepo();
    const job = await submit(input(repo.configPath));
    const { s3 } = clients(moto.endpoint);
    const lines = Array.from({ length: 3000 }, (_, i) =>
      JSON.stringify({ step: i + 1, reward_mean: (i + 1) / 3000, text: 'x'.repeat(80) }),
    );
    const trace = `${lines.join('\n')}\n{"step": 3001, "rew`; // the last line is still being written
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `rlvr-experiments/checkpoints/${job.jobName}/traces/trace.jsonl`,
        Body: trace,
      }),
    );
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `rlvr-experiments/checkpoints/${job.jobName}/run_step3000/model.safetensors`,
        Body: 'w',
      }),
    );
    const ranges: string[] = [];
    const context = await openJobContext({
      settings: {},
      configureClients: (client) =>
        (client as unknown as S3Client).middlewareStack.add(
          (next, ctx) => async (args) => {
            if (ctx.commandName === 'GetObjectCommand')
              ranges.push(String((args.input as { Range?: string }).Range));
            return next(args);
          },
          { step: 'initialize', name: 'record-ranges' },
        ),
    });
    try {
      const report = await jobStatus(context, job.jobName);
      expect(report.trace).toEqual({ step: 3000, reward: 1, bytesRead: 65536 });
      expect(ranges).toEqual(['bytes=-65536']);
      expect(report.checkpoints).toMatchObject({ count: 1, latestStep: 3000, final: false });
      expect(report.problem).toBe('completed, but no final checkpoint (latest: step 3000)');
    } finally {
      context.close();
    }
    const cli = await runCli(['status', job.jobName], { env: cliEnv(), cwd: repo.root });
    expect(cli.code).toBe(1); // the post-job check fails loudly
    expect(cli.stdout).toMatch(/trace: step 3000, reward 1 \(read the last 65536 bytes\)/);
    expect(cli.stdout).toMatch(/!! completed, but no final checkpoint/);
  });

  it('logs interleaves every host by time, and a job without streams is "not yet", not an error', async () => {
    const repo = makeTrainerRepo();
    const job = await submit(input(repo.configPath));
    const before = await runCli(['logs', job.jobName], { env: cliEnv(), cwd: repo.root });
    expect(before.code).toBe(0);
    expect(before.stderr).toMatch(/no log streams for annotations-adhoc-/);

    const logs = new CloudWatchLogsClient({
      region: TEST_REGION,
      endpoint: moto.endpoint,
      credentials: { accessKeyId: 't', secretAccessKey: 't' },
    });
    const group = '/aws/sagemaker/TrainingJobs';
    await logs.send(new CreateLogGroupCommand({ logGroupName: group }));
    const t0 = Date.now() - 60_000;
    for (const [host, offsets] of [
      ['algo-1', [0, 20, 40]],
      ['algo-2', [10, 30]],
    ] as const) {
      const stream = `${job.jobName}/${host}-1700000000`;
      await logs.send(new CreateLogStreamCommand({ logGroupName: group, logStreamName: stream }));
      await logs.send(
        new PutLogEventsCommand({
          logGroupName: group,
          logStreamName: stream,
          logEvents: offsets.map((o) => ({ timestamp: t0 + o * 1000, message: `${host} line at ${o}` })),
        }),
      );
    }
    // Another job's stream must not show up.
    await logs.send(
      new CreateLogStreamCommand({ logGroupName: group, logStreamName: `${job.jobName}-2/algo-1-1` }),
    );
    logs.destroy();
    const after = await runCli(['logs', job.jobName], { env: cliEnv(), cwd: repo.root });
    expect(after.code).toBe(0);
    expect(
      after.stdout
        .trim()
        .split('\n')
        .map((l) => l.replace(/^\S+ \S+ /, '')),
    ).toEqual([
      '[algo-1] algo-1 line at 0',
      '[algo-2] algo-2 line at 10',
      '[algo-1] algo-1 line at 20',
      '[algo-2] algo-2 line at 30',
      '[algo-1] algo-1 line at 40',
    ]);
  });

  it('status of an unknown job exits 2 with what to do', async () => {
    const { code, stderr } = await runCli(['status', 'annotations-adhoc-20990101-000000'], { env: cliEnv() });
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /No training job named annotations-adhoc-20990101-000000 in us-west-2\. List jobs with `rlvr jobs`/,
    );
  });

  it('doctor reports each check with what to do, and fails on a missing repository', async () => {
    const { code, stdout } = await runCli(['doctor'], { env: cliEnv() });
    expect(stdout).toMatch(/ok {4}credentials: arn:aws:sts::123456789012:/);
    expect(stdout).toMatch(
      /ok {4}bucket: s3:\/\/sagemaker-us-west-2-123456789012\/rlvr-experiments\/ readable/,
    );
    expect(stdout).toMatch(
      /FAIL {2}image repository: no repository rlvr-experiments\n\s+→ Deploy the infrastructure stack/,
    );
    expect(code).toBe(1);
  });
});

describeWithPeer('moto_server', hasMoto)('operating running jobs (moto: jobs run 4 s)', () => {
  const emulator = useEmulator({ trainingSeconds: 4 });
  const cliEnv = () => emulator.cliEnv();
  const moto = {
    get endpoint() {
      return emulator.moto.endpoint;
    },
  };

  it('stop shows the state before and after', async () => {
    const repo = makeTrainerRepo();
    const sub = await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE], {
      env: cliEnv(),
      cwd: repo.root,
    });
    const job = /Submitted (\S+)/.exec(sub.stdout)![1];
    const { code, stdout } = await runCli(['stop', job], { env: cliEnv(), cwd: repo.root });
    expect(code).toBe(0);
    expect(stdout).toBe(`${job}: InProgress (Training) → Stopped (Stopped)\n`);
    const again = await runCli(['stop', job], { env: cliEnv(), cwd: repo.root });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/is already Stopped; there is nothing to stop/);
    const status = await runCli(['status', job], { env: cliEnv(), cwd: repo.root });
    expect(status.stdout).toMatch(
      /Stopping +Stopping the training job\n.*Stopped +Training job stopped by the user/,
    );
  });

  it('submit --wait follows the job to its end and exits 0 only when it Completed with checkpoints', async () => {
    const repo = makeTrainerRepo();
    // A job that completes without checkpoints: --wait must not call that a success.
    const bare = await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--wait', '--poll', '1'], {
      env: cliEnv(),
      cwd: repo.root,
    });
    expect(bare.stdout).toMatch(
      /== Starting: Preparing the instances for training\n.*== Training: Training image download completed/,
    );
    expect(bare.stdout).toMatch(
      /annotations-adhoc-\S+ ended: Completed\n {2}results: s3:\/\/.*\/checkpoints\/annotations-adhoc-\S+\/ \(0 checkpoints\)\n {2}WARNING: COMPLETED WITHOUT ANY CHECKPOINT IN S3/,
    );
    expect(bare.code).toBe(1);
  });

  it('submit --wait exits 0 for a job that completes with its final checkpoint in S3', async () => {
    const repo = makeTrainerRepo();
    const waiting = runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--wait', '--poll', '1'], {
      env: cliEnv(),
      cwd: repo.root,
    });
    let names: string[] = [];
    for (let i = 0; i < 50 && names.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      names = await jobNames(moto.endpoint);
    }
    const { s3 } = clients(moto.endpoint);
    for (const f of ['run_step20/model.safetensors', 'run_final/model.safetensors']) {
      await s3.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `rlvr-experiments/checkpoints/${names[0]}/${f}`,
          Body: 'w',
        }),
      );
    }
    const done = await waiting;
    expect(done.stdout).toMatch(
      new RegExp(`${names[0]} ended: Completed\\n {2}results: .*\\(2 checkpoints, final present\\)`),
    );
    expect(done.stdout).not.toMatch(/WARNING/);
    expect(done.code).toBe(0);
  });

  it('jobs shows a running job with its cost so far', async () => {
    const repo = makeTrainerRepo();
    await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--spot'], {
      env: cliEnv(),
      cwd: repo.root,
    });
    const { stdout } = await runCli(['jobs'], { env: cliEnv(), cwd: repo.root });
    expect(stdout).toMatch(/InProgress\/Training +1× ml\.p4de\.24xlarge .* \$\d+\.\d\d so far/);
    await new Promise((r) => setTimeout(r, 4500));
    const done = await runCli(['jobs', '--json'], { env: cliEnv(), cwd: repo.root });
    const [row] = JSON.parse(done.stdout);
    expect(row.status).toBe('Completed');
    expect(row.cost.final).toBe(true);
    const described = await clients(moto.endpoint).sagemaker.send(
      new DescribeTrainingJobCommand({ TrainingJobName: row.name }),
    );
    expect(described.BillableTimeInSeconds).toBeLessThan(described.TrainingTimeInSeconds!);
    expect(row.cost.billableSeconds).toBe(described.BillableTimeInSeconds);
    expect(row.cost.spotSavings).toBeCloseTo(
      1 - described.BillableTimeInSeconds! / described.TrainingTimeInSeconds!,
      10,
    );
  });
});

async function getText(s3: S3Client, key: string): Promise<string> {
  const { GetObjectCommand } = await import('@aws-sdk/client-s3');
  const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return out.Body!.transformToString();
}
