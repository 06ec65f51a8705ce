import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureImage } from '../../lib/image';
import { bareEnv, runCli } from '../helpers/cli';
import {
  dockerAvailable,
  startDockerEngine,
  writeContainerDockerDir,
  type DockerEngine,
} from '../helpers/docker';
import { writeCheckpoint } from '../helpers/eval';
import { REPO_ROOT, tempDir } from '../helpers/fixtures';
import { passAtKByHand } from '../helpers/passk';
import { describeWithPeer } from '../helpers/moto';
import { theirRepository } from '../helpers/python';

jest.setTimeout(300_000);

const PROMPTS = 40;
const N = 8;
const SHARDS = 4;

/** The stand-in script's answer: prompt i has (7i mod (n+1)) correct completions, the last ones. */
const correctOf = (i: number) => (i * 7) % (N + 1);

const resultIds = (file: string): string[] =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .flatMap((l) => {
          try {
            return [(JSON.parse(l) as { prompt_id: string }).prompt_id];
          } catch {
            return [];
          }
        })
    : [];

/**
 * `rlvr passk --local` on a real Docker engine: the real entrypoint in passk mode running a replica of
 * their eval_pass_at_k.py (its command line, sharding, output records and resume by prompt id) from
 * their repository's shape, a shard per GPU. The engine has no NVIDIA runtime: RLVR_LOCAL_GPU_DEVICES=none
 * numbers the GPUs for the job without asking it for devices.
 */
