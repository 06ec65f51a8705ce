/**
 * A multi-host job with the shared file system: every host's trainer processes write under one folder of
 * it (the run root: an export lands there whichever host's rank writes it; the profile's shared folder
 * beside it), and the head alone copies that folder into the streamed run folder, from which SageMaker
 * uploads it to the job's checkpoint prefix once. So a file reaches S3 from one host only and under one
 * name, the head's checks and eval watcher see every checkpoint, and a restart finds them where a
 * one-host job's would be.
 *
 * What is copied, and when:
 * - a checkpoint folder (under the contract's checkpoint folders) once it is complete by the one rule
 *   (lib/checkpoints: weights whole, writer finished), as a whole, its `config.json` last — their
 *   export writes the config after the weights, and the rule reads it so;
 * - any other file as it grows: the bytes appended since the last look (traces, logs, the trainer's
 *   run.json), or the whole file again when it was rewritten rather than appended to.
 * A checkpoint that never became whole is not copied: it would not load.
 *
 * Copies are asynchronous (the head's cluster endpoint must keep answering the workers while a large
 * checkpoint is copied) and go through a staging folder beside the run folder, renamed in, so SageMaker
 * never uploads a half-copied file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { CheckpointTracker } from '../checkpoints';
import { SHARED_FILE_SYSTEM } from '../layout';
import type { JobContract } from '../trainers';
import { checkpointDirs } from './run-folder';

/** This job's folder on the shared file system, and what goes where in it. */
export interface SharedJobFolder {
  /** `<channel>/rlvr-jobs/<job name>`. */
  readonly root: string;
  /** The trainer's run root on every host. */
  readonly runRoot: string;
  /** The profile's shared folder (its variable points here on every host). */
  readonly folder: string;
}

/** A job's name as a folder: SageMaker's (letters, digits, hyphens) or a local run's (`<stem>_<time>`). */
const JOB_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The job's folder on the mounted shared channel, or undefined when the job has no shared channel. */
export function sharedJobFolder(channelDir: string, jobName: string): SharedJobFolder | undefined {
  if (!fs.existsSync(channelDir)) return undefined;
  if (!JOB_NAME.test(jobName) || jobName.length > 255)
    throw new Error(`the job name ${JSON.stringify(jobName)} cannot name a folder on the shared file system`);
  const root = path.join(channelDir, SHARED_FILE_SYSTEM.jobsFolder, jobName);
  return {
    root,
    runRoot: path.join(root, SHARED_FILE_SYSTEM.runRoot),
    folder: path.join(root, SHARED_FILE_SYSTEM.sharedFolder),
  };
}

/** Files smaller than this are copied whole whenever they change: a rewrite is likelier than an append. */
const WHOLE_BELOW = 1 << 20;
/** How many bytes before the copied end are compared to tell an append from a rewrite. */
const BOUNDARY = 4096;

interface Copied {
  size: number;
  mtimeMs: number;
}

/** The head's copy of the shared run root into the streamed run folder. */
export class SharedRunMirror {
  private readonly tracker: CheckpointTracker;
  private readonly copied = new Map<string, Copied>();
  private running: Promise<void> | undefined;
  private failed: string | undefined;
  private staging: string | undefined;

  constructor(
    private readonly o: {
      readonly shared: SharedJobFolder;
      readonly runDir: string;
      readonly contract: Pick<JobContract, 'runFolder'>;
      readonly stableMs: number;
      readonly say: (line: string) => void;
    },
  ) {
    this.tracker = new CheckpointTracker(() => checkpointDirs(o.shared.runRoot, o.contract), o.stableMs);
  }

  /** One look, unless the last is still copying. */
  look(): void {
    if (this.running) return;
    this.running = this.pass(false)
      .catch((err: Error) => this.note(err))
      .finally(() => (this.running = undefined));
  }

  /** The trainer has exited: the last look copies what is left (waiting for a look in progress). */
  async final(): Promise<{ ok: true } | { ok: false; why: string }> {
    await this.running;
    try {
      await this.pass(true);
    } catch (err) {
      this.note(err as Error);
    }
    this.removeStaging();
    return this.failed ? { ok: false, why: this.failed } : { ok: true };
  }

  /** The job's folder on the shared file system goes once everything in it is in the run folder. */
  removeJobFolder(): void {
    fs.rmSync(this.o.shared.root, { recursive: true, force: true });
  }

  private note(err: Error): void {
    this.failed = err.message;
    this.o.say(`copying the shared run folder: ${err.message}`);
  }

