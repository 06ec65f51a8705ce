import * as fs from 'node:fs';
import * as path from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { submit } from '../../lib/training/submit';
import { loadBotocoreModel, validateAgainstModel } from '../helpers/botocore-model';
import { runCli } from '../helpers/cli';
import { allKeys, BUCKET, clients, IMAGE, jobNames } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { makeTrainerRepo, safetensorsWith, tempDir } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable } from '../helpers/moto';

jest.setTimeout(120_000);

const model = loadBotocoreModel('sagemaker');
const WEIGHTS = safetensorsWith(Buffer.alloc(64, 1));

/**
 * Batch evaluation against the emulator (moto): checkpoints of a real (moto) training job resolved and
 * checked from S3, the eval job's request against the API model, the submit and what it writes, the
 * resume, the merged results table.
 */
describeWithPeer('moto_server', motoAvailable())('rlvr eval against the emulator', () => {
  const emulator = useEmulator();
  const put = (key: string, body: string | Buffer) =>
    clients(emulator.moto.endpoint).s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));

  /** A training job in moto with checkpoints step100, step200 (the index trap), step300 (cut off) and final. */
  async function trainingJob(): Promise<string> {
    const repo = makeTrainerRepo();
    const job = (await submit(emulator.submitInput(repo.configPath))).jobName;
    const ck = (name: string) => `rlvr-experiments/checkpoints/${job}/checkpoints/r_${name}`;
    for (const name of ['step100', 'step200', 'step300', 'final']) await put(`${ck(name)}/config.json`, '{}');
    await put(`${ck('step100')}/model.safetensors`, WEIGHTS);
    await put(`${ck('final')}/model.safetensors`, WEIGHTS);
    await put(`${ck('step200')}/model.safetensors`, WEIGHTS);
    await put(
      `${ck('step200')}/model.safetensors.index.json`,
      JSON.stringify({ weight_map: { w: 'model-00001-of-00001.safetensors' } }),
    );
    await put(
      `${ck('step300')}/model.safetensors.index.json`,
      JSON.stringify({
        weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' },
      }),
    );
    await put(`${ck('step300')}/model-00001-of-00002.safetensors`, WEIGHTS);
    return job;
  }

  const cli = (args: string[], cwd = tempDir('rlvr-eval-cli-')) =>
    runCli(['eval', ...args], {
      cwd,
      env: emulator.cliEnv({
        RLVR_JOB_LOG: path.join(cwd, 'job_log.md'),
        XDG_CACHE_HOME: path.join(cwd, '.cache'),
      }),
    });

  it('--dry-run --json: the job’s checkpoints resolved in S3, the plan’s assignments, a request the API model accepts', async () => {
    const job = await trainingJob();
    const r = await cli([
      '--checkpoints',
      `${job}:step100,step200,final`,
      '--checkpoints',
      'base=Qwen/Qwen3-1.7B-Base',
      '--benchmarks',
      'gsm8k_cot:8,ifeval:0',
      '--dry-run',
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout);
    const prefix = `s3://${BUCKET}/rlvr-experiments/`;
    expect(plan.checkpoints.map((c: { label: string; from: string }) => [c.label, c.from])).toEqual([
      ['step100', `${prefix}checkpoints/${job}/checkpoints/r_step100/`],
      ['step200', `${prefix}checkpoints/${job}/checkpoints/r_step200/`],
      ['final', `${prefix}checkpoints/${job}/checkpoints/r_final/`],
      ['base', `${prefix}models/Qwen3-1.7B-Base/`],
    ]);
    expect(plan.notes.join('\n')).toMatch(
      /step200: .*model\.safetensors is loaded as model-00001-of-00001\.safetensors.*never in S3/,
    );
    // The image of the training job.
    expect(plan.image).toBe(IMAGE);
    expect(plan.assignments).toHaveLength(8);
    for (const a of plan.assignments) {
      expect(Object.keys(a)).toEqual(
        expect.arrayContaining(['host', 'gpu', 'checkpoint', 'task', 'num_fewshot', 'argv']),
      );
      expect(a.argv.join(' ')).toContain('tensor_parallel_size=1');
    }
    // 8 units on one 8-GPU instance: one each.
    expect(new Set(plan.assignments.map((a: { gpu: number }) => a.gpu)).size).toBe(8);
    const request = plan.createTrainingJobRequest;
    expect(validateAgainstModel(model, 'CreateTrainingJob', request)).toEqual([]);
    const channels = request.InputDataConfig.map(
      (c: { ChannelName: string; DataSource: { S3DataSource: { S3DataType: string; S3Uri: string } } }) => [
        c.ChannelName,
        c.DataSource.S3DataSource.S3DataType,
        c.DataSource.S3DataSource.S3Uri,
      ],
    );
    expect(channels).toEqual([
      ['config', 'S3Prefix', `${prefix}jobs/${plan.jobName}/`],
      ['ckpt-1', 'ManifestFile', `${prefix}jobs/${plan.jobName}/manifests/ckpt-1.json`],
      ['ckpt-2', 'S3Prefix', `${prefix}models/Qwen3-1.7B-Base/`],
    ]);
    expect(request.Environment).toMatchObject({ RLVR_MODE: 'eval', HF_HUB_OFFLINE: '1' });
    expect(request.EnableNetworkIsolation).toBe(true);
  });

  it('S3 failing under the plan or the table is a run-time failure naming the step (exit 1), no stack trace', async () => {
    const job = await trainingJob();
    const plan = await cli([
      '--checkpoints',
      `${job}:final`,
      '--benchmarks',
      'ifeval:0',
      '--bucket',
      'no-such-bucket-here',
      '--dry-run',
    ]);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toMatch(/^error: Could not look up the checkpoints in S3: .*NoSuchBucket/m);
    const table = await runCli(['eval', 'results', job, '--bucket', 'no-such-bucket-here'], {
      env: emulator.cliEnv(),
    });
    expect(table.code).toBe(1);
    expect(table.stderr).toMatch(
      new RegExp(`^error: Could not read the results of ${job}: .*NoSuchBucket`, 'm'),
    );
    expect(plan.stderr + table.stderr).not.toMatch(/\n\s+at /);
  });

  it('a checkpoint that is cut off or missing is refused (exit 2), naming each; nothing is written', async () => {
    const job = await trainingJob();
    const before = await allKeys(emulator.moto.endpoint);
    const jobsBefore = await jobNames(emulator.moto.endpoint);
    const r = await cli(['--checkpoints', `${job}:step300,step999`, '--benchmarks', 'ifeval:0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${job}:step300 is not complete:`);
    expect(r.stderr).toContain(`has no step999 checkpoint (it has: step100, step200, step300, final)`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(await allKeys(emulator.moto.endpoint)).toEqual(before);
    expect(await jobNames(emulator.moto.endpoint)).toEqual(jobsBefore);
  });

  it('submits: <job>:all leaves the cut-off checkpoint out, the plan and manifest are uploaded, the job is created and logged; a repeat skips units with results', async () => {
    const job = await trainingJob();
    const cwd = tempDir('rlvr-eval-cli-');
    const r = await cli(
      ['--checkpoints', `${job}:all`, '--benchmarks', 'gsm8k_cot:8', '--instance-type', 'ml.g6e.12xlarge'],
      cwd,
    );
    expect(r.stderr).toMatch(/warning: .*step300 left out: not complete/);
    expect(r.code).toBe(0);
    const evalJob = /^Submitted (\S+):/m.exec(r.stdout)![1];
    expect(evalJob).toMatch(/^annotations-adhoc-eval-\d{8}-\d{6}$/);
    expect(await jobNames(emulator.moto.endpoint)).toContain(evalJob);
    const { s3, sagemaker } = clients(emulator.moto.endpoint);
    const text = async (key: string) =>
      (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToString();
    const plan = JSON.parse(await text(`rlvr-experiments/jobs/${evalJob}/eval-plan.json`));
    expect(plan.units.map((u: { checkpoint: string }) => u.checkpoint).sort()).toEqual([
      'final',
      'step100',
      'step200',
    ]);
    const manifest = JSON.parse(await text(`rlvr-experiments/jobs/${evalJob}/manifests/ckpt-1.json`));
    expect(manifest[0]).toEqual({ prefix: `s3://${BUCKET}/rlvr-experiments/checkpoints/${job}/` });
    expect(manifest.slice(1).sort()).toEqual([
      'checkpoints/r_final/config.json',
      'checkpoints/r_final/model.safetensors',
      'checkpoints/r_step100/config.json',
      'checkpoints/r_step100/model.safetensors',
      'checkpoints/r_step200/config.json',
      'checkpoints/r_step200/model.safetensors',
      'checkpoints/r_step200/model.safetensors.index.json',
    ]);
    const { DescribeTrainingJobCommand } = await import('@aws-sdk/client-sagemaker');
    const described = await sagemaker.send(new DescribeTrainingJobCommand({ TrainingJobName: evalJob }));
    expect(described.ResourceConfig?.InstanceType).toBe('ml.g6e.12xlarge');
    expect(fs.readFileSync(path.join(cwd, 'job_log.md'), 'utf8')).toContain(`| ${evalJob} |`);
    // An eval job writes results, not checkpoints: Completed without any is no incident for it.
    const status = await runCli(['status', evalJob], { cwd, env: emulator.cliEnv() });
    expect(status.stdout).toContain('Completed');
    expect(status.stdout + status.stderr).not.toMatch(/WITHOUT ANY CHECKPOINT/);
    const training = await runCli(['status', job], { cwd, env: emulator.cliEnv() });
    expect(training.code).toBe(0);

    // The job ran step100's unit (its record streamed to S3): the same command skips it.
    const unit = plan.units.find((u: { checkpoint: string }) => u.checkpoint === 'step100');
    await put(`rlvr-experiments/checkpoints/${evalJob}/${unit.folder}/unit-${unit.id}.json`, '{}');
    const again = await cli([
      '--checkpoints',
      `${job}:all`,
      '--benchmarks',
      'gsm8k_cot:8',
      '--dry-run',
      '--json',
    ]);
    const replan = JSON.parse(again.stdout);
    expect(replan.skipped).toEqual([{ id: unit.id, doneIn: evalJob, folder: unit.folder }]);
    expect(replan.assignments.map((a: { checkpoint: string }) => a.checkpoint).sort()).toEqual([
      'final',
      'step200',
    ]);
    const forced = JSON.parse(
      (
        await cli([
          '--checkpoints',
          `${job}:all`,
          '--benchmarks',
          'gsm8k_cot:8',
          '--dry-run',
          '--json',
          '--force',
        ])
      ).stdout,
    );
    expect(forced.assignments).toHaveLength(3);
  });

  it('eval results merges a training job’s watcher evals and an eval job into one table; the repeat reads from the cache', async () => {
    const fixtures = path.join(__dirname, '..', 'fixtures', 'eval-results');
    const files = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) =>
          e.isDirectory() ? files(path.join(dir, e.name)).map((f) => `${e.name}/${f}`) : [e.name],
        );
    // The training job the eval job evaluated: named in the eval units' checkpoint ids (`<job>:step100`).
    const records = files(path.join(fixtures, 'eval-run')).filter((f) => /\/unit-[0-9a-f]+\.json$/.test(f));
    const ids = records.map(
      (f) => JSON.parse(fs.readFileSync(path.join(fixtures, 'eval-run', f), 'utf8')).checkpoint.id as string,
    );
    const trainingJob = ids.find((id) => /^[\w-]+:(step\d+|final)$/.test(id))!.split(':')[0];
    const evalJob = 'annotations-adhoc-eval-20260126-101500';
    for (const [run, job] of [
      ['training-run', trainingJob],
      ['eval-run', evalJob],
    ] as const)
      for (const f of files(path.join(fixtures, run)))
        await put(`rlvr-experiments/checkpoints/${job}/${f}`, fs.readFileSync(path.join(fixtures, run, f)));
    const cwd = tempDir('rlvr-eval-results-');
    const table = (format: string) =>
      runCli(['eval', 'results', trainingJob, evalJob, '--format', format], {
        cwd,
        env: emulator.cliEnv({ XDG_CACHE_HOME: path.join(cwd, '.cache') }),
      });
    const first = await table('json');
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/read (\d+) result file\(s\), \1 from S3, 0 from the local cache/);
    const merged = JSON.parse(first.stdout) as { rows: { checkpointId: string; sources: string[] }[] };
    // A checkpoint both evaluated is one row with both sources.
    const both = merged.rows.filter((r) => r.sources.length === 2);
    expect(both.length).toBeGreaterThan(0);
    for (const r of both) {
      expect(r.checkpointId.startsWith(`${trainingJob}:`)).toBe(true);
      expect(r.sources.sort()).toEqual([`eval job ${evalJob}`, `eval watcher of ${trainingJob}`]);
    }
    const again = await table('md');
    expect(again.stderr).toMatch(/read (\d+) result file\(s\), 0 from S3, \1 from the local cache/);
    expect(again.stdout).toMatch(/^\| checkpoint +\|/);
  });
});
