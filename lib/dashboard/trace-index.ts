import * as fs from 'node:fs';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';
import {
  forEachLineBlock,
  isObject,
  NOFOLLOW,
  openRegularFile,
  readInto,
  TAIL_BYTES,
  tailBefore,
  writeFileAtomic,
} from '../util';
import { TraceScanner, type ScanSink } from './scan';

/*
 * The per-trace column store, cached beside the trace: `<traces>/.rlvr-index/<trace file>/`.
 *
 * `index.json` names the columns and how many records each holds; each column is an append-only file of
 * float64 records (native little-endian): a series is (ts, value) pairs, a span name (ts, dur, group,
 * slot), an instant name (ts), the explicit steps (ts, step). An update parses only the bytes the trace
 * grew by (from the last complete line the index has), appends to the columns, then replaces
 * index.json; a crash between the two leaves longer columns, which the next update cuts back to what
 * index.json says. An unchanged trace (same size and mtime) is not read at all; a grown one is checked
 * to still start with what was indexed (its 64 bytes before the indexed end), else indexed anew.
 * Memory stays bounded: the trace is read in 8 MiB chunks (a line over 64 MB is passed over and counted
 * bad: util/line-blocks.ts) and pending records are flushed every 2M.
 */

export const INDEX_DIR = '.rlvr-index';
const VERSION = 2;
const CHUNK = 8 * 1024 * 1024;
const FLUSH_RECORDS = 2_000_000;
/** Column files are opened without following a symlink (trimColumns also refuses one). */
const READ = fs.constants.O_RDONLY | NOFOLLOW;
const APPEND = fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | NOFOLLOW;

export const STRIDE = { series: 2, spans: 4, instants: 1, steps: 2 } as const;
type Group = keyof typeof STRIDE;

export interface ColumnInfo {
  readonly file: string;
  n: number;
}

export interface IndexManifest {
  version: number;
  /** size: the end of the last complete line indexed; seen: the file's size then (a cut line may follow). */
  trace: { size: number; seen: number; mtimeMs: number; tail: string };
  lines: number;
  badLines: number;
  tsMin: number;
  tsMax: number;
  series: Record<string, ColumnInfo>;
  spans: Record<string, ColumnInfo>;
  instants: Record<string, ColumnInfo>;
  steps: Record<string, ColumnInfo>;
  meta: Record<string, unknown>;
  fates: Record<string, Record<string, number>> | undefined;
  /** Whole-run histograms (scan.ts HISTOGRAM_BIN): name → bin → count. */
  histograms: Record<string, Record<string, number>>;
  nextFile: number;
}

export interface UpdateStats {
  /** Trace bytes read by this update (0 when the trace did not change). */
  readonly bytesRead: number;
  readonly linesAdded: number;
  readonly rebuilt: boolean;
}

/** A map keyed by names from the trace (`__proto__`, `constructor` are names like any other). */
function dict<T>(entries?: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, entries);
}

const COLUMN_FILE = /^[a-z]\d{1,12}\.f64$/;

function emptyManifest(): IndexManifest {
  return {
    version: VERSION,
    trace: { size: 0, seen: 0, mtimeMs: 0, tail: '' },
    lines: 0,
    badLines: 0,
    tsMin: Infinity,
    tsMax: -Infinity,
    series: dict(),
    spans: dict(),
    instants: dict(),
    steps: dict(),
    meta: dict(),
    fates: undefined,
    histograms: dict(),
    nextFile: 0,
  };
}

export function indexDirOf(traceFile: string): string {
  return path.join(path.dirname(traceFile), INDEX_DIR, path.basename(traceFile));
}

/**
 * The manifest, if it is one we wrote: right version, every column a file of this folder (`s12.f64`, no
 * path) with a whole count. Anything else (an older layout, a planted or damaged file) reads as none, so
 * the index is built anew from the trace.
 */
