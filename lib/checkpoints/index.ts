/**
 * When is a checkpoint folder complete? One rule, used by the eval watcher's hand-off and the restart
 * in the job, and by `rlvr download`. The team's trainers export in place with no done
 * marker (their model.py `export_to_hf`): `model.safetensors` exists long before it is whole.
 *
 * Complete means both:
 * - **weights whole**: every file the index names (or, without an index, the weights files, every shard
 *   of a `-of-N` set) is present, a safetensors file has the size its own header gives (8 + header +
 *   last offset), and `config.json` is there (their export copies it after the weights);
 * - **writer finished**: a later checkpoint of the same run, or `_final`, exists; or training has
 *   ended; or nothing in the folder changed for a grace period.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MODEL_INDEX_FILE, parseCheckpointFolder } from '../layout';
import { readTextFile } from '../util';

const WEIGHTS = /\.(safetensors|bin|pt)$/;
const CONFIG_FILE = 'config.json';

/** `model-00002-of-00003.safetensors` → all three names; any other name → itself. */
function allShards(name: string): string[] {
  const m = /^(.*-)(\d+)-of-(\d+)(\.[a-z]+)$/.exec(name);
  if (!m) return [name];
  const [, head, k, n, ext] = m;
  const total = Number(n);
  if (total > 10_000) return [name];
  return Array.from(
    { length: total },
    (_, i) => `${head}${String(i + 1).padStart(k.length, '0')}-of-${n}${ext}`,
  );
}

/** What is known of a folder's files: sizes, the index's weight files, safetensors' expected sizes. */
export interface CheckpointFiles {
  /** Size of each file, by path relative to the folder. */
  readonly sizes: ReadonlyMap<string, number>;
  /** The weight files the index names; `'unreadable'` when the index is not (yet) valid JSON. */
  readonly indexed?: readonly string[] | 'unreadable';
  /** The size each safetensors file's header says it has, when the header was read. */
  readonly expectedSizes?: ReadonlyMap<string, number>;
}

export type Verdict = { readonly complete: true } | { readonly complete: false; readonly why: string };

/**
 * The weight files a `model.safetensors.index.json` names (its weight_map's values, once each), from
 * its text; 'unreadable' when there is no text (it could not be read) or it does not parse (yet).
 */
export function weightsNamedByIndex(text: string | undefined): readonly string[] | 'unreadable' {
  if (text === undefined) return 'unreadable';
  try {
    const index = JSON.parse(text) as { weight_map?: Record<string, string> };
    return [...new Set(Object.values(index.weight_map ?? {}))];
  } catch {
    return 'unreadable';
  }
}

/**
 * Whether a folder is a loadable Hugging Face model, on what is known of its files (a local folder, an
 * S3 listing): the one rule the pre-flight, `rlvr upload`, download, the eval watcher and the restart
 * apply. `fix` is the known trap (a checkpoint that would not load in evaluation): one weights file under another name than the index gives it.
 */
export type FolderVerdict =
  | { readonly loadable: true }
  | {
      readonly loadable: false;
      readonly why: string;
      readonly fix?: { readonly rename: { readonly from: string; readonly to: string } };
    };

