/*
 * Results files and plans anyone could have written: counts no campaign has must not make the merge spin,
 * a plan must not send the reader outside its run folder, and a table whose rows average over different
 * prompts (n differs across prompts) must say so.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  mergeShards,
  passkJson,
  passkMarkdown,
  readPasskFolder,
  type MergedPasskResults,
  type PasskJobPlan,
} from '../../lib/passk-records';
import { kValues, passAtKTable, unbiasedPassAtK } from '../../lib/passk-records/estimator';
import { bareEnv, type CliResult } from '../helpers/cli';
import { REPO_ROOT, tempDir } from '../helpers/fixtures';
import { passAtKByHand, passkPlan } from '../helpers/passk';

/**
 * The CLI in its own process, killed (SIGKILL: a busy event loop never sees SIGTERM) when it outlives
 * `limitMs`; `ms` is how long it ran.
 */
function runCliWithin(
  args: string[],
  limitMs: number,
  cwd: string,
): Promise<CliResult & { ms: number; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'rlvr.js'), ...args], {
      cwd,
      env: bareEnv(),
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, limitMs);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr, ms: Date.now() - started, killed });
    });
  });
}

function writeShard(base: string, index: number, lines: readonly string[]): string {
  const dir = path.join(base, `shard_${index}`);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'verification_results.jsonl');
  fs.writeFileSync(file, lines.map((l) => `${l}\n`).join(''));
  return file;
}

const scores = (id: string, s: number[]): string => JSON.stringify({ prompt_id: id, scores: s });

describe('counts no campaign has: the work is bounded', () => {
  const huge = '{"prompt_id":"x","num_completions":200000000,"num_correct":100000000}';

  it('reports a line with more completions than any campaign as a bad line, at once', async () => {
    const started = Date.now();
    const r = await mergeShards({ source: 'mem', shards: [{ index: 0, lines: [huge] }] });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(r.prompts).toEqual([]);
    expect(r.badLines).toEqual([{ shard: 0, line: 1, why: expect.stringMatching(/200000000.*65536/) }]);
    expect(r.passAtK).toEqual([]);
  });

  it('keeps k on a ladder with a cap, whatever n is', () => {
    expect(kValues(4e12).at(-1)).toBe(1024);
    expect(kValues(4e12)).toHaveLength(11);
    const table = passAtKTable([
      { promptId: 'a', n: 65536, c: 32768, passRate: 0.5, firstCorrect: -1, shard: 0 },
    ]);
    expect(table.map((p) => p.k)).toEqual(kValues(1024));
  });

  it('an estimate costs no more than min(c, k) steps: a large n and c are quick', () => {
    const started = Date.now();
    for (let i = 0; i < 2000; i++) unbiasedPassAtK(65536, 30000, 1024);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(() => unbiasedPassAtK(4e12, 1, 1)).toThrow(/65536/);
  });

  it('guard: a campaign at the ceiling is taken, its figures the estimator’s', async () => {
    const r = await mergeShards({
      source: 'mem',
      shards: [
        {
          index: 0,
          lines: [
            '{"prompt_id":"big","num_completions":65536,"num_correct":300}',
            scores('small', [1, 0, 0, 1, 0, 0, 0, 0]),
          ],
        },
      ],
    });
    expect(r.badLines).toEqual([]);
    expect(r.prompts.map((p) => [p.promptId, p.n, p.c])).toEqual([
      ['big', 65536, 300],
      ['small', 8, 2],
    ]);
    expect(r.passAtK.map((p) => p.k)).toEqual(kValues(1024));
    expect(r.passAtK[3]).toMatchObject({ k: 8, prompts: 2 });
    expect(r.passAtK[3].unbiased).toBeCloseTo((unbiasedPassAtK(65536, 300, 8) + 1) / 2, 14);
    expect(unbiasedPassAtK(512, 37, 64)).toBeCloseTo(passAtKByHand(512, 37, 64), 12);
    expect(unbiasedPassAtK(512, 200, 16)).toBeCloseTo(passAtKByHand(512, 200, 16), 12);
  });

  it('`passk results` finishes in well under 10 s on such lines, naming each at shard and line', async () => {
    const dir = tempDir();
    writeShard(dir, 0, [scores('ok', [1, 0, 1, 0])]);
    writeShard(dir, 1, [huge]);
    writeShard(dir, 2, ['{"prompt_id":"y","num_completions":4000000000000,"num_correct":2000000000000}']);
    const r = await runCliWithin(['passk', 'results', dir], 30_000, dir);
    expect(r.killed).toBe(false);
    expect(r.ms).toBeLessThan(10_000);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('shard 1 line 1: num_completions 200000000');
    expect(r.stdout).toContain('shard 2 line 1: num_completions 4000000000000');
    expect(r.stdout).toContain('| 4 | 100.00% |');
    expect(r.stdout.split('\n').filter((l) => l.startsWith('| ')).length).toBeLessThan(10);
  });
});