describeWithPeer('dockerd', dockerAvailable())('rlvr passk --local (real engine, real entrypoint)', () => {
  let engine: DockerEngine;
  let image: string;
  let repo: string;
  let cwd: string;
  let modelDir: string;
  let datasetDir: string;

  beforeAll(async () => {
    engine = await startDockerEngine();
    const dockerDir = tempDir('rlvr-docker-');
    writeContainerDockerDir(dockerDir);
    repo = theirRepository();
    const built = await ensureImage({
      context: { dockerDir, trainerSrc: repo },
      repositoryUri: 'rlvr-local/train',
      build: true,
      push: false,
      dockerHost: engine.host,
    });
    image = built.ref;
    cwd = tempDir('rlvr-passk-work-');
    modelDir = writeCheckpoint(path.join(tempDir('rlvr-passk-model-'), 'base'));
    // Slow enough to stop it half-way: each batch of 2 prompts takes 0.4 s.
    fs.writeFileSync(path.join(modelDir, 'fixture-passk.json'), JSON.stringify({ batchDelayS: 0.4 }));
    datasetDir = tempDir('rlvr-passk-gsm8k-');
    fs.writeFileSync(
      path.join(datasetDir, 'dataset_info.json'),
      JSON.stringify({ splits: { train: { name: 'train', num_examples: PROMPTS } } }),
    );
    fs.writeFileSync(path.join(datasetDir, 'state.json'), JSON.stringify({ _data_files: [] }));
  });
  afterAll(async () => {
    await engine?.stop();
  });

  const args = () => [
    'passk',
    '--model',
    modelDir,
    '--dataset',
    'gsm8k',
    '--n',
    String(N),
    '--batch-size',
    '2',
    '--dataset-dir',
    datasetDir,
    '--trainer-src',
    repo,
    '--local',
    '--gpus',
    `0-${SHARDS - 1}`,
    '--image',
    image,
  ];
  const env = () =>
    bareEnv({
      DOCKER_HOST: engine.host,
      RLVR_LOCAL_GPU_DEVICES: 'none',
      XDG_CACHE_HOME: path.join(cwd, '.cache'),
    });
  const shardFile = (runDir: string, i: number, file = 'verification_results.jsonl') =>
    path.join(runDir, 'passk', `shard_${i}`, file);

  it('runs a shard per GPU; stopped half-way and continued, no finished prompt runs again; the merge gives the exact unbiased pass@k', async () => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'rlvr.js'), ...args()], {
      cwd,
      env: env(),
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    const runsDir = path.join(cwd, 'results');
    const firstRun = () => fs.readdirSync(runsDir).find((n) => n.startsWith('passk'));
    const deadline = Date.now() + 180_000;
    // Stop once every shard has finished some prompts.
    for (;;) {
      const run = fs.existsSync(runsDir) ? firstRun() : undefined;
      const counts = run
        ? Array.from({ length: SHARDS }, (_, i) => resultIds(shardFile(path.join(runsDir, run), i)).length)
        : [];
      if (counts.length === SHARDS && counts.every((c) => c >= 2)) break;
      if (Date.now() > deadline) throw new Error(`no progress to stop at:\n${output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGINT');
    await exited;
    const runDir1 = path.join(runsDir, firstRun()!);
    const done1 = Array.from({ length: SHARDS }, (_, i) => resultIds(shardFile(runDir1, i)));
    const total1 = done1.flat().length;
    expect(total1).toBeGreaterThanOrEqual(2 * SHARDS);
    expect(total1).toBeLessThan(PROMPTS);
    expect(output).toMatch(/continue it: the same command with --continue/);
    // A line cut off by the stop (the script flushes each line, but a kill can land mid-write).
    fs.appendFileSync(shardFile(runDir1, 0), '{"prompt_id": "gsm8k_9", "num_compl');

    const r = await runCli([...args(), '--continue', runDir1], { cwd, env: env() });
    expect({ code: r.code, out: r.code ? (r.stdout + r.stderr).slice(-4000) : '' }).toEqual({
      code: 0,
      out: '',
    });
    expect(r.stderr).toMatch(
      new RegExp(
        `continues +${runDir1.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ${total1} prompt\\(s\\) done are kept`,
      ),
    );
    const runDir2 = /run folder (\S+)/.exec(r.stdout)![1];
    expect(runDir2).not.toBe(runDir1);
    const all = new Set<string>();
    for (let i = 0; i < SHARDS; i++) {
      const ids = resultIds(shardFile(runDir2, i));
      // Each prompt once, the earlier ones first, then only what was left: generated in this run.
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.slice(0, done1[i].length)).toEqual(done1[i]);
      const generatedNow = fs
        .readFileSync(shardFile(runDir2, i, 'fixture-generated.txt'), 'utf8')
        .trim()
        .split('\n');
      expect(generatedNow.filter((id) => done1[i].includes(id))).toEqual([]);
      expect(generatedNow).toEqual(ids.slice(done1[i].length));
      // Shard i's prompts: their script's ceil(prompts / shards) slice, on the GPU the plan gave it.
      expect(ids.map((id) => Number(id.split('_')[1])).sort((a, b) => a - b)).toEqual(
        Array.from({ length: PROMPTS / SHARDS }, (_, j) => i * (PROMPTS / SHARDS) + j),
      );
      // The prompts and completions file has each finished prompt once, in the results' order.
      expect(resultIds(shardFile(runDir2, i, 'completions.jsonl'))).toEqual(ids);
      const metadata = JSON.parse(fs.readFileSync(shardFile(runDir2, i, 'metadata.json'), 'utf8'));
      expect(metadata.gpus).toBe(String(i));
      const record = JSON.parse(fs.readFileSync(shardFile(runDir2, i, 'rlvr-shard.json'), 'utf8'));
      expect(record.attempts).toEqual([
        expect.objectContaining({
          gpu: i,
          promptsBefore: done1[i].length,
          promptsAfter: PROMPTS / SHARDS,
          outcome: 'finished',
        }),
      ]);
      for (const id of ids) all.add(id);
    }
    expect(all.size).toBe(PROMPTS);
    expect(fs.existsSync(path.join(runDir2, 'passk-plan.json'))).toBe(true);

    const merged = await runCli(['passk', 'results', runDir2, '--format', 'json'], { cwd, env: env() });
    expect(merged.code).toBe(0);
    const [results] = JSON.parse(merged.stdout);
    expect(results.prompts).toHaveLength(PROMPTS);
    expect(results.missingShards).toEqual([]);
    expect(results.duplicates).toBe(0);
    const cs = Array.from({ length: PROMPTS }, (_, i) => correctOf(i));
    expect(results.passAtK.map((p: { k: number }) => p.k)).toEqual([1, 2, 4, 8]);
    for (const row of results.passAtK as { k: number; unbiased: number; firstK: number }[]) {
      expect(row.unbiased).toBeCloseTo(cs.reduce((a, c) => a + passAtKByHand(N, c, row.k), 0) / PROMPTS, 12);
      // Their figure: a correct one among the first k — the correct ones are the last c.
      expect(row.firstK).toBeCloseTo(cs.filter((c) => c > 0 && N - c < row.k).length / PROMPTS, 12);
    }
    // The two differ where the fixture's order makes the first-k figure biased.
    expect(results.passAtK[0].unbiased).not.toBeCloseTo(results.passAtK[0].firstK, 3);
  });
});
