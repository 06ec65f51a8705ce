import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bareEnv, runCli } from '../helpers/cli';
import { tempDir } from '../helpers/fixtures';
import { passkCampaignFolder } from '../helpers/passk';

/**
 * `curriculum build|sft --out`, written as a careless or hostile user would give it: a link planted at
 * the name a writer might use for its temporary file, a folder, a FIFO, a symlink. Only an absent name or
 * a regular file is ever written, atomically; anything else is exit 2 with nothing written. No AWS.
 */
const N = 4;
const campaign = () => passkCampaignFolder({ shards: 1, prompts: 6, n: N, correctOf: (i) => i % (N + 1) });

const build = (cwd: string, out: string) =>
  runCli(['curriculum', 'build', '--from', campaign(), '--name', 'x', '--out', out], { cwd, env: bareEnv() });
const sft = (cwd: string, out: string) =>
  runCli(['curriculum', 'sft', '--from', campaign(), '--out', out], { cwd, env: bareEnv() });

describe('curriculum build|sft --out', () => {
  it('a link planted at a temporary name beside the file is never followed: the victim is untouched', async () => {
    const cwd = tempDir('rlvr-out-');
    const victim = path.join(tempDir('rlvr-victim-'), 'victim.txt');
    fs.writeFileSync(victim, 'precious\n');
    fs.mkdirSync(path.join(cwd, 'o'));
    for (const planted of ['x.txt.partial', 'x.txt.tmp', 'x.jsonl.partial'])
      fs.symlinkSync(victim, path.join(cwd, 'o', planted));
    const r = await build(cwd, 'o/x.txt');
    expect({ code: r.code, err: r.stderr }).toEqual({ code: 0, err: '' });
    const s = await sft(cwd, 'o/x.jsonl');
    expect({ code: s.code, err: s.stderr }).toEqual({ code: 0, err: '' });
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n');
    for (const f of ['x.txt', 'x.jsonl']) expect(fs.lstatSync(path.join(cwd, 'o', f)).isFile()).toBe(true);
    expect(fs.readFileSync(path.join(cwd, 'o', 'x.txt'), 'utf8').split('\n')[0]).toBe('gsm8k_4');
  });

  it('says where it wrote the file and how to upload it; the config lines name where jobs read it (S3)', async () => {
    const cwd = tempDir('rlvr-out-');
    const r = await build(cwd, 'o/o3.txt');
    expect(r.code).toBe(0);
    const out = path.join(cwd, 'o', 'o3.txt');
    expect(r.stdout).toContain(`Order file ${out}`);
    expect(r.stdout).toContain(
      `written to ${out}, not uploaded (--out): jobs read order files from S3, so upload it first: rlvr upload curricula ${out} --name x.txt`,
    );
    expect(r.stdout).toContain('order: "s3://unresolved-bucket/rlvr-experiments/curricula/x.txt"');
    expect(r.stdout).not.toMatch(new RegExp(`order: ${out}`));
  });

  it('writes the build record beside the file (<file>.json, of its sha256); --dry-run writes neither', async () => {
    const cwd = tempDir('rlvr-out-');
    const dry = await runCli(
      ['curriculum', 'build', '--from', campaign(), '--name', 'x', '--out', 'o/r.txt', '--dry-run'],
      { cwd, env: bareEnv() },
    );
    expect(dry.code).toBe(0);
    expect(fs.readdirSync(cwd)).toEqual([]);
    const r = await build(cwd, 'o/r.txt');
    expect(r.code).toBe(0);
    const file = path.join(cwd, 'o', 'r.txt');
    expect(fs.readdirSync(path.join(cwd, 'o')).sort()).toEqual(['r.txt', 'r.txt.json']);
    const record = JSON.parse(fs.readFileSync(`${file}.json`, 'utf8'));
    expect(record).toMatchObject({
      orderFile: 'x.txt',
      sha256: createHash('sha256').update(fs.readFileSync(file)).digest('hex'),
      prompts: 6,
      key: 'rate',
      order: 'easy-first',
      datasetIds: { why: expect.any(String) },
    });
    expect(r.stdout).toContain(`build record (sources, key, band, gaps, sha256): ${file}.json`);
    expect(r.stdout).toContain(`rlvr upload curricula ${file}.json --name x.txt.json`);
  });

  it('a folder, FIFO or symlink where the build record goes is exit 2: neither file written', async () => {
    const cwd = tempDir('rlvr-out-');
    fs.mkdirSync(path.join(cwd, 'a.txt.json'));
    execFileSync('mkfifo', [path.join(cwd, 'b.txt.json')]);
    fs.writeFileSync(path.join(cwd, 'target'), 'kept\n');
    fs.symlinkSync(path.join(cwd, 'target'), path.join(cwd, 'c.txt.json'));
    const before = fs.readdirSync(cwd).sort();
    for (const [out, says] of [
      ['a.txt', 'a.txt.json is a folder'],
      ['b.txt', 'b.txt.json is a FIFO, not a regular file'],
      ['c.txt', 'c.txt.json is a symlink, which is not followed'],
    ] as const) {
      const r = await build(cwd, out);
      expect({ out, code: r.code }).toEqual({ out, code: 2 });
      expect(r.stderr).toContain(says);
    }
    expect(fs.readdirSync(cwd).sort()).toEqual(before);
    expect(fs.readFileSync(path.join(cwd, 'target'), 'utf8')).toBe('kept\n');
  });

  it('an existing folder, a FIFO or a symlink as --out is exit 2, nothing written, the thing untouched', async () => {
    const cwd = tempDir('rlvr-out-');
    fs.mkdirSync(path.join(cwd, 'o'));
    execFileSync('mkfifo', [path.join(cwd, 'fifo')]);
    fs.writeFileSync(path.join(cwd, 'target.txt'), 'kept\n');
    fs.symlinkSync(path.join(cwd, 'target.txt'), path.join(cwd, 'link.txt'));
    const before = fs.readdirSync(cwd).sort();
    for (const [run, out, says] of [
      [build, 'o', 'o is a folder'],
      [build, 'o/', 'o is a folder'],
      [build, 'fifo', 'fifo is a FIFO, not a regular file'],
      [build, 'link.txt', 'link.txt is a symlink, which is not followed'],
      [sft, 'link.txt', 'link.txt is a symlink, which is not followed'],
      [sft, 'o', 'o is a folder'],
      [build, 'target.txt/x.txt', 'a part of it that should be a folder is a file'],
    ] as const) {
      const r = await run(cwd, out);
      expect({ out, code: r.code }).toEqual({ out, code: 2 });
      expect(r.stderr).toContain(says);
      expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    }
    expect(fs.readdirSync(cwd).sort()).toEqual(before);
    expect(fs.readdirSync(path.join(cwd, 'o'))).toEqual([]);
    expect(fs.lstatSync(path.join(cwd, 'fifo')).isFIFO()).toBe(true);
    expect(fs.lstatSync(path.join(cwd, 'link.txt')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(cwd, 'target.txt'), 'utf8')).toBe('kept\n');
  });
});

