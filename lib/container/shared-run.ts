/**
 * A multi-host job with the shared file system: every host's trainer processes write under one folder of
 * it (the run root: an export lands there whichever host's rank writes it; the profile's shared folder
 * beside it), and the head alone copies that folder into the streamed run folder, from which SageMaker
 * uploads it to the job's checkpoint prefix. So a file reaches S3 from one host only and under one name,
 * the head's checks and eval watcher see every checkpoint, and a restart finds them where a one-host
 * job's would be.
 *
 * What is copied, and when:
 * - a checkpoint folder (under the contract's checkpoint folders) once it is complete by the one rule
 *   (lib/checkpoints: weights whole, writer finished), its `config.json` last — their export writes the
 *   config after the weights, and the rule reads it so — and any file added to it later;
 * - any other file as it grows: the bytes appended since the last look (traces, logs), or the whole file
 *   again when it was rewritten rather than appended to;
 * - a file or checkpoint removed on the shared side (a trainer's own rotation) is removed from the copy,
 *   so the head's disk holds what the trainer keeps, not everything it ever wrote.
 * A checkpoint that never became whole is not copied: it would not load. Copies go straight to their
 * place, as the trainer's own writes do on one host; the completeness rule never takes a checkpoint
 * whose config is not there yet.
 *
 * Everything that touches the shared file system is asynchronous: the head's cluster endpoint must keep
 * answering the workers while a large checkpoint is copied.
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

/**
 * A job's name as one folder: SageMaker's names are letters, digits and hyphens; a local run's is the
 * config's stem and a time, which may hold anything a file name does.
 */
function folderName(jobName: string): string {
  const safe = jobName.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 200);
  return /^[A-Za-z0-9]/.test(safe) ? safe : `job${safe}`;
}

/** The job's folder on the mounted shared channel, or undefined when the job has no shared channel. */
export function sharedJobFolder(channelDir: string, jobName: string): SharedJobFolder | undefined {
  if (!fs.existsSync(channelDir)) return undefined;
  const root = path.join(channelDir, SHARED_FILE_SYSTEM.jobsFolder, folderName(jobName));
  return {
    root,
    runRoot: path.join(root, SHARED_FILE_SYSTEM.runRoot),
    folder: path.join(root, SHARED_FILE_SYSTEM.sharedFolder),
  };
}

/** Files smaller than this are copied whole whenever they change: a rewrite is likelier than an append. */
const WHOLE_BELOW = 1 << 20;
/**
 * Files their trainers open once and append to (the tracer's and sample loggers' JSONL, logs): only these
 * are copied by their new bytes; any other file that changed is copied whole, since a rewrite in place
 * cannot be told from an append by looking at its end.
 */
const APPENDED = /\.(jsonl|log|txt)$/;
/** How many bytes before the copied end are compared to tell an append from a rewrite. */
const BOUNDARY = 64 * 1024;

interface Seen {
  size: number;
  mtimeMs: number;
  ino: number;
}

export type MirrorOutcome = { readonly ok: true } | { readonly ok: false; readonly why: string };

