import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bareEnv } from '../helpers/cli';
import { writeCheckpoint } from '../helpers/eval';
import { REPO_ROOT, tempDir } from '../helpers/fixtures';
import { passkCampaignFolder } from '../helpers/passk';
import { theirRepository } from '../helpers/python';

/*
 * Readers of folders others can write, found by a review of the commands added since the last hardening
 * pass: a FIFO where a reader expects a file must be refused or passed over, never waited on, and a link
 * must not lead a reader out of the folder it was given. Each command runs in its own process, killed
 * (and the test failed) if it outlives 20 s: before the fix each of these waited on its FIFO forever.
 */

function run(
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string; hung: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'rlvr.js'), ...args], {
      cwd,
      env: bareEnv({ XDG_CACHE_HOME: path.join(cwd, '.cache') }),
    });
    let stdout = '';
    let stderr = '';
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, 20_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr, hung });
    });
  });
}

const mkfifo = (file: string) => execFileSync('mkfifo', [file]);

jest.setTimeout(60_000);

describe('readers of run folders and inputs never wait on a FIFO', () => {
  let repo: string;
  let model: string;
  let dataset: string;
  beforeAll(() => {
    repo = theirRepository();
    model = writeCheckpoint(path.join(tempDir('rlvr-model-'), 'base'));
    dataset = tempDir('rlvr-gsm8k-');
    fs.writeFileSync(
      path.join(dataset, 'dataset_info.json'),
      JSON.stringify({ splits: { train: { name: 'train', num_examples: 40 } } }),
    );
  });
  const passkArgs = (datasetDir: string, resultsDir: string) => [
    'passk',
    '--dry-run',
    '--local',
    '--gpus',
    '0',
    '--model',
    model,
    '--dataset',
    'gsm8k',
    '--trainer-src',
    repo,
    '--dataset-dir',
    datasetDir,
    '--results-dir',
    resultsDir,
  ];

  it('passk --dry-run passes over an earlier campaign whose plan is a FIFO (the rate it looks for)', async () => {
    const cwd = tempDir();
    const results = path.join(cwd, 'results');
    fs.mkdirSync(path.join(results, 'c1'), { recursive: true });
    mkfifo(path.join(results, 'c1', 'passk-plan.json'));
    const r = await run(passkArgs(dataset, results), cwd);
    expect(r.hung).toBe(false);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code).toBe(0);
  });

  it('guard: passk --dry-run plans with a well-formed dataset folder and no earlier campaign', async () => {
    const cwd = tempDir();
    const r = await run(passkArgs(dataset, path.join(cwd, 'results')), cwd);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/dataset +gsm8k split train .*\(40 prompts\)/);
  });

  it('passk --dataset-dir whose dataset_info.json is a FIFO: exit 2, not a wait', async () => {
    const cwd = tempDir();
    const bad = tempDir('rlvr-fifo-dataset-');
    mkfifo(path.join(bad, 'dataset_info.json'));
    const r = await run(passkArgs(bad, path.join(cwd, 'results')), cwd);
    expect(r.hung).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/dataset_info\.json \(a regular file\)/);
  });

  it('a config that is a FIFO: exit 2 "not a regular file" (lint and submit read it alike)', async () => {
    const cwd = tempDir();
    mkfifo(path.join(cwd, 'config.yaml'));
    const r = await run(['lint', 'config.yaml'], cwd);
    expect(r.hung).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config\.yaml: not a regular file \(a FIFO\)/);
  });
});

describe('curriculum sft and build: the same checks as passk results', () => {
  it('sft: a run folder whose passk/ links outside it is refused (exit 2), as passk results refuses it', async () => {
    const run1 = passkCampaignFolder({ shards: 1, prompts: 4, n: 4, correctOf: (i) => i % 3 });
    const outside = tempDir('rlvr-outside-');
    fs.renameSync(path.join(run1, 'passk'), path.join(outside, 'passk'));
    fs.symlinkSync(path.join(outside, 'passk'), path.join(run1, 'passk'));
    const cwd = tempDir();
    const results = await run(['passk', 'results', run1], cwd);
    expect(results.stdout + results.stderr).toMatch(/outside the run folder/);
    const r = await run(['curriculum', 'sft', '--from', run1, '--out', path.join(cwd, 'sft.jsonl')], cwd);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/passk leads through a link to .*outside the run folder: not read/);
    expect(fs.existsSync(path.join(cwd, 'sft.jsonl'))).toBe(false);
  });

  it('sft says where it keeps prompts their script would drop: shards after a missing one', async () => {
    const run1 = passkCampaignFolder({ shards: 3, prompts: 12, n: 4, correctOf: () => 1 });
    fs.rmSync(path.join(run1, 'passk', 'shard_1'), { recursive: true });
    const cwd = tempDir();
    const r = await run(
      ['curriculum', 'sft', '--from', run1, '--out', 'sft.jsonl', '--max-pass-rate', '0.5', '--json'],
      cwd,
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /note: .*: shard_1 is missing\. Their build_sft_from_pass_at_k\.py reads shards from shard_0 until the first one missing, so it would leave out the prompts of the shards after it; this set keeps them\./,
    );
    const ids = fs
      .readFileSync(path.join(cwd, 'sft.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { prompt_id: string }).prompt_id);
    // Shard 2's prompts (8–11) are in the set.
    expect(ids.filter((id) => /^gsm8k_(8|9|10|11)$/.test(id)).sort()).toEqual([
      'gsm8k_10',
      'gsm8k_11',
      'gsm8k_8',
      'gsm8k_9',
    ]);
  });

  it('build --dry-run refuses the --out the real run would refuse (a folder), writing nothing', async () => {
    const run1 = passkCampaignFolder({ shards: 1, prompts: 4, n: 4, correctOf: (i) => i % 3 });
    const cwd = tempDir();
    fs.mkdirSync(path.join(cwd, 'o'));
    const r = await run(
      ['curriculum', 'build', '--from', run1, '--name', 'pass-at-4/x', '--dry-run', '--out', 'o'],
      cwd,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/o is a folder/);
    const ok = await run(
      ['curriculum', 'build', '--from', run1, '--name', 'pass-at-4/x', '--dry-run', '--out', 'o/x.txt'],
      cwd,
    );
    expect(ok.code).toBe(0);
    expect(fs.readdirSync(path.join(cwd, 'o'))).toEqual([]);
  });
});