describe('curriculum sft reads run folders as a careless or hostile one leaves them', () => {
  const run = (cwd: string, from: string) =>
    runCli(['curriculum', 'sft', '--from', from, '--out', 'sft.jsonl'], { cwd, env: bareEnv() });

  it('a FIFO as the plan is exit 2 at once, naming it; a FIFO as a shard file is skipped and said', async () => {
    const cwd = tempDir('rlvr-sft-');
    const fifoPlan = campaign();
    fs.rmSync(path.join(fifoPlan, 'passk-plan.json'));
    execFileSync('mkfifo', [path.join(fifoPlan, 'passk-plan.json')]);
    const r = await run(cwd, fifoPlan);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('passk-plan.json: not a pass@k plan (not a regular file');
    expect(fs.existsSync(path.join(cwd, 'sft.jsonl'))).toBe(false);

    const fifoShard = campaign();
    const completions = path.join(fifoShard, 'passk', 'shard_0', 'completions.jsonl');
    fs.rmSync(completions);
    execFileSync('mkfifo', [completions]);
    const s = await run(cwd, fifoShard);
    expect(s.code).toBe(0);
    expect(s.stderr).toContain(`warning: ${completions}: not a regular file: not read; skipped`);
  }, 30_000);

  it('a line with a bad escape is reported at file:line and skipped; a plan that is not JSON is exit 2 naming it', async () => {
    const cwd = tempDir('rlvr-sft-');
    const dir = campaign();
    const results = path.join(dir, 'passk', 'shard_0', 'verification_results.jsonl');
    fs.appendFileSync(
      results,
      '{"prompt_id": "a\\q", "num_completions": 4, "num_correct": 1, "pass_rate": 0.25, "scores": [1, 0, 0, 0], "completions": []}\n',
    );
    const r = await run(cwd, dir);
    expect({ code: r.code, internal: /internal error/.test(r.stderr) }).toEqual({ code: 0, internal: false });
    expect(r.stderr).toMatch(new RegExp(`warning: ${results}:7: .*; skipped`));
    // The valid lines are still taken.
    expect(fs.readFileSync(path.join(cwd, 'sft.jsonl'), 'utf8').trim().split('\n').length).toBeGreaterThan(0);

    fs.writeFileSync(path.join(dir, 'passk-plan.json'), '{not json');
    const bad = await run(cwd, dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('passk-plan.json: not a pass@k plan');
    expect(bad.stderr).not.toMatch(/internal error|\n\s+at /);
  });
});