  private async pass(ended: boolean): Promise<void> {
    const checkpointParents = checkpointDirs(this.o.shared.runRoot, this.o.contract);
    for (const c of this.tracker.scan(ended)) {
      await this.copyCheckpoint(c.path);
    }
    for (const rel of listFiles(this.o.shared.runRoot)) {
      const src = path.join(this.o.shared.runRoot, rel);
      if (
        checkpointParents.some(
          (p) => src.startsWith(p + path.sep) && src.slice(p.length + 1).includes(path.sep),
        )
      )
        continue; // inside a checkpoint folder: copied whole once complete
      await this.copyFile(rel);
    }
  }

  private async copyCheckpoint(folder: string): Promise<void> {
    const rel = path.relative(this.o.shared.runRoot, folder);
    const files = listFiles(folder).sort(
      (a, b) => Number(a === 'config.json') - Number(b === 'config.json') || a.localeCompare(b),
    );
    let bytes = 0;
    for (const f of files) {
      const dest = path.join(this.o.runDir, rel, f);
      const size = fs.statSync(path.join(folder, f)).size;
      if (fileSize(dest) !== size) await this.copyWhole(path.join(folder, f), dest);
      bytes += size;
    }
    this.o.say(
      `checkpoint ${path.basename(folder)} copied from the shared file system (${files.length} files, ${bytes} bytes)`,
    );
  }

  private async copyFile(rel: string): Promise<void> {
    const src = path.join(this.o.shared.runRoot, rel);
    const dest = path.join(this.o.runDir, rel);
    let st: fs.Stats;
    try {
      st = await fs.promises.stat(src);
    } catch {
      return; // removed while we looked
    }
    const last = this.copied.get(rel);
    if (last && last.size === st.size && last.mtimeMs === st.mtimeMs) return;
    const have = fileSize(dest);
    const appended = have !== undefined && have > 0 && (await sameBoundary(src, dest, have));
    if (appended && have === st.size && !last) {
      // already there (a restart's restored copy)
    } else if (appended && have < st.size && st.size >= WHOLE_BELOW) {
      await appendFrom(src, dest, have, st.size);
    } else {
      await this.copyWhole(src, dest);
    }
    this.copied.set(rel, { size: st.size, mtimeMs: st.mtimeMs });
  }

  /** Copies through the staging folder and renames in (a copy when they are on other file systems). */
  private async copyWhole(src: string, dest: string): Promise<void> {
    await fs.promises.mkdir(path.dirname(dest), { recursive: true });
    const staging = this.stagingDir();
    const tmp = path.join(staging, `${process.pid}-${Math.random().toString(36).slice(2)}`);
    await fs.promises.copyFile(src, tmp);
    try {
      await fs.promises.rename(tmp, dest);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      await fs.promises.rm(tmp, { force: true });
      await fs.promises.copyFile(src, dest);
    }
  }

  /** Beside the run folder, never in it: SageMaker uploads whatever appears in the run folder. */
  private stagingDir(): string {
    this.staging ??= fs.mkdtempSync(path.join(path.dirname(this.o.runDir), '.rlvr-shared-copy-'));
    return this.staging;
  }

  private removeStaging(): void {
    if (this.staging) fs.rmSync(this.staging, { recursive: true, force: true });
    this.staging = undefined;
  }
}

function fileSize(file: string): number | undefined {
  try {
    return fs.statSync(file).size;
  } catch {
    return undefined;
  }
}

/** Files under `dir`, relative to it (symbolic links are not followed or copied). */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const r = rel ? path.join(rel, e.name) : e.name;
      if (e.isDirectory()) walk(path.join(d, e.name), r);
      else if (e.isFile()) out.push(r);
    }
  };
  walk(dir, '');
  return out.sort();
}

/** Whether the last bytes the copy has are the source's bytes at the same place (an append, not a rewrite). */
async function sameBoundary(src: string, dest: string, have: number): Promise<boolean> {
  const n = Math.min(BOUNDARY, have);
  const read = async (file: string) => {
    const h = await fs.promises.open(file, 'r');
    try {
      const buf = Buffer.alloc(n);
      await h.read(buf, 0, n, have - n);
      return buf;
    } finally {
      await h.close();
    }
  };
  return (await read(src)).equals(await read(dest));
}

async function appendFrom(src: string, dest: string, from: number, to: number): Promise<void> {
  const input = fs.createReadStream(src, { start: from, end: to - 1 });
  const output = fs.createWriteStream(dest, { flags: 'a' });
  await pipeline(input, output);
}