export function folderVerdict(files: CheckpointFiles): FolderVerdict {
  const no = (why: string) => ({ loadable: false as const, why });
  const top = [...files.sizes.keys()].filter((f) => !f.includes('/'));
  const weights = top.filter((f) => WEIGHTS.test(f));
  if (files.indexed === 'unreadable') return no(`${MODEL_INDEX_FILE} is not valid JSON (yet)`);
  let needed: readonly string[];
  if (files.indexed) {
    if (files.indexed.length === 0) return no(`${MODEL_INDEX_FILE} names no file`);
    needed = files.indexed;
    const missing = needed.filter((f) => !files.sizes.has(f));
    const strays = weights.filter((w) => w.endsWith('.safetensors') && !needed.includes(w));
    if (missing.length === 1 && strays.length === 1) {
      return {
        loadable: false,
        why: `${MODEL_INDEX_FILE} names ${missing[0]}, and the folder holds ${strays[0]} instead`,
        fix: { rename: { from: strays[0], to: missing[0] } },
      };
    }
    if (missing.length > 0)
      return no(`${MODEL_INDEX_FILE} names ${missing.join(', ')}, which the folder does not have`);
  } else {
    if (weights.length === 0) {
      return top.some((f) => f.endsWith('.distcp'))
        ? no('a torchtitan DCP checkpoint (.distcp): neither vLLM nor Hugging Face loads it')
        : no('no weights file (yet)');
    }
    // Shards named `-0000k-of-0000N`: all N, and (written last) their index.
    const set = [...new Set(weights.flatMap(allShards))];
    const missing = set.filter((f) => !files.sizes.has(f));
    if (missing.length > 0) return no(`missing ${missing.join(', ')}`);
    if (weights.filter((w) => w.endsWith('.safetensors')).length > 1)
      return no(`${weights.length} weights files but no ${MODEL_INDEX_FILE}`);
    needed = weights;
  }
  for (const f of needed) {
    const size = files.sizes.get(f)!;
    const expected = files.expectedSizes?.get(f);
    if (size === 0) return no(`${f} is empty`);
    if (expected !== undefined && Number.isNaN(expected))
      return no(`${f} has no whole safetensors header (yet)`);
    if (expected !== undefined && size !== expected) return no(`${f} has ${size} of its ${expected} bytes`);
  }
  // Their export copies the config after the weights (model.py:476-486).
  if (!files.sizes.has(CONFIG_FILE)) return no(`no ${CONFIG_FILE} (yet)`);
  return { loadable: true };
}

/** The weights half of "complete": loadable as it is (a folder needing the rename fix is not). */
export function weightsVerdict(files: CheckpointFiles): Verdict {
  const v = folderVerdict(files);
  return v.loadable ? { complete: true } : { complete: false, why: v.why };
}

/** The size a safetensors file must have, from its first bytes (8-byte length, then the JSON header). */
export function safetensorsSize(head: Buffer): number | undefined {
  if (head.length < 8) return undefined;
  const headerLength = Number(head.readBigUInt64LE(0));
  if (headerLength <= 0 || headerLength > 100_000_000 || head.length < 8 + headerLength) return undefined;
  try {
    const header = JSON.parse(head.subarray(8, 8 + headerLength).toString('utf8')) as Record<
      string,
      { data_offsets?: [number, number] }
    >;
    let end = 0;
    for (const [name, t] of Object.entries(header)) {
      if (name === '__metadata__') continue;
      if (Array.isArray(t?.data_offsets)) end = Math.max(end, t.data_offsets[1]);
    }
    return 8 + headerLength + end;
  } catch {
    return undefined;
  }
}

/** How many leading bytes `safetensorsSize` needs, given the first 8 (undefined: unreadable). */
export function safetensorsHeadLength(first8: Buffer): number | undefined {
  if (first8.length < 8) return undefined;
  const n = Number(first8.readBigUInt64LE(0));
  return n > 0 && n <= 100_000_000 ? 8 + n : undefined;
}

function readHead(file: string): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const first = Buffer.alloc(8);
    const got = fs.readSync(fd, first, 0, 8, 0);
    const length = safetensorsHeadLength(first.subarray(0, got));
    if (length === undefined) return first.subarray(0, got);
    const head = Buffer.alloc(length);
    const n = fs.readSync(fd, head, 0, length, 0);
    return head.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

