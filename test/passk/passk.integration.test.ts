import * as fs from 'node:fs';
import * as path from 'node:path';
import { DescribeTrainingJobCommand } from '@aws-sdk/client-sagemaker';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { submit } from '../../lib/training/submit';
import { unbiasedPassAtK } from '../../lib/passk-records/estimator';
import { loadBotocoreModel, validateAgainstModel } from '../helpers/botocore-model';
import { runCli } from '../helpers/cli';
import { allKeys, BUCKET, clients, IMAGE, jobNames } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { makeTrainerRepo, safetensorsWith, tempDir } from '../helpers/fixtures';
import { passAtKByHand } from '../helpers/passk';
import { describeWithPeer, motoAvailable } from '../helpers/moto';
import { theirRepository } from '../helpers/python';

jest.setTimeout(120_000);

const model = loadBotocoreModel('sagemaker');

/**
 * `rlvr passk` against the emulator (moto): a training job's checkpoint and the dataset copy resolved in
 * S3, the campaign's request against AWS's API model, the submit and what it writes, `--continue` of a
 * job, and the merged results read back from the job's streamed output.
 */
describeWithPeer('moto_server', motoAvailable())('rlvr passk against the emulator', () => {
  const emulator = useEmulator();
  const s3 = () => clients(emulator.moto.endpoint).s3;
  const put = (key: string, body: string | Buffer) =>
    s3().send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
  const text = async (key: string) =>
    (await s3().send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToString();

  async function trainingJob(): Promise<string> {
    const job = (await submit(emulator.submitInput(makeTrainerRepo().configPath))).jobName;
    const ck = `rlvr-experiments/checkpoints/${job}/checkpoints/r_final`;
    await put(`${ck}/config.json`, '{"model_type": "qwen3"}');
    await put(`${ck}/model.safetensors`, safetensorsWith(Buffer.alloc(64, 1)));
    return job;
  }

  let repo: string;
  beforeAll(() => {
    repo = theirRepository();
  });
  const cli = (args: string[], cwd = tempDir('rlvr-passk-cli-')) =>
    runCli(['passk', ...args], {
      cwd,
      env: emulator.cliEnv({
        RLVR_JOB_LOG: path.join(cwd, 'job_log.md'),
        XDG_CACHE_HOME: path.join(cwd, '.cache'),
      }),
    });

  it('--dry-run of a 2-host campaign on 8-GPU instances: 16 shards with distinct indices, each its GPU; a request the API model accepts', async () => {
    const job = await trainingJob();
    await put(
      'rlvr-experiments/datasets/gsm8k_train/dataset_info.json',
      JSON.stringify({ splits: { train: { name: 'train', num_examples: 7473 } } }),
    );
    const r = await cli([
      '--model',
      `${job}:final`,
      '--dataset',
      'gsm8k',
      '--n',
      '64',
      '--instance-type',
      'ml.g6e.48xlarge',
      '--instance-count',
      '2',
      '--trainer-src',
      repo,
      '--dry-run',
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.shards).toHaveLength(16);
    expect(new Set(plan.shards.map((s: { index: number }) => s.index))).toEqual(
      new Set(Array.from({ length: 16 }, (_, i) => i)),
    );
    const flag = (argv: string[], name: string) => argv[argv.indexOf(name) + 1];
    for (const s of plan.shards as { index: number; host: string; gpu: number; argv: string[] }[]) {
      expect(s.host).toBe(s.index < 8 ? 'algo-1' : 'algo-2');
      expect(s.gpu).toBe(s.index % 8);
      expect(flag(s.argv, '--gpu-index')).toBe(String(s.index));
      expect(flag(s.argv, '--num-shards')).toBe('16');
      // Their script runs on the --gpu-index-th entry of --gpus: that entry is this shard's GPU on its host.
      expect(flag(s.argv, '--gpus').split(',')[s.index]).toBe(String(s.gpu));
      expect(flag(s.argv, '--output-dir')).toBe('/opt/ml/checkpoints/passk');
      expect(flag(s.argv, '--n')).toBe('64');
      expect(s.argv.slice(0, 3)).toEqual(['python', 'scripts/eval_pass_at_k.py', 'gsm8k']);
    }
    expect(plan.datasetPrompts).toBe(7473);
    expect(plan.promptsPerShard).toBe(Math.ceil(7473 / 16));
    expect(plan.image).toBe(IMAGE);
    const request = plan.createTrainingJobRequest;
    expect(validateAgainstModel(model, 'CreateTrainingJob', request)).toEqual([]);
    expect(request.ResourceConfig).toMatchObject({ InstanceType: 'ml.g6e.48xlarge', InstanceCount: 2 });
    expect(request.EnableNetworkIsolation).toBe(true);
    expect(request.Environment.RLVR_MODE).toBe('passk');
    const channels = Object.fromEntries(
      request.InputDataConfig.map(
        (c: { ChannelName: string; DataSource: { S3DataSource: { S3Uri: string } } }) => [
          c.ChannelName,
          c.DataSource.S3DataSource.S3Uri,
        ],
      ),
    );
    expect(channels).toMatchObject({
      model: `s3://${BUCKET}/rlvr-experiments/checkpoints/${job}/checkpoints/r_final/`,
      dataset: `s3://${BUCKET}/rlvr-experiments/datasets/gsm8k_train/`,
      code: `s3://${BUCKET}/rlvr-experiments/source/${plan.source.sha256}.tar.gz`,
    });
  });

  it('the plan’s time and cost come from an earlier campaign’s measured rate, else are said to be unknown', async () => {
    const job = await trainingJob();
    await put(
      'rlvr-experiments/datasets/gsm8k_train/dataset_info.json',
      JSON.stringify({ splits: { train: { name: 'train', num_examples: 1600 } } }),
    );
    const cwd = tempDir('rlvr-passk-cli-');
    const args = [
      '--model',
      `${job}:final`,
      '--dataset',
      'gsm8k',
      '--trainer-src',
      repo,
      '--dry-run',
      '--json',
    ];
    const first = JSON.parse((await cli(args, cwd)).stdout);
    expect(first.wallSeconds).toBeNull();
    expect(first.costUsd).toBeNull();
    const unknown = await cli(args.slice(0, -1), cwd);
    expect(unknown.stdout).toMatch(
      /time +unknown: no earlier campaign of this model, dataset, n and sampling on ml\.g6e\.48xlarge/,
    );
    // A campaign of the same shape ran before: 100 prompts in 400 s on each shard.
    const earlier = path.join(cwd, 'results', 'passk_20261101-000000');
    fs.mkdirSync(earlier, { recursive: true });
    fs.writeFileSync(
      path.join(earlier, 'passk-plan.json'),
      JSON.stringify({ ...first, version: 1, shards: first.shards, files: { shardFolder: 'shard_{shard}' } }),
    );
    for (const s of [0, 1]) {
      const dir = path.join(earlier, 'passk', `shard_${s}`);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(
        path.join(dir, 'rlvr-shard.json'),
        JSON.stringify({
          index: s,
          attempts: [
            {
              host: 'algo-1',
              gpu: s,
              instanceType: 'ml.g6e.48xlarge',
              startedAt: '2026-11-01T00:00:00Z',
              endedAt: '2026-11-01T00:06:40Z',
              promptsBefore: 0,
              promptsAfter: 100,
            },
          ],
        }),
      );
    }
    const second = JSON.parse((await cli(args, cwd)).stdout);
    expect(second.promptsPerSecondPerGpu).toBeCloseTo(0.25, 12);
    expect(second.promptsPerShard).toBe(200);
    expect(second.wallSeconds).toBeCloseTo(800, 6);
    expect(second.costUsd).toBeGreaterThan(0);
    // Twice the expected time and half an hour, at least an hour.
    expect(second.maxRuntimeSeconds).toBe(3600);
  });

  it('refuses what a job cannot run, before anything is written: a Hub-only dataset, a misspelt one, a missing copy', async () => {
    const before = await allKeys(emulator.moto.endpoint);
    const jobsBefore = await jobNames(emulator.moto.endpoint);
    const base = ['--model', 'Qwen/Qwen3-1.7B-Base', '--trainer-src', repo];
    const hub = await cli([...base, '--dataset', 'ifeval']);
    expect(hub.code).toBe(2);
    expect(hub.stderr).toMatch(/ifeval cannot run in a job: it loads google\/IFEval from the Hub only/);
    const typo = await cli([...base, '--dataset', 'gsm8kk']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/did you mean gsm8k\?/);
    const missing = await cli([...base, '--dataset', 'mbpp']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/datasets\/mbpp_train\/ holds no dataset copy/);
    const noRoom = await cli([...base, '--dataset', 'gsm8k', '--max-tokens', '4096']);
    expect(noRoom.code).toBe(2);
    expect(noRoom.stderr).toMatch(/max_tokens 4096 leaves no room for the prompt in max_model_len 2048/);
    // A job that left no results, and one that is no campaign, cannot be continued.
    const empty = await cli([
      ...base,
      '--dataset',
      'gsm8k',
      '--continue',
      'annotations-adhoc-passk-20261101-000000',
    ]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no pass@k campaign job of that name/);
    // A setting's value is checked under the script's own flag.
    const topP = await cli([...base, '--dataset', 'gsm8k', '--top-p', '1.5']);
    expect(topP.code).toBe(2);
    expect(topP.stderr).toMatch(/--top-p.*1\.5: a number in \(0, 1\]/);
    for (const r of [hub, typo, missing, noRoom, empty, topP]) expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(await allKeys(emulator.moto.endpoint)).toEqual(before);
    expect(await jobNames(emulator.moto.endpoint)).toEqual(jobsBefore);
  });

  it('submits: the source and the plan uploaded, the job created and logged; its streamed shards merge into exact pass@k; --continue takes its output in a channel', async () => {
    const job = await trainingJob();
    const cwd = tempDir('rlvr-passk-cli-');
    const args = [
      '--model',
      `${job}:final`,
      '--dataset',
      'gsm8k',
      '--n',
      '4',
      '--instance-type',
      'ml.g6e.12xlarge',
    ];
    const r = await cli([...args, '--trainer-src', repo], cwd);
    expect(r.code).toBe(0);
    const passkJob = /^Submitted (\S+):/m.exec(r.stdout)![1];
    expect(passkJob).toMatch(/^annotations-adhoc-passk-\d{8}-\d{6}$/);
    const plan = JSON.parse(await text(`rlvr-experiments/jobs/${passkJob}/passk-plan.json`));
    expect(plan.shards).toHaveLength(4);
    const described = await clients(emulator.moto.endpoint).sagemaker.send(
      new DescribeTrainingJobCommand({ TrainingJobName: passkJob }),
    );
    expect(described.Environment?.RLVR_SOURCE_SHA256).toMatch(/^[0-9a-f]{64}$/);
    expect(
      (await allKeys(emulator.moto.endpoint)).some((k) =>
        k.endsWith(`${described.Environment!.RLVR_SOURCE_SHA256}.tar.gz`),
      ),
    ).toBe(true);
    expect(fs.readFileSync(path.join(cwd, 'job_log.md'), 'utf8')).toContain(`| ${passkJob} |`);

    // What the job streamed: shards 0-2 (shard 3 never wrote), prompt 5 twice (a restart), a cut-off line.
    // Shard 0 in segments (numbered past the padding: read by number), shard 1 an older job's single file
    // followed by a segment, shard 2 the single file; a temporary name a sync caught is not read.
    const line = (i: number, c: number) =>
      JSON.stringify({
        prompt_id: `gsm8k_${i}`,
        num_completions: 4,
        num_correct: c,
        scores: [...Array(4 - c).fill(0), ...Array(c).fill(1)],
      });
    const out = `rlvr-experiments/checkpoints/${passkJob}/passk`;
    await put(`${out}/shard_0/verification_results.99999.jsonl`, `${line(0, 0)}\n`);
    await put(`${out}/shard_0/verification_results.100000.jsonl`, `${line(1, 1)}\n`);
    await put(`${out}/shard_0/.verification_results.00000.jsonl.7.abcdef.tmp`, `${line(7, 1)}\n`);
    await put(`${out}/shard_1/verification_results.jsonl`, `${line(5, 2)}\n`);
    await put(`${out}/shard_1/verification_results.00000.jsonl`, `${line(6, 4)}\n${line(5, 2)}\n`);
    await put(`${out}/shard_2/verification_results.jsonl`, `${line(9, 3)}\n{"prompt_id": "gsm8k_10", "sco`);
    const results = await runCli(['passk', 'results', passkJob, '--format', 'json'], {
      cwd,
      env: emulator.cliEnv(),
    });
    expect(results.code).toBe(0);
    const [merged] = JSON.parse(results.stdout);
    expect(merged.missingShards).toEqual([3]);
    expect(merged.duplicates).toBe(1);
    expect(merged.badLines).toHaveLength(1);
    expect(results.stderr).toMatch(/shard\(s\) 3 have no results/);
    const cs = [0, 1, 2, 4, 3];
    for (const k of [1, 2, 4]) {
      const row = merged.passAtK.find((p: { k: number }) => p.k === k);
      expect(row.unbiased).toBeCloseTo(cs.reduce((a, c) => a + unbiasedPassAtK(4, c, k), 0) / cs.length, 12);
      expect(row.unbiased).toBeCloseTo(cs.reduce((a, c) => a + passAtKByHand(4, c, k), 0) / cs.length, 12);
    }

    // A pass@k job writes results, never checkpoints: no incident in its status; download brings its shards.
    await put(`rlvr-experiments/checkpoints/${passkJob}/passk-plan.json`, JSON.stringify(plan));
    const status = await runCli(['status', passkJob], { cwd, env: emulator.cliEnv() });
    expect(status.stdout).toContain('Completed');
    expect(status.stdout + status.stderr).not.toMatch(/WITHOUT ANY CHECKPOINT|NO CHECKPOINTS/);
    const download = await runCli(['download', passkJob], { cwd, env: emulator.cliEnv() });
    expect(download.stdout + download.stderr).not.toMatch(/NO CHECKPOINTS/);
    expect({ code: download.code, out: download.code ? download.stdout + download.stderr : '' }).toEqual({
      code: 0,
      out: '',
    });
    const local = await runCli(['passk', 'results', path.join('results', passkJob), '--format', 'json'], {
      cwd,
      env: emulator.cliEnv(),
    });
    expect(JSON.parse(local.stdout)[0].passAtK).toEqual(merged.passAtK);

    // The same campaign again, continuing the job: its output is a channel of the new one.
    const again = await cli(
      [...args, '--trainer-src', repo, '--continue', passkJob, '--dry-run', '--json'],
      cwd,
    );
    expect(again.code).toBe(0);
    const channels = JSON.parse(again.stdout).createTrainingJobRequest.InputDataConfig.map(
      (c: { ChannelName: string; DataSource: { S3DataSource: { S3Uri: string } } }) => [
        c.ChannelName,
        c.DataSource.S3DataSource.S3Uri,
      ],
    );
    expect(channels).toContainEqual(['resume', `s3://${BUCKET}/${out}/`]);
    // A job that streamed nothing yet has nothing to keep.
    const idle = /^Submitted (\S+):/m.exec((await cli([...args, '--trainer-src', repo], cwd)).stdout)![1];
    const nothing = await cli([...args, '--trainer-src', repo, '--continue', idle, '--dry-run'], cwd);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/it left no results under .*nothing to keep/);
    // Another campaign (n differs) cannot continue it.
    const other = await cli(
      [
        '--model',
        `${job}:final`,
        '--dataset',
        'gsm8k',
        '--n',
        '8',
        '--instance-type',
        'ml.g6e.12xlarge',
        '--trainer-src',
        repo,
        '--continue',
        passkJob,
        '--dry-run',
      ],
      cwd,
    );
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/it measured another campaign/);
  });
});
