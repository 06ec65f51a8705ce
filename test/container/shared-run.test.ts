import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  SharedRunMirror,
  sharedJobFolder,
  takeOverLeftovers,
  type SharedJobFolder,
} from '../../lib/container/shared-run';
import { SHARED_FILE_SYSTEM } from '../../lib/layout';
import { BUILT_IN_PROFILES } from '../../lib/trainers';
import { safetensorsWith, tempDir } from '../helpers/fixtures';

/** Their trainer's own run folder (its profile's): `<stem>_<timestamp>/` with run.json, traces/ and checkpoints/. */
const CONTRACT = { runFolder: BUILT_IN_PROFILES.find((p) => p.id === 'grpo-sft')!.runtime.runFolder };
const RUN = 'gsm8k_20261127-120000';

function setup() {
  const ml = tempDir('rlvr-shared-ml-');
  const channel = path.join(ml, 'input', 'data', 'shared');
  fs.mkdirSync(channel, { recursive: true });
  const shared = sharedJobFolder(channel, 'annotations-adhoc-20261127-120000')!;
  const runDir = path.join(ml, 'checkpoints');
  fs.mkdirSync(runDir, { recursive: true });
  fs.mkdirSync(path.join(shared.runRoot, RUN, 'traces'), { recursive: true });
  fs.mkdirSync(path.join(shared.runRoot, RUN, 'checkpoints'), { recursive: true });
  fs.writeFileSync(path.join(shared.runRoot, RUN, 'run.json'), '{"run_name": "gsm8k"}');
  const said: string[] = [];
  const mirror = new SharedRunMirror({
    shared,
    runDir,
    contract: CONTRACT,
    stableMs: 0,
    say: (l) => said.push(l),
  });
  return { ml, shared, runDir, mirror, said };
}

/** One look, waited for (look() itself returns at once so the head keeps answering its workers). */
async function lookAndWait(mirror: SharedRunMirror): Promise<void> {
  mirror.look();
  await (mirror as unknown as { running?: Promise<void> }).running;
}

function exportCheckpoint(shared: SharedJobFolder, name: string, whole: boolean, config = true): string {
  const dir = path.join(shared.runRoot, RUN, 'checkpoints', name);
  fs.mkdirSync(dir, { recursive: true });
  const file = safetensorsWith(Buffer.alloc(4096, 7));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), whole ? file : file.subarray(0, 1000));
  if (config) fs.writeFileSync(path.join(dir, 'config.json'), '{"model_type": "qwen3"}');
  return dir;
}

/** Every file under a folder, relative. */
function tree(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

describe('the job folder on the shared file system', () => {
  it('is rlvr-jobs/<job>/ with the run root and the shared folder in it; no channel, no folder', () => {
    const channel = tempDir('rlvr-shared-');
    expect(sharedJobFolder(channel, 'annotations-adhoc-1')).toEqual({
      root: path.join(channel, SHARED_FILE_SYSTEM.jobsFolder, 'annotations-adhoc-1'),
      runRoot: path.join(channel, 'rlvr-jobs', 'annotations-adhoc-1', 'run'),
      folder: path.join(channel, 'rlvr-jobs', 'annotations-adhoc-1', 'shared'),
    });
    expect(sharedJobFolder(path.join(channel, 'absent'), 'annotations-adhoc-1')).toBeUndefined();
  });

  it("makes any job name one folder inside the jobs folder (a local run's name may hold anything)", () => {
    const channel = tempDir('rlvr-shared-');
    const jobs = path.join(channel, 'rlvr-jobs');
    for (const name of ['../etc', 'a/b', '.hidden', '..', 'my config_20261127-150640']) {
      const root = sharedJobFolder(channel, name)!.root;
      expect(path.dirname(root)).toBe(jobs);
      expect(path.basename(root)).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);
    }
    expect(path.basename(sharedJobFolder(channel, 'qwen3-1.7B-gsm8k_20261127-150640')!.root)).toBe(
      'qwen3-1.7B-gsm8k_20261127-150640',
    );
  });
});

