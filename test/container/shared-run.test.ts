import * as fs from 'node:fs';
import * as path from 'node:path';
import { SharedRunMirror, sharedJobFolder, type SharedJobFolder } from '../../lib/container/shared-run';
import { SHARED_FILE_SYSTEM } from '../../lib/layout';
import { safetensorsWith, tempDir } from '../helpers/fixtures';

/** Their trainer's own run folder: `<stem>_<timestamp>/` with run.json, traces/ and checkpoints/. */
const CONTRACT = {
  runFolder: {
    kind: 'own' as const,
    rootEnv: 'SM_MODEL_DIR',
    fallback: '/efs/rlvr-experiments/results',
    marker: 'run.json',
    checkpoints: 'checkpoints',
    traces: 'traces',
    cite: 'S/runtime.py:83-173',
  },
};
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

  it('refuses a job name that is not one (it would leave the jobs folder)', () => {
    const channel = tempDir('rlvr-shared-');
    expect(() => sharedJobFolder(channel, '../etc')).toThrow(/cannot name a folder/);
    expect(() => sharedJobFolder(channel, 'a/b')).toThrow(/cannot name a folder/);
    expect(() => sharedJobFolder(channel, '.hidden')).toThrow(/cannot name a folder/);
    // a local run's name is one
    expect(sharedJobFolder(channel, 'qwen3-1.7B-gsm8k_20261127-150640')).toBeDefined();
  });
});

describe("the head's copy of the shared run root", () => {
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
    await lookAndWait(mirror);
    expect(fs.readFileSync(copy).equals(fs.readFileSync(trace))).toBe(true);
    // appended in place: the same file, not a new one renamed over it
    expect(fs.statSync(copy).ino).toBe(inode);
  });

  it('a large file rewritten (not appended) is copied whole, never spliced', async () => {
    const { shared, runDir, mirror } = setup();
    const f = path.join(shared.runRoot, RUN, 'traces', 'samples.jsonl');
    fs.writeFileSync(f, Buffer.alloc(2 << 20, 'a'));
    await lookAndWait(mirror);
    fs.writeFileSync(f, Buffer.alloc(3 << 20, 'b'));
    await lookAndWait(mirror);
    expect(
      fs.readFileSync(path.join(runDir, RUN, 'traces', 'samples.jsonl')).equals(fs.readFileSync(f)),
    ).toBe(true);
  });

  it('a checkpoint is copied only once it is complete, config.json last, once', async () => {
    const { shared, runDir, mirror, said } = setup();
    const dir = exportCheckpoint(shared, `${RUN}_step2`, false);
    await lookAndWait(mirror);
    const copied = path.join(runDir, RUN, 'checkpoints', `${RUN}_step2`);
    expect(fs.existsSync(copied)).toBe(false);
    exportCheckpoint(shared, `${RUN}_step2`, true);
    await lookAndWait(mirror);
    expect(tree(copied)).toEqual(['config.json', 'model.safetensors']);
    // the marker the completeness rule reads is written after the weights
    expect(fs.statSync(path.join(copied, 'config.json')).mtimeMs).toBeGreaterThanOrEqual(
      fs.statSync(path.join(copied, 'model.safetensors')).mtimeMs,
    );
    expect(
      fs
        .readFileSync(path.join(copied, 'model.safetensors'))
        .equals(fs.readFileSync(path.join(dir, 'model.safetensors'))),
    ).toBe(true);
    await lookAndWait(mirror);
    await mirror.final();
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

  it('never leaves a staging file in the run folder, and the job folder goes once all is copied', async () => {
    const { ml, shared, runDir, mirror } = setup();
    exportCheckpoint(shared, `${RUN}_final`, true);
    fs.writeFileSync(path.join(shared.runRoot, RUN, 'traces', 'trace.jsonl'), '{"step": 1}\n');
    expect(await mirror.final()).toEqual({ ok: true });
    expect(tree(runDir)).toEqual([
      `${RUN}/checkpoints/${RUN}_final/config.json`,
      `${RUN}/checkpoints/${RUN}_final/model.safetensors`,
      `${RUN}/run.json`,
      `${RUN}/traces/trace.jsonl`,
    ]);
    expect(fs.readdirSync(ml).filter((f) => f.startsWith('.rlvr-shared-copy-'))).toEqual([]);
    mirror.removeJobFolder();
    expect(fs.existsSync(shared.root)).toBe(false);
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

  it('a copy that fails is said, and final() reports it so the job folder is kept', async () => {
    const { shared, runDir, mirror, said } = setup();
    // the run folder's place taken by a file: nothing can be copied into it
    fs.rmSync(runDir, { recursive: true });
    fs.writeFileSync(runDir, 'not a folder');
    fs.writeFileSync(path.join(shared.runRoot, RUN, 'traces', 'trace.jsonl'), '{}\n');
    const result = await mirror.final();
    expect(result.ok).toBe(false);
    expect(said.some((l) => l.startsWith('copying the shared run folder:'))).toBe(true);
  });
});