describe('SIGTERM ends a command promptly', () => {
  /** Spawns the CLI, sends SIGTERM after `afterMs`, and says how long it took to end after the signal. */
  function terminated(args: string[], cwd: string, afterMs: number) {
    return new Promise<{ endedMs: number; signalled: boolean; code: number | null; signal: string | null }>(
      (resolve, reject) => {
        const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'rlvr.js'), ...args], {
          cwd,
          env: bareEnv(),
          stdio: 'ignore',
        });
        let sentAt = 0;
        const term = setTimeout(() => {
          sentAt = Date.now();
          child.kill('SIGTERM');
        }, afterMs);
        const kill = setTimeout(() => child.kill('SIGKILL'), afterMs + 10_000);
        child.on('error', reject);
        child.on('close', (code, signal) => {
          clearTimeout(term);
          clearTimeout(kill);
          resolve({ endedMs: sentAt ? Date.now() - sentAt : -1, signalled: sentAt > 0, code, signal });
        });
      },
    );
  }

  it('`passk results` stops within a second while merging a large campaign', async () => {
    const dir = tempDir();
    const line = (i: number) =>
      scores(
        `gsm8k_${i}`,
        Array.from({ length: 256 }, (_, j) => ((i + j) % 3 === 0 ? 1 : 0)),
      );
    for (let shard = 0; shard < 4; shard++)
      writeShard(
        dir,
        shard,
        Array.from({ length: 20_000 }, (_, i) => line(shard * 20_000 + i)),
      );
    // And a record whose counts once kept the estimator spinning, deaf to signals, for ten minutes.
    fs.appendFileSync(
      path.join(dir, 'shard_0', 'verification_results.jsonl'),
      '{"prompt_id":"y","num_completions":4000000000000,"num_correct":2000000000000}\n',
    );
    const r = await terminated(['passk', 'results', dir], dir, 400);
    // Still busy when the signal came (the merge of 80,000 records takes seconds), and ended promptly.
    expect(r.signalled).toBe(true);
    expect(r.signal === 'SIGTERM' || r.code === 130 || r.code === 143).toBe(true);
    expect(r.endedMs).toBeLessThan(1_000);
  });
});

