import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { streamedFiles } from '../../lib/container/segments';
import { ensureImage } from '../../lib/image';
import { bareEnv, runCli, runCommand } from '../helpers/cli';
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

/** A shard's output as the run folder has it: the single file (an older job's), then its segments. */
const streamIds = (runDir: string, i: number, name = 'verification_results.jsonl'): string[] =>
  streamedFiles(path.join(runDir, 'passk', `shard_${i}`), name).flatMap((f) => resultIds(f));

/** Each id once, where it first comes. */
const firstOfEach = (ids: readonly string[]): string[] => [...new Set(ids)];

/** The file shard i's script appends to: in the local run's /opt/ml (under the CLI's TMPDIR), not streamed. */
function workFile(tmp: string, i: number, name = 'verification_results.jsonl'): string | undefined {
  if (!fs.existsSync(tmp)) return undefined;
  const root = fs
    .readdirSync(tmp)
    .filter((n) => n.startsWith('rlvr-local-ml-algo-1-'))
    .map((n) => path.join(tmp, n, 'passk-work', `shard_${i}`, name))
    .find((f) => fs.existsSync(f));
  return root;
}

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
  // The local run's /opt/ml stand-in is made under TMPDIR: the tests look at the scripts' work files there.
  const tmpOf = () => path.join(cwd, 'tmp');
  const env = () => {
    fs.mkdirSync(tmpOf(), { recursive: true });
    return bareEnv({
      DOCKER_HOST: engine.host,
      RLVR_LOCAL_GPU_DEVICES: 'none',
      XDG_CACHE_HOME: path.join(cwd, '.cache'),
      TMPDIR: tmpOf(),
    });
  };
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
    // Stop once every shard has finished some prompts (in its work file: the run folder has them in
    // segments, sealed a minute apart or at the stop).
    for (;;) {
      const counts = Array.from({ length: SHARDS }, (_, i) => {
        const f = workFile(tmpOf(), i);
        return f ? resultIds(f).length : 0;
      });
      if (counts.every((c) => c >= 2)) break;
      if (Date.now() > deadline) throw new Error(`no progress to stop at:\n${output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGINT');
    await exited;
    const runDir1 = path.join(runsDir, firstRun()!);
    // The stop sealed what each shard had finished: the run folder has it all.
    const done1 = Array.from({ length: SHARDS }, (_, i) => streamIds(runDir1, i));
    const total1 = done1.flat().length;
    expect(total1).toBeGreaterThanOrEqual(2 * SHARDS);
    expect(total1).toBeLessThan(PROMPTS);
    expect(output).toMatch(/continue it: the same command with --continue/);
    // An older job's single results file with a line cut off by its stop, read before the segments.
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
      const ids = streamIds(runDir2, i);
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
      // The prompts and completions have each finished prompt, in the results' order (a completions line
      // sealed before the stop whose result was not is generated again: readers keep one of the two).
      expect(firstOfEach(streamIds(runDir2, i, 'completions.jsonl'))).toEqual(ids);
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
  it('killed hard mid-segment (the unsealed tail lost) and continued: every prompt exactly once', async () => {
    // Slow enough that a segment is sealed by age (a minute) well before the shards end: 30 prompts a
    // shard, 2 a batch, 6 s a batch.
    const prompts = 60;
    const shards = 2;
    const slowModel = writeCheckpoint(path.join(tempDir('rlvr-passk-slow-model-'), 'base'));
    fs.writeFileSync(path.join(slowModel, 'fixture-passk.json'), JSON.stringify({ batchDelayS: 6 }));
    const slowData = tempDir('rlvr-passk-gsm8k-slow-');
    fs.writeFileSync(
      path.join(slowData, 'dataset_info.json'),
      JSON.stringify({ splits: { train: { name: 'train', num_examples: prompts } } }),
    );
    fs.writeFileSync(path.join(slowData, 'state.json'), JSON.stringify({ _data_files: [] }));
    const slowCwd = tempDir('rlvr-passk-kill-');
    const slowArgs = args().map((a) => (a === modelDir ? slowModel : a === datasetDir ? slowData : a));
    slowArgs[slowArgs.indexOf('--gpus') + 1] = `0-${shards - 1}`;
    const slowEnv = { ...env(), TMPDIR: path.join(slowCwd, 'tmp') };
    fs.mkdirSync(slowEnv.TMPDIR, { recursive: true });
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'rlvr.js'), ...slowArgs], {
      cwd: slowCwd,
      env: slowEnv,
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    const runsDir = path.join(slowCwd, 'results');
    const run = () => fs.readdirSync(runsDir).find((n) => n.startsWith('passk'));
    const deadline = Date.now() + 240_000;
    // Killed once every shard has a sealed segment and, in its work file, prompts past it.
    let runDir1 = '';
    for (;;) {
      runDir1 = fs.existsSync(runsDir) && run() ? path.join(runsDir, run()!) : '';
      const ready = Array.from({ length: shards }, (_, i) => {
        const sealed = runDir1 ? streamIds(runDir1, i).length : 0;
        const f = workFile(slowEnv.TMPDIR, i);
        return sealed > 0 && f !== undefined && resultIds(f).length > sealed;
      });
      if (ready.every(Boolean)) break;
      if (Date.now() > deadline) throw new Error(`no segment to kill after:\n${output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // What the scripts had written just before the kill (the local run removes its /opt/ml after).
    const written = Array.from({ length: shards }, (_, i) => resultIds(workFile(slowEnv.TMPDIR, i)!));
    // SIGKILL to the job's container: nothing is sealed at a stop that never comes.
    const docker = await runCommand(
      'docker',
      ['-H', engine.host, 'ps', '-q', '--filter', 'label=rlvr.local-run'],
      { env: bareEnv() },
    );
    const containers = docker.stdout.trim().split(/\s+/).filter(Boolean);
    expect(containers.length).toBeGreaterThan(0);
    await runCommand('docker', ['-H', engine.host, 'kill', '--signal', 'KILL', ...containers], {
      env: bareEnv(),
    });
    const gone = setTimeout(() => child.kill('SIGKILL'), 60_000);
    await exited;
    clearTimeout(gone);
    // Read after the kill: a segment sealed in between is not lost.
    const sealed = Array.from({ length: shards }, (_, i) => streamIds(runDir1, i));
    const lost = written.map((ids, i) => ids.filter((id) => !sealed[i].includes(id)));
    expect(lost.flat().length).toBeGreaterThan(0);

    const r = await runCli([...slowArgs, '--continue', runDir1], { cwd: slowCwd, env: slowEnv });
    expect({ code: r.code, out: r.code ? (r.stdout + r.stderr).slice(-4000) : '' }).toEqual({
      code: 0,
      out: '',
    });
    const runDir2 = /run folder (\S+)/.exec(r.stdout)![1];
    for (let i = 0; i < shards; i++) {
      const generatedNow = fs
        .readFileSync(path.join(runDir2, 'passk', `shard_${i}`, 'fixture-generated.txt'), 'utf8')
        .trim()
        .split('\n');
      // The sealed prompts are skipped; those of the lost tail are generated again.
      expect(generatedNow.filter((id) => sealed[i].includes(id))).toEqual([]);
      for (const id of lost[i]) expect(generatedNow).toContain(id);
      const ids2 = streamIds(runDir2, i);
      expect(new Set(ids2).size).toBe(ids2.length);
    }
    const merged = await runCli(['passk', 'results', runDir2, '--format', 'json'], {
      cwd: slowCwd,
      env: slowEnv,
    });
    expect(merged.code).toBe(0);
    const [results] = JSON.parse(merged.stdout);
    expect(results.prompts).toHaveLength(prompts);
    expect(new Set(results.prompts.map((p: { promptId: string }) => p.promptId)).size).toBe(prompts);
    expect(results.duplicates).toBe(0);
    expect(results.badLines).toEqual([]);
  }, 600_000);
});