describe("the head's copy of the shared run root", () => {
  afterEach(() => jest.restoreAllMocks());

  it('copies the trainer files as they appear, the same paths in the run folder', async () => {
    const { shared, runDir, mirror } = setup();
    await lookAndWait(mirror);
    expect(fs.readFileSync(path.join(runDir, RUN, 'run.json'), 'utf8')).toBe('{"run_name": "gsm8k"}');
    // rewritten (not appended): copied whole again
    fs.writeFileSync(path.join(shared.runRoot, RUN, 'run.json'), '{"run_name": "gsm8k", "done": 1}');
    await lookAndWait(mirror);
    expect(fs.readFileSync(path.join(runDir, RUN, 'run.json'), 'utf8')).toBe(
      '{"run_name": "gsm8k", "done": 1}',
    );
  });

  it('a large growing trace: only the appended bytes are written, the copy equals the source', async () => {
    const { shared, runDir, mirror } = setup();
    const trace = path.join(shared.runRoot, RUN, 'traces', 'trace.jsonl');
    const line = (i: number) => `${JSON.stringify({ step: i, pad: 'x'.repeat(200) })}\n`;
    fs.writeFileSync(trace, Array.from({ length: 6000 }, (_, i) => line(i)).join(''));
    await lookAndWait(mirror);
    const copy = path.join(runDir, RUN, 'traces', 'trace.jsonl');
    const inode = fs.statSync(copy).ino;
    fs.appendFileSync(trace, line(6000) + line(6001));
    const copied = jest.spyOn(fs.promises, 'copyFile');
    await lookAndWait(mirror);
    expect(fs.readFileSync(copy).equals(fs.readFileSync(trace))).toBe(true);
    // appended in place: the same file, no whole copy
    expect(fs.statSync(copy).ino).toBe(inode);
    expect(copied).not.toHaveBeenCalled();
  });

  it('a large file rewritten (not appended) is copied whole, never spliced', async () => {
    const { shared, runDir, mirror } = setup();
    // Rewritten in place with the same bytes where the copy ends: only its kind tells it from an append.
    const f = path.join(shared.runRoot, RUN, 'traces', 'summary.json');
    fs.writeFileSync(f, Buffer.alloc(2 << 20, 'a'));
    await lookAndWait(mirror);
    fs.writeFileSync(f, Buffer.concat([Buffer.alloc(1 << 20, 'b'), Buffer.alloc(2 << 20, 'a')]));
    await lookAndWait(mirror);
    expect(fs.readFileSync(path.join(runDir, RUN, 'traces', 'summary.json')).equals(fs.readFileSync(f))).toBe(
      true,
    );
    // A JSONL file replaced by another (renamed over it) is a new file: copied whole too.
    const j = path.join(shared.runRoot, RUN, 'traces', 'samples.jsonl');
    fs.writeFileSync(j, Buffer.alloc(2 << 20, 'a'));
    await lookAndWait(mirror);
    fs.writeFileSync(`${j}.tmp`, Buffer.concat([Buffer.alloc(1 << 20, 'b'), Buffer.alloc(2 << 20, 'a')]));
    fs.renameSync(`${j}.tmp`, j);
    await lookAndWait(mirror);
    expect(
      fs.readFileSync(path.join(runDir, RUN, 'traces', 'samples.jsonl')).equals(fs.readFileSync(j)),
    ).toBe(true);
  });

  it('a checkpoint is copied only once it is complete, config.json last, once', async () => {
    const { shared, runDir, mirror, said } = setup();
    const dir = exportCheckpoint(shared, `${RUN}_step2`, false);
    await lookAndWait(mirror);
    const copied = path.join(runDir, RUN, 'checkpoints', `${RUN}_step2`);
    expect(fs.existsSync(copied)).toBe(false);
    exportCheckpoint(shared, `${RUN}_step2`, true);
    const order: string[] = [];
    const copyFile = fs.promises.copyFile.bind(fs.promises);
    jest.spyOn(fs.promises, 'copyFile').mockImplementation(async (src, dest, mode) => {
      order.push(path.basename(String(dest)));
      return copyFile(src, dest, mode);
    });
    await lookAndWait(mirror);
    expect(tree(copied)).toEqual(['config.json', 'model.safetensors']);
    // the marker the completeness rule reads goes in after the weights
    expect(order).toEqual(['model.safetensors', 'config.json']);
    expect(
      fs
        .readFileSync(path.join(copied, 'model.safetensors'))
        .equals(fs.readFileSync(path.join(dir, 'model.safetensors'))),
    ).toBe(true);
    await lookAndWait(mirror);
    await mirror.final();
    expect(order).toEqual(['model.safetensors', 'config.json']);
    expect(said.filter((l) => l.startsWith(`checkpoint ${RUN}_step2 copied`))).toHaveLength(1);
  });

  it('a checkpoint without its config (the export still running) waits; a torn one is never copied', async () => {
    const { shared, runDir, mirror } = setup();
    exportCheckpoint(shared, `${RUN}_step2`, true, false);
    exportCheckpoint(shared, `${RUN}_step4`, false);
    await lookAndWait(mirror);
    expect(fs.existsSync(path.join(runDir, RUN, 'checkpoints', `${RUN}_step2`))).toBe(false);
    expect(await mirror.final()).toEqual({ ok: true });
    expect(fs.existsSync(path.join(runDir, RUN, 'checkpoints', `${RUN}_step4`))).toBe(false);
  });

  it('the last pass copies what is left; the job folder goes once all is copied', async () => {
    const { shared, runDir, mirror } = setup();
    exportCheckpoint(shared, `${RUN}_final`, true);
    fs.writeFileSync(path.join(shared.runRoot, RUN, 'traces', 'trace.jsonl'), '{"step": 1}\n');
    expect(await mirror.final()).toEqual({ ok: true });
    expect(tree(runDir)).toEqual([
      `${RUN}/checkpoints/${RUN}_final/config.json`,
      `${RUN}/checkpoints/${RUN}_final/model.safetensors`,
      `${RUN}/run.json`,
      `${RUN}/traces/trace.jsonl`,
    ]);
    expect(await mirror.removeJobFolder()).toEqual({ ok: true });
    expect(fs.existsSync(shared.root)).toBe(false);
  });

  it('what the trainer removes (its rotation) goes from the copy; files added to a checkpoint later follow it', async () => {
    const { shared, runDir, mirror } = setup();
    const step2 = exportCheckpoint(shared, `${RUN}_step2`, true);
    const extra = path.join(shared.runRoot, RUN, 'traces', 'old.jsonl');
    fs.writeFileSync(extra, '{}\n');
    await lookAndWait(mirror);
    expect(fs.existsSync(path.join(runDir, RUN, 'traces', 'old.jsonl'))).toBe(true);
    fs.writeFileSync(path.join(step2, 'tokenizer.json'), '{}');
    await lookAndWait(mirror);
    const copy = path.join(runDir, RUN, 'checkpoints', `${RUN}_step2`);
    expect(tree(copy)).toEqual(['config.json', 'model.safetensors', 'tokenizer.json']);
    fs.rmSync(step2, { recursive: true });
    fs.rmSync(extra);
    await lookAndWait(mirror);
    expect(fs.existsSync(copy)).toBe(false);
    expect(fs.existsSync(path.join(runDir, RUN, 'traces', 'old.jsonl'))).toBe(false);
    // a file it did not write stays (an earlier attempt's, restored from S3)
    fs.writeFileSync(path.join(runDir, 'restored.json'), '{}');
    await lookAndWait(mirror);
    expect(fs.existsSync(path.join(runDir, 'restored.json'))).toBe(true);
  });

  it("a copy that failed is tried again on the next pass, and the outcome is the last pass's", async () => {
    const { shared, runDir, mirror, said } = setup();
    exportCheckpoint(shared, `${RUN}_step2`, true);
    const copyFile = fs.promises.copyFile.bind(fs.promises);
    const spy = jest.spyOn(fs.promises, 'copyFile').mockImplementation(async (src, dest, mode) => {
      if (String(dest).endsWith('model.safetensors'))
        throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      return copyFile(src, dest, mode);
    });
    await lookAndWait(mirror);
    spy.mockRestore();
    expect(said.some((l) => l.includes('ENOSPC'))).toBe(true);
    const copy = path.join(runDir, RUN, 'checkpoints', `${RUN}_step2`);
    expect(fs.existsSync(path.join(copy, 'config.json'))).toBe(false);
    expect(await mirror.final()).toEqual({ ok: true });
    expect(tree(copy)).toEqual(['config.json', 'model.safetensors']);
  });

  it('after SIGTERM the last pass is bounded by the deadline, and says not all was copied', async () => {
    const { shared, mirror } = setup();
    exportCheckpoint(shared, `${RUN}_step2`, true);
    jest.spyOn(fs.promises, 'copyFile').mockImplementation(() => new Promise(() => undefined));
    const started = Date.now();
    const result = await mirror.final(Date.now() + 200);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result).toEqual({ ok: false, why: 'the job was stopped before every file was copied' });
  });

  it('a restart: what the run folder already holds (restored from S3) is not copied again', async () => {
    const { shared, runDir, mirror } = setup();
    const trace = path.join(shared.runRoot, RUN, 'traces', 'trace.jsonl');
    fs.writeFileSync(trace, 'x'.repeat(2 << 20));
    fs.mkdirSync(path.join(runDir, RUN, 'traces'), { recursive: true });
    const restored = path.join(runDir, RUN, 'traces', 'trace.jsonl');
    fs.copyFileSync(trace, restored);
    const inode = fs.statSync(restored).ino;
    await lookAndWait(mirror);
    expect(fs.statSync(restored).ino).toBe(inode);
  });

  it("a restart on an earlier attempt's files: complete ones go to the run folder first, the folder is cleared", async () => {
    const { shared, runDir, said } = setup();
    exportCheckpoint(shared, `${RUN}_step2`, true);
    exportCheckpoint(shared, `${RUN}_step4`, false);
    fs.mkdirSync(shared.folder, { recursive: true });
    fs.writeFileSync(path.join(shared.folder, 'tmpab12.trainer.toml'), '[model]\n');
    await takeOverLeftovers({ shared, runDir, contract: CONTRACT, stableMs: 0, say: (l) => said.push(l) });
    expect(tree(path.join(runDir, RUN, 'checkpoints'))).toEqual([
      `${RUN}_step2/config.json`,
      `${RUN}_step2/model.safetensors`,
    ]);
    expect(tree(shared.root)).toEqual([]);
    expect(fs.existsSync(shared.runRoot) && fs.existsSync(shared.folder)).toBe(true);
    expect(said[0]).toMatch(/holds \d+ files of an earlier attempt/);
  });

  it('a copy that keeps failing is said once, and final() reports it so the job folder is kept', async () => {
    const { shared, runDir, mirror, said } = setup();
    // the run folder's place taken by a file: nothing can be copied into it
    fs.rmSync(runDir, { recursive: true });
    fs.writeFileSync(runDir, 'not a folder');
    fs.writeFileSync(path.join(shared.runRoot, RUN, 'traces', 'trace.jsonl'), '{}\n');
    await lookAndWait(mirror);
    const result = await mirror.final();
    expect(result.ok).toBe(false);
    expect(said.filter((l) => l.includes('traces/trace.jsonl'))).toHaveLength(1);
  });
});