/** The head's copy of the shared run root into the streamed run folder. */
export class SharedRunMirror {
  private readonly tracker: CheckpointTracker;
  /** Plain files this mirror wrote, by path relative to the run root, as their source was then. */
  private readonly files = new Map<string, Seen>();
  /** Complete checkpoints found (by folder), and the files of each this mirror wrote (name → size). */
  private readonly checkpoints = new Map<string, Map<string, number> | undefined>();
  private running: Promise<void> | undefined;
  /** What went wrong in the last pass, per path: cleared when a later pass gets it right. */
  private readonly failures = new Map<string, string>();

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
      .catch((err: Error) => this.fail('the run root', err))
      .finally(() => (this.running = undefined));
  }

  /**
   * The trainer has exited: the last look copies what is left (after a look in progress). `deadline`
   * (epoch ms): after a SIGTERM the job has SageMaker's grace period only, and its summary comes first.
   */
  async final(deadline?: number): Promise<MirrorOutcome> {
    const work = (async () => {
      await this.running;
      await this.pass(true);
      return this.outcome();
    })();
    if (deadline === undefined) return work;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<MirrorOutcome>((resolve) => {
      timer = setTimeout(
        () => resolve({ ok: false, why: 'the job was stopped before every file was copied' }),
        Math.max(0, deadline - Date.now()),
      );
    });
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The job's folder on the shared file system goes once everything in it is in the run folder. */
  async removeJobFolder(): Promise<MirrorOutcome> {
    try {
      await fs.promises.rm(this.o.shared.root, { recursive: true, force: true, maxRetries: 3 });
      return { ok: true };
    } catch (err) {
      return { ok: false, why: (err as Error).message };
    }
  }

  private outcome(): MirrorOutcome {
    if (this.failures.size === 0) return { ok: true };
    const [first] = this.failures.entries();
    return { ok: false, why: `${this.failures.size} not copied, e.g. ${first[0]}: ${first[1]}` };
  }

  private fail(rel: string, err: Error): void {
    if (!this.failures.has(rel)) this.o.say(`copying the shared run folder: ${rel}: ${err.message}`);
    this.failures.set(rel, err.message);
  }

  private async pass(ended: boolean): Promise<void> {
    const parents = checkpointDirs(this.o.shared.runRoot, this.o.contract);
    for (const c of this.tracker.scan(ended))
      if (!this.checkpoints.has(c.path)) this.checkpoints.set(c.path, undefined);
    const inCheckpointFolder = (src: string) =>
      parents.some((p) => src.startsWith(p + path.sep) && src.slice(p.length + 1).includes(path.sep));
    for (const folder of this.checkpoints.keys()) await this.syncCheckpoint(folder);
    const present = new Set<string>();
    for (const rel of await listFiles(this.o.shared.runRoot)) {
      const src = path.join(this.o.shared.runRoot, rel);
      if (inCheckpointFolder(src)) continue; // copied as a folder once complete
      present.add(rel);
      try {
        await this.syncFile(rel, ended);
        this.failures.delete(rel);
      } catch (err) {
        if (isGone(err)) continue; // removed while we looked: the next pass sees it gone
        this.fail(rel, err as Error);
      }
    }
    for (const rel of [...this.files.keys()].filter((r) => !present.has(r))) {
      this.files.delete(rel);
      this.failures.delete(rel);
      await fs.promises.rm(path.join(this.o.runDir, rel), { force: true });
    }
  }

  /** A complete checkpoint: its files not yet copied (config.json last), or its copy removed with it. */
  private async syncCheckpoint(folder: string): Promise<void> {
    const rel = path.relative(this.o.shared.runRoot, folder);
    const dest = path.join(this.o.runDir, rel);
    let names: string[];
    try {
      names = await listFiles(folder, true);
    } catch (err) {
      if (!isGone(err)) return this.fail(rel, err as Error);
      // The trainer removed it (its rotation): so goes the copy this mirror made.
      if (this.checkpoints.get(folder)) await fs.promises.rm(dest, { recursive: true, force: true });
      this.checkpoints.delete(folder);
      this.failures.delete(rel);
      return;
    }
    const written = this.checkpoints.get(folder) ?? new Map<string, number>();
    const order = names.sort(
      (a, b) => Number(a === 'config.json') - Number(b === 'config.json') || a.localeCompare(b),
    );
    let bytes = 0;
    let copied = 0;
    try {
      for (const name of order) {
        const size = (await statFresh(path.join(folder, name))).size;
        bytes += size;
        if (written.get(name) === size) continue;
        await fs.promises.mkdir(path.dirname(path.join(dest, name)), { recursive: true });
        await fs.promises.copyFile(path.join(folder, name), path.join(dest, name));
        written.set(name, size);
        copied++;
      }
      this.failures.delete(rel);
    } catch (err) {
      this.fail(rel, err as Error);
    }
    const first = !this.checkpoints.get(folder);
    this.checkpoints.set(folder, written);
    if (copied > 0 && first)
      this.o.say(
        `checkpoint ${path.basename(folder)} copied from the shared file system (${copied} files, ${bytes} bytes)`,
      );
  }

  /** A plain file: the appended bytes, or the whole file when it was rewritten or is small. */
  private async syncFile(rel: string, ended: boolean): Promise<void> {
    const src = path.join(this.o.shared.runRoot, rel);
    const dest = path.join(this.o.runDir, rel);
    // Opened, so NFS revalidates what another host wrote (a stat alone may answer from its cache).
    const st = await statFresh(src);
    const last = this.files.get(rel);
    const unchanged = last && last.size === st.size && last.mtimeMs === st.mtimeMs && last.ino === st.ino;
    if (!ended && unchanged) return;
    const have = await sizeOf(dest);
    const sameEnd = have !== undefined && have > 0 && (await sameBoundary(src, dest, have));
    // Appended to since the last copy: the same kind of file, the same file (not one renamed over it).
    const appended = APPENDED.test(rel) && (!last || last.ino === st.ino) && sameEnd;
    if (sameEnd && have === st.size && (unchanged || !last)) {
      // the same bytes are there already (a restart's restored copy, or nothing new)
    } else if (appended && have! < st.size && st.size >= WHOLE_BELOW) {
      await appendFrom(src, dest, have!, st.size);
    } else {
      await fs.promises.mkdir(path.dirname(dest), { recursive: true });
      await fs.promises.copyFile(src, dest);
    }
    this.files.set(rel, { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino });
  }
}