function readManifest(dir: string): IndexManifest | undefined {
  let m: IndexManifest;
  try {
    m = JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8')) as IndexManifest;
  } catch {
    return undefined;
  }
  if (!isObject(m) || m.version !== VERSION || !isObject(m.trace) || !isObject(m.meta)) return undefined;
  const { size, seen, mtimeMs, tail } = m.trace;
  if (![size, seen, m.nextFile, m.lines, m.badLines].every(Number.isSafeInteger)) return undefined;
  if (typeof mtimeMs !== 'number' || typeof tail !== 'string') return undefined;
  if (!isObject(m.histograms) || !Object.values(m.histograms).every(isObject)) return undefined;
  for (const group of Object.keys(STRIDE) as Group[]) {
    const columns: unknown = m[group];
    if (!isObject(columns)) return undefined;
    for (const c of Object.values(columns)) {
      if (!isObject(c) || typeof c.file !== 'string' || !COLUMN_FILE.test(c.file)) return undefined;
      if (!Number.isSafeInteger(c.n) || (c.n as number) < 0) return undefined;
    }
    m[group] = dict(columns as Record<string, ColumnInfo>);
  }
  m.meta = dict(m.meta);
  m.histograms = dict(Object.fromEntries(Object.entries(m.histograms).map(([k, h]) => [k, dict(h)])));
  return m;
}

/** Appends records to the columns, buffering up to FLUSH_RECORDS values. */
class ColumnWriter implements ScanSink {
  private pending = new Map<ColumnInfo, number[]>();
  private pendingValues = 0;
  private lastKey = '';
  private lastColumn: ColumnInfo | undefined;

  constructor(
    private readonly dir: string,
    readonly m: IndexManifest,
  ) {}

  private column(group: Group, key: string): ColumnInfo {
    const columns = this.m[group];
    let c = columns[key];
    if (!c) {
      c = { file: `${group[0]}${this.m.nextFile++}.f64`, n: 0 };
      columns[key] = c;
    }
    return c;
  }

  private push(c: ColumnInfo, a: number, b?: number, d?: number, e?: number): void {
    let p = this.pending.get(c);
    if (!p) {
      p = [];
      this.pending.set(c, p);
    }
    p.push(a);
    if (b !== undefined) p.push(b);
    if (d !== undefined) p.push(d, e!);
    c.n++;
    this.pendingValues++;
    if (this.pendingValues >= FLUSH_RECORDS) this.flush();
    if (a < this.m.tsMin) this.m.tsMin = a;
    if (a > this.m.tsMax) this.m.tsMax = a;
  }

  value(name: string, field: string, ts: number, v: number): void {
    const key = `${name}|${field}`;
    // Consecutive values of one counter hit different keys; the cache helps the buffer's size run.
    const c = key === this.lastKey ? this.lastColumn! : this.column('series', key);
    this.lastKey = key;
    this.lastColumn = c;
    this.push(c, ts, v);
  }
  span(name: string, ts: number, dur: number, group: number, slot: number): void {
    this.push(this.column('spans', name), ts, dur, group, slot);
  }
  instant(name: string, ts: number): void {
    this.push(this.column('instants', name), ts);
  }
  step(ts: number, step: number): void {
    this.push(this.column('steps', 'step'), ts, step);
  }
  meta(fields: Record<string, unknown>): void {
    for (const [k, v] of Object.entries(fields)) if (k !== 'type' && k !== 'ts') this.m.meta[k] = v;
  }
  fates(fates: Record<string, Record<string, number>>): void {
    this.m.fates = fates;
  }
  badLine(): void {
    this.m.badLines++;
  }
  histogram(name: string, bin: number, count: number): void {
    const h = (this.m.histograms[name] ??= dict());
    h[bin] = (h[bin] ?? 0) + count;
  }

  flush(): void {
    for (const [c, values] of this.pending) {
      const fd = fs.openSync(path.join(this.dir, c.file), APPEND);
      try {
        fs.writeSync(fd, new Uint8Array(Float64Array.from(values).buffer));
      } finally {
        fs.closeSync(fd);
      }
    }
    this.pending.clear();
    this.pendingValues = 0;
  }
}

/**
 * Cuts each column back to the records index.json names (a crash after appends, before the manifest);
 * false when a column is shorter than that or is not a regular file (the index is then built anew).
 */
function trimColumns(dir: string, m: IndexManifest): boolean {
  for (const group of Object.keys(STRIDE) as Group[]) {
    for (const c of Object.values(m[group])) {
      const file = path.join(dir, c.file);
      const want = c.n * STRIDE[group] * 8;
      let st: fs.Stats | undefined;
      try {
        st = fs.lstatSync(file);
      } catch {
        st = undefined;
      }
      if (st && !st.isFile()) return false;
      const size = st?.size ?? 0;
      if (size < want) return false;
      if (size > want) fs.truncateSync(file, want);
    }
  }
  return true;
}