/** A local folder's files (symlinks followed: their export links shards to `model.safetensors`). */
export function localCheckpointFiles(folder: string): CheckpointFiles & { readonly signature: string } {
  const sizes = new Map<string, number>();
  const stamps: string[] = [];
  const visit = (rel: string) => {
    for (const e of fs.readdirSync(path.join(folder, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      let st: fs.Stats;
      try {
        st = fs.statSync(path.join(folder, r));
      } catch {
        continue; // a dangling link, or removed while we looked
      }
      if (st.isDirectory()) visit(r);
      else if (st.isFile()) {
        sizes.set(r, st.size);
        stamps.push(`${r}:${st.size}:${st.mtimeMs}`);
      }
    }
  };
  visit('');
  const indexed = sizes.has(MODEL_INDEX_FILE)
    ? weightsNamedByIndex(readTextFile(path.join(folder, MODEL_INDEX_FILE)))
    : undefined;
  const expectedSizes = new Map<string, number>();
  for (const f of sizes.keys()) {
    if (!f.endsWith('.safetensors')) continue;
    try {
      const expected = safetensorsSize(readHead(path.join(folder, f)));
      if (expected !== undefined) expectedSizes.set(f, expected);
      else expectedSizes.set(f, Number.NaN); // header not whole yet: never complete
    } catch {
      // removed while we looked
    }
  }
  return { sizes, indexed, expectedSizes, signature: stamps.sort().join('|') };
}

/**
 * The writer-finished half: a later checkpoint (higher step, or `_final`) beside it says the trainer
 * moved on. `siblings` are the folder names of the same run.
 */
export function laterCheckpointExists(name: string, siblings: readonly string[]): boolean {
  const me = parseCheckpointFolder(name);
  if (!me || me.final) return false;
  const prefix = name.slice(0, name.length - `_step${me.step}`.length);
  return siblings.some((s) => {
    const other = parseCheckpointFolder(s);
    if (!other || !s.startsWith(prefix)) return false;
    return other.final || (other.step ?? -1) > (me.step ?? -1);
  });
}

/** Checkpoint folders directly inside `dir`, sorted by run then step (final last). */
export function checkpointFolders(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && parseCheckpointFolder(e.name))
    .map((e) => e.name)
    .sort(compareCheckpoints);
}

export function compareCheckpoints(a: string, b: string): number {
  const pa = parseCheckpointFolder(a);
  const pb = parseCheckpointFolder(b);
  const ra = a.replace(/_(step\d+|final)$/, '');
  const rb = b.replace(/_(step\d+|final)$/, '');
  if (ra !== rb) return ra < rb ? -1 : 1;
  const sa = pa?.final ? Number.POSITIVE_INFINITY : (pa?.step ?? -1);
  const sb = pb?.final ? Number.POSITIVE_INFINITY : (pb?.step ?? -1);
  return sa - sb;
}

/**
 * The rule on a local folder whose writer is known to be finished or not (`writerFinished`): the
 * restart's choice of a checkpoint after a job ended or was cut off.
 */
export function localCheckpointVerdict(
  dir: string,
  name: string,
  writerFinished: boolean | 'by-siblings',
): Verdict {
  const weights = weightsVerdict(localCheckpointFiles(path.join(dir, name)));
  if (!weights.complete) return weights;
  const finished =
    writerFinished === 'by-siblings'
      ? laterCheckpointExists(name, checkpointFolders(dir)) || parseCheckpointFolder(name)?.final === true
      : writerFinished;
  return finished ? weights : { complete: false, why: 'the trainer may still be writing it' };
}

/**
 * Watches checkpoint folders while a trainer runs: a folder becomes complete once its weights are whole
 * and its writer finished (a later checkpoint appeared, or nothing changed for `stableMs`).
 */
export class CheckpointTracker {
  private readonly seen = new Map<string, { signature: string; since: number }>();
  private readonly done = new Map<string, string>();

  constructor(
    private readonly dirs: () => readonly string[],
    private readonly stableMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Complete checkpoints, by name, with their folder. */
  complete(): { name: string; path: string }[] {
    return [...this.done.entries()]
      .map(([name, p]) => ({ name, path: p }))
      .sort((a, b) => compareCheckpoints(a.name, b.name));
  }

  /**
   * Looks once; returns the folders that became complete with this look. `ended`: the trainer has
   * exited, so nothing grows any more (weights must still be whole).
   */
  scan(ended = false): { name: string; path: string }[] {
    const newly: { name: string; path: string }[] = [];
    for (const dir of this.dirs()) {
      const names = checkpointFolders(dir);
      for (const name of names) {
        if (this.done.has(name)) continue;
        const folder = path.join(dir, name);
        let files: ReturnType<typeof localCheckpointFiles>;
        try {
          files = localCheckpointFiles(folder);
        } catch {
          continue; // removed while we looked
        }
        if (!weightsVerdict(files).complete) {
          this.seen.delete(name);
          continue;
        }
        let finished = ended || laterCheckpointExists(name, names);
        if (!finished) {
          const prev = this.seen.get(name);
          if (!prev || prev.signature !== files.signature) {
            this.seen.set(name, { signature: files.signature, since: this.now() });
            finished = this.stableMs === 0;
          } else finished = this.now() - prev.since >= this.stableMs;
        }
        if (!finished) continue;
        this.done.set(name, folder);
        newly.push({ name, path: folder });
      }
    }
    return newly;
  }
}