function isGone(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

async function statFresh(file: string): Promise<fs.Stats> {
  const h = await fs.promises.open(file, 'r');
  try {
    return await h.stat();
  } finally {
    await h.close();
  }
}

async function sizeOf(file: string): Promise<number | undefined> {
  try {
    return (await fs.promises.stat(file)).size;
  } catch {
    return undefined;
  }
}

/**
 * Files under `dir`, relative to it (symbolic links are not followed or copied). A folder that is gone
 * lists nothing, unless `strict` (then its ENOENT is the caller's).
 */
export async function listFiles(dir: string, strict = false): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, rel: string, top: boolean) => {
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(d, { withFileTypes: true });
    } catch (err) {
      if (top && strict) throw err;
      return;
    }
    for (const e of entries) {
      const r = rel ? path.join(rel, e.name) : e.name;
      if (e.isDirectory()) await walk(path.join(d, e.name), r, false);
      else if (e.isFile()) out.push(r);
    }
  };
  await walk(dir, '', true);
  return out.sort();
}

/** Whether the last bytes the copy has are the source's bytes at the same place (an append, not a rewrite). */
async function sameBoundary(src: string, dest: string, have: number): Promise<boolean> {
  const n = Math.min(BOUNDARY, have);
  const read = async (file: string) => {
    const h = await fs.promises.open(file, 'r');
    try {
      const buf = Buffer.alloc(n);
      const { bytesRead } = await h.read(buf, 0, n, have - n);
      return buf.subarray(0, bytesRead);
    } finally {
      await h.close();
    }
  };
  const [a, b] = await Promise.all([read(src), read(dest)]);
  return a.length === n && a.equals(b);
}

async function appendFrom(src: string, dest: string, from: number, to: number): Promise<void> {
  await pipeline(
    fs.createReadStream(src, { start: from, end: to - 1 }),
    fs.createWriteStream(dest, { flags: 'a' }),
  );
}

/**
 * A restart (SageMaker keeps the job's name, so its folder) on a shared file system an earlier attempt
 * left files on — its head crashed or was stopped before its last copy: what is complete goes into the
 * run folder first, where the restart looks for its checkpoint, and the folder is cleared for this
 * attempt (kept when something could not be copied; this attempt's copy then takes it along).
 */
export async function takeOverLeftovers(o: ConstructorParameters<typeof SharedRunMirror>[0]): Promise<void> {
  const left = await listFiles(o.shared.root);
  if (left.length === 0) return;
  o.say(
    `the shared file system holds ${left.length} files of an earlier attempt: copying what is complete into the run folder`,
  );
  const result = await new SharedRunMirror({ ...o, stableMs: 0 }).final();
  if (!result.ok) {
    o.say(`the earlier attempt's files are kept on the shared file system: ${result.why}`);
    return;
  }
  await fs.promises.rm(o.shared.root, { recursive: true, force: true, maxRetries: 3 });
  for (const d of [o.shared.runRoot, o.shared.folder]) await fs.promises.mkdir(d, { recursive: true });
}