/** The index folders as real folders: a symlink (or a file) in their place is removed first. */
function makeRealDir(dir: string): void {
  for (const d of [path.dirname(dir), dir]) {
    try {
      const st = fs.lstatSync(d);
      if (st.isDirectory()) continue;
      fs.rmSync(d, { force: true });
    } catch {
      // missing: made below
    }
    fs.mkdirSync(d, { recursive: true });
  }
}

/** Parses trace bytes [from, size) into the writer; returns the end of the last complete line. */
function parseFrom(
  fd: number,
  from: number,
  size: number,
  writer: ColumnWriter,
): { end: number; lines: number } {
  const scanner = new TraceScanner(writer);
  let lines = 0;
  const { end, longLines } = forEachLineBlock(fd, from, size, CHUNK, (buf, start, stop) => {
    lines += scanner.scan(buf, start, stop);
  });
  for (let i = 0; i < longLines; i++) writer.badLine();
  scanner.finish();
  return { end, lines: lines + longLines };
}

/** Brings the trace's index up to date; returns what it read. */
export async function updateIndex(traceFile: string): Promise<UpdateStats> {
  const dir = indexDirOf(traceFile);
  makeRealDir(dir);
  const release = await lockfile.lock(dir, {
    lockfilePath: `${dir}.lock`,
    retries: { retries: 100, minTimeout: 20, maxTimeout: 500 },
    stale: 60_000,
  });
  try {
    return updateLocked(traceFile, dir);
  } finally {
    await release();
  }
}

function updateLocked(traceFile: string, dir: string): UpdateStats {
  const f = openRegularFile(traceFile);
  if (!f) throw new Error(`${traceFile} is not a regular file`);
  const { fd } = f;
  try {
    const st = fs.fstatSync(fd);
    let m = readManifest(dir);
    if (m && m.trace.seen === st.size && m.trace.mtimeMs === st.mtimeMs)
      return { bytesRead: 0, linesAdded: 0, rebuilt: false };
    let bytesRead = 0;
    let rebuilt = false;
    if (m && st.size >= m.trace.size) {
      bytesRead += Math.min(TAIL_BYTES, m.trace.size);
      if (tailBefore(fd, m.trace.size) !== m.trace.tail) m = undefined;
    } else m = undefined;
    if (m && !trimColumns(dir, m)) m = undefined;
    if (!m) {
      rebuilt = true;
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
      fs.mkdirSync(dir, { recursive: true });
      m = emptyManifest();
    }
    const writer = new ColumnWriter(dir, m);
    const from = m.trace.size;
    const { end, lines } = parseFrom(fd, from, st.size, writer);
    writer.flush();
    bytesRead += st.size - from;
    m.trace = { size: end, seen: st.size, mtimeMs: st.mtimeMs, tail: tailBefore(fd, end) };
    m.lines += lines;
    writeFileAtomic(path.join(dir, 'index.json'), JSON.stringify(m));
    return { bytesRead, linesAdded: lines, rebuilt };
  } finally {
    fs.closeSync(fd);
  }
}

/** A trace's index, read: its manifest and its columns (read whole on first use, then kept). */
export class TraceIndex {
  private cache = new Map<string, Float64Array>();

  constructor(
    readonly dir: string,
    readonly manifest: IndexManifest,
  ) {}

  /** The columns of one group, or an empty array for a key the trace does not have. */
  column(group: Group, key: string): Float64Array {
    const c = Object.hasOwn(this.manifest[group], key) ? this.manifest[group][key] : undefined;
    if (!c) return new Float64Array(0);
    const cacheKey = `${group}\u0000${key}`;
    const hit = this.cache.get(cacheKey);
    if (hit) return hit;
    const values = c.n * STRIDE[group];
    const array = new Float64Array(values);
    const fd = fs.openSync(path.join(this.dir, c.file), READ);
    try {
      readInto(fd, Buffer.from(array.buffer), 0, 0, values * 8);
    } finally {
      fs.closeSync(fd);
    }
    this.cache.set(cacheKey, array);
    return array;
  }

  keys(group: Group): string[] {
    return Object.keys(this.manifest[group]);
  }
}

/** Updates the index if the trace changed, then opens it. */
export async function openIndex(traceFile: string): Promise<{ index: TraceIndex; stats: UpdateStats }> {
  const stats = await updateIndex(traceFile);
  const dir = indexDirOf(traceFile);
  const manifest = readManifest(dir);
  if (!manifest) throw new Error(`the index of ${traceFile} could not be read back`);
  return { index: new TraceIndex(dir, manifest), stats };
}