describe('a plan’s paths stay inside its run folder', () => {
  /** A run folder `runs/run-a` whose plan names `files`, and a results file outside it that must not be read. */
  function runFolder(files: Partial<PasskJobPlan['files']>): { root: string; run: string } {
    const root = tempDir();
    const run = path.join(root, 'runs', 'run-a');
    fs.mkdirSync(path.join(run, 'passk', 'shard_0'), { recursive: true });
    const plan = passkPlan(1);
    fs.writeFileSync(
      path.join(run, 'passk-plan.json'),
      JSON.stringify({ ...plan, files: { ...plan.files, ...files } }),
    );
    // where `../../../elsewhere/shard_3/…` from run-a/passk/shard_0 lands
    writeShard(path.join(root, 'runs', 'elsewhere'), 3, [scores('outside-secret', [1, 1])]);
    return { root, run };
  }

  it.each([
    ['a results file up out of it', { results: '../../../elsewhere/shard_3/verification_results.jsonl' }],
    ['a shard folder up out of it', { shardFolder: '../../elsewhere/shard_3' }],
  ])('`passk results` refuses %s: the plan is bad (exit 2), nothing outside read', async (_what, files) => {
    const { run } = runFolder(files);
    const r = await runCliWithin(['passk', 'results', run, '--prompts'], 30_000, run);
    expect(r.stdout).not.toContain('outside-secret');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/passk-plan\.json.*\.\..*outside the run folder/);
  });

  it('refuses an absolute results path', async () => {
    const { root, run } = runFolder({});
    const abs = path.join(root, 'runs', 'elsewhere', 'shard_3', 'verification_results.jsonl');
    const plan = JSON.parse(fs.readFileSync(path.join(run, 'passk-plan.json'), 'utf8')) as PasskJobPlan;
    fs.writeFileSync(
      path.join(run, 'passk-plan.json'),
      JSON.stringify({ ...plan, files: { ...plan.files, results: abs } }),
    );
    await expect(readPasskFolder(run)).rejects.toThrow(/passk-plan\.json.*absolute/);
  });

  it('refuses a path that leads out through a link', async () => {
    const { root, run } = runFolder({ results: 'out/verification_results.jsonl' });
    fs.symlinkSync(
      path.join(root, 'runs', 'elsewhere', 'shard_3'),
      path.join(run, 'passk', 'shard_0', 'out'),
    );
    await expect(readPasskFolder(run)).rejects.toMatchObject({
      code: 'BadPasskPlan',
      message: expect.stringMatching(/link.*outside the run folder/),
    });
  });

  it('a job’s plan (read from S3) naming paths outside is refused before any shard is opened', async () => {
    const plan = passkPlan(1);
    let opened = false;
    async function* lines(): AsyncGenerator<string> {
      opened = true;
      yield scores('outside-secret', [1]);
    }
    await expect(
      mergeShards({
        source: 'job',
        plan: { ...plan, files: { ...plan.files, results: '../../other-job/verification_results.jsonl' } },
        shards: [{ index: 0, lines: lines() }],
      }),
    ).rejects.toMatchObject({ code: 'BadPasskPlan' });
    expect(opened).toBe(false);
  });

  it('guard: names nested inside the run folder still read', async () => {
    const root = tempDir();
    const run = path.join(root, 'run-b');
    const plan = passkPlan(2);
    fs.mkdirSync(path.join(run, 'passk', 'gpu-0', 'out'), { recursive: true });
    fs.mkdirSync(path.join(run, 'passk', 'gpu-1', 'out'), { recursive: true });
    fs.writeFileSync(
      path.join(run, 'passk-plan.json'),
      JSON.stringify({
        ...plan,
        files: { ...plan.files, shardFolder: 'gpu-{shard}', results: 'out/r.jsonl' },
      }),
    );
    fs.writeFileSync(path.join(run, 'passk', 'gpu-0', 'out', 'r.jsonl'), `${scores('p0', [1, 0])}\n`);
    fs.writeFileSync(path.join(run, 'passk', 'gpu-1', 'out', 'r.jsonl'), `${scores('p1', [0, 0])}\n`);
    const r = await readPasskFolder(run);
    expect(r?.prompts.map((p) => p.promptId)).toEqual(['p0', 'p1']);
    expect(r?.missingShards).toEqual([]);
  });
});

describe('n differs across prompts: said beside the table', () => {
  const unequal = [scores('a', [1]), scores('b', [0, 0, 0, 0])];

  async function merged(lines: string[]): Promise<MergedPasskResults> {
    return mergeShards({ source: 'mem', shards: [{ index: 0, lines }] });
  }

  it('the merge names the spread of n and the k that average over fewer prompts', async () => {
    const r = await merged(unequal);
    expect(r.passAtK.map((p) => [p.k, p.unbiased, p.prompts])).toEqual([
      [1, 0.5, 2],
      [2, 0, 1],
      [4, 0, 1],
    ]);
    expect(r.unequalN).toEqual({ minN: 1, maxN: 4, prompts: 2, fewerPromptsAtK: [2, 4] });
  });

  it('md (the terminal’s text) and json say it', async () => {
    const r = await merged(unequal);
    const md = passkMarkdown([r]);
    expect(md).toMatch(/n differs across prompts \(1–4\).*pass@2 and pass@4 average over fewer prompts/);
    const json = JSON.parse(passkJson([r])) as MergedPasskResults[];
    expect(json[0].unequalN?.fewerPromptsAtK).toEqual([2, 4]);
  });

  it('`passk results` says it in md and json', async () => {
    const dir = tempDir();
    writeShard(dir, 0, unequal);
    const md = await runCliWithin(['passk', 'results', dir], 30_000, dir);
    expect(md.code).toBe(0);
    expect(md.stdout).toMatch(/n differs across prompts/);
    const json = await runCliWithin(['passk', 'results', dir, '--format', 'json'], 30_000, dir);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as MergedPasskResults[])[0].unequalN).toMatchObject({ minN: 1, maxN: 4 });
  });

  it('guard: equal n says nothing of it', async () => {
    const r = await merged([scores('a', [1, 0]), scores('b', [0, 0])]);
    expect(r.unequalN).toBeUndefined();
    expect(passkMarkdown([r])).not.toMatch(/differs/);
    expect(passkJson([r])).not.toMatch(/unequalN/);
  });
});
