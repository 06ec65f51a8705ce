import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { packSource, stageSource } from '../../lib/source';
import { makeTrainerRepo, tempDir } from '../helpers/fixtures';

function tarNames(gz: Buffer): string[] {
  const tar = gunzipSync(gz);
  const names: string[] = [];
  for (let off = 0; off + 512 <= tar.length;) {
    const name = tar
      .subarray(off, off + 100)
      .toString('utf8')
      .replace(/\0.*$/s, '');
    if (!name) break;
    const size = parseInt(
      tar
        .subarray(off + 124, off + 136)
        .toString('utf8')
        .replace(/\0.*$/s, '')
        .trim() || '0',
      8,
    );
    names.push(name);
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return names;
}

describe('staging the trainer source', () => {
  it('ships tracked files plus untracked files git does not ignore — including *.json, *.txt, *.md', async () => {
    const { root } = makeTrainerRepo({
      files: { 'docs/notes.md': 'n', 'prompts/system.txt': 'p', 'cfg.json': '{}' },
    });
    fs.writeFileSync(path.join(root, 'untracked.py'), 'x');
    fs.mkdirSync(path.join(root, 'data'));
    fs.writeFileSync(path.join(root, 'data', 'ignored.txt'), 'big');
    fs.writeFileSync(path.join(root, 'run.log'), 'log');
    const staged = await stageSource({ root });
    const files = staged.files.map((f) => f.path);
    expect(files).toEqual(
      expect.arrayContaining([
        'cfg.json',
        'docs/notes.md',
        'prompts/system.txt',
        'untracked.py',
        'configs/gsm8k.yaml',
      ]),
    );
    expect(files).not.toContain('data/ignored.txt');
    expect(files).not.toContain('run.log');
    expect(staged.isGit).toBe(true);
  });

  it('adds ignored files named by include globs and removes excluded ones', async () => {
    const { root } = makeTrainerRepo();
    fs.mkdirSync(path.join(root, 'data'));
    fs.writeFileSync(path.join(root, 'data', 'order.txt'), '1\n2\n');
    const staged = await stageSource({ root, include: ['data/*.txt'], exclude: ['entrypoints/eval_*.py'] });
    const files = staged.files.map((f) => f.path);
    expect(files).toContain('data/order.txt');
    expect(files).not.toContain('entrypoints/eval_benchmarks.py');
    expect(staged.excluded).toEqual(['entrypoints/eval_benchmarks.py']);
  });

  it('refuses a source that is mostly data, naming the largest files', async () => {
    const { root } = makeTrainerRepo();
    fs.writeFileSync(path.join(root, 'weights.bin'), Buffer.alloc(2048));
    await expect(stageSource({ root, maxBytes: 1024 })).rejects.toThrow(
      /weights\.bin \(0\.0 MB\).*rlvr upload/s,
    );
  });

  it('stages a plain folder (not git) without VCS and cache files', async () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, '__pycache__'));
    fs.writeFileSync(path.join(root, '__pycache__', 'a.pyc'), 'x');
    fs.writeFileSync(path.join(root, 'train.py'), 'x');
    const staged = await stageSource({ root });
    expect(staged.files.map((f) => f.path)).toEqual(['train.py']);
    expect(staged.isGit).toBe(false);
  });
});

describe('packing', () => {
  it('is reproducible: same files → same bytes, whatever the mtimes; a content change → another hash', async () => {
    const { root } = makeTrainerRepo();
    const first = await packSource(await stageSource({ root }));
    const later = new Date(Date.now() + 3600_000);
    for (const f of ['pyproject.toml', 'entrypoints/train_grpo_sft.py'])
      fs.utimesSync(path.join(root, f), later, later);
    const second = await packSource(await stageSource({ root }));
    expect(second.sha256).toBe(first.sha256);
    expect(second.gzip.equals(first.gzip)).toBe(true);
    fs.appendFileSync(path.join(root, 'entrypoints', 'train_grpo_sft.py'), '# change\n');
    const third = await packSource(await stageSource({ root }));
    expect(third.sha256).not.toBe(first.sha256);
  });

  it('is the same for two clones of one commit', async () => {
    const { root } = makeTrainerRepo();
    const clone = path.join(tempDir(), 'clone');
    execFileSync('git', ['clone', '-q', root, clone]);
    const a = await packSource(await stageSource({ root }));
    const b = await packSource(await stageSource({ root: clone }));
    expect(b.sha256).toBe(a.sha256);
  });

  it('holds exactly the staged files, sorted, readable by tar', async () => {
    const { root } = makeTrainerRepo();
    const staged = await stageSource({ root });
    const packed = await packSource(staged);
    expect(tarNames(packed.gzip)).toEqual(staged.files.map((f) => f.path));
    const out = tempDir();
    const tarball = path.join(out, 's.tar.gz');
    fs.writeFileSync(tarball, packed.gzip);
    execFileSync('tar', ['-xzf', tarball, '-C', out]);
    expect(fs.readFileSync(path.join(out, 'entrypoints', 'train_grpo_sft.py'), 'utf8')).toBe(
      'print("train")\n',
    );
  });
});
