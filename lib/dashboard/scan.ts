/*
 * The trace scanner: turns the trainer's JSONL events (their tracer.py) into column appends.
 *
 * Hand-written fast path, because the target is ≥ 80% of a plain line split's speed on a 600 MB trace
 * (bench row "dashboard index") and JSON.parse of every line measured at about a third of it: tracer.py
 * writes `json.dumps(event)` with `type`, `name`, `ts` (and `dur`) first and the values flat after them,
 * so a line whose values are numbers or strings is read in place. A line with nested values (arrays,
 * dicts), a line in any other shape, or a line the fast path cannot read is parsed with JSON.parse —
 * the result is the same either way (test/dashboard/scan.test.ts checks both paths agree).
 *
 * `buffer` events (one per put/pop/use, carrying cumulative per-version fates, so most of a long
 * trace's bytes) are read for `ts` and `size` only; their `by_version` is kept at most once per second
 * of trace time (the last event of each second) as samples by age, and their `fates` from the last event.
 */

export interface ScanSink {
  /** A numeric counter value: series `name|field`. */
  value(name: string, field: string, ts: number, v: number): void;
  span(name: string, ts: number, dur: number, group: number, slot: number): void;
  instant(name: string, ts: number): void;
  meta(fields: Record<string, unknown>): void;
  /** A counter's explicit `step` field. */
  step(ts: number, step: number): void;
  /** The last buffer event's fates (cumulative per version). */
  fates(fates: Record<string, Record<string, number>>): void;
  /** Adds to a whole-run histogram: `bin` is the lower edge of a HISTOGRAM_BIN-wide bin. */
  histogram(name: string, bin: number, count: number): void;
  badLine(): void;
}

/** Completion-length histograms (correct vs wrong over the whole run) bin by 100 tokens, as their viewer. */
export const HISTOGRAM_BIN = 100;

const Q = 0x22; // "
const COMMA = 0x2c;
const CLOSE = 0x7d; // }
const BACKSLASH = 0x5c;
const PREFIX = Buffer.from('{"type": "', 'latin1');
const NAME = Buffer.from(', "name": "', 'latin1');
const TS = Buffer.from(', "ts": ', 'latin1');
const FIELD = Buffer.from(', "', 'latin1');
const COLON = Buffer.from('": ', 'latin1');
const SIZE = Buffer.from(', "size": ', 'latin1');

function matches(buf: Buffer, pos: number, pat: Buffer): boolean {
  if (pos + pat.length > buf.length) return false;
  for (let i = 0; i < pat.length; i++) if (buf[pos + i] !== pat[i]) return false;
  return true;
}

/** The end of a JSON string starting after its opening quote, or -1 (cut line). */
function stringEnd(buf: Buffer, pos: number, end: number): number {
  for (let i = pos; i < end; i++) {
    const c = buf[i];
    if (c === Q) return i;
    if (c === BACKSLASH) i++;
  }
  return -1;
}

/** Like stringEnd, but -1 also for a string with escapes (names and keys are read raw). */
function plainStringEnd(buf: Buffer, pos: number, end: number): number {
  for (let i = pos; i < end; i++) {
    const c = buf[i];
    if (c === Q) return i;
    if (c === BACKSLASH) return -1;
  }
  return -1;
}

function numberEnd(buf: Buffer, pos: number, end: number): number {
  let i = pos;
  while (i < end && buf[i] !== COMMA && buf[i] !== CLOSE) i++;
  return i;
}

const names = new Map<string, string>();
/** Names repeat millions of times: one string per distinct name. */
function nameAt(buf: Buffer, a: number, b: number): string {
  const s = buf.toString('latin1', a, b);
  let hit = names.get(s);
  if (hit === undefined) {
    hit = buf.toString('utf8', a, b);
    if (names.size < 10_000) names.set(s, hit);
  }
  return hit;
}

type Kind = 'span' | 'counter' | 'instant' | 'buffer' | 'meta';
const KINDS: readonly Kind[] = ['span', 'counter', 'instant', 'buffer', 'meta'];

interface PendingBuffer {
  /** The raw line (fast path) or the parsed event (JSON.parse path). */
  line: Buffer | Record<string, unknown>;
  ts: number;
  second: number;
}

const BY_VERSION = Buffer.from('"by_version": {', 'latin1');

/** The flat dict after `pattern` (which ends with its `{`), parsed; undefined when not found or not flat. */
function flatDictAfter(line: Buffer, pattern: Buffer): Record<string, unknown> | undefined {
  const at = line.indexOf(pattern);
  if (at < 0) return undefined;
  const open = at + pattern.length - 1;
  const close = line.indexOf(CLOSE, open);
  if (close < 0 || (line.indexOf(0x7b, open + 1) >= 0 && line.indexOf(0x7b, open + 1) < close))
    return undefined;
  try {
    return JSON.parse(line.toString('utf8', open, close + 1)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

function arrayStats(sink: ScanSink, name: string, field: string, ts: number, xs: readonly number[]): void {
  const sorted = [...xs].sort((a, b) => a - b);
  let sum = 0;
  for (const x of sorted) sum += x;
  sink.value(name, `${field}:n`, ts, sorted.length);
  if (sorted.length === 0) return;
  sink.value(name, `${field}:mean`, ts, sum / sorted.length);
  sink.value(name, `${field}:p50`, ts, quantile(sorted, 0.5));
  sink.value(name, `${field}:p90`, ts, quantile(sorted, 0.9));
  sink.value(name, `${field}:p99`, ts, quantile(sorted, 0.99));
  sink.value(name, `${field}:max`, ts, sorted[sorted.length - 1]);
}

function isNumbers(v: unknown[]): v is number[] {
  return v.every((x) => typeof x === 'number');
}

/**
 * `batch.reward_vs_len` (rewards, completion_lens, datasets, one entry per sample): completion length
 * quantiles of correct (reward > 0) and wrong samples, and per dataset its samples, tokens and reward.
 */
function rewardVsLen(sink: ScanSink, name: string, ts: number, o: Record<string, unknown>): void {
  const { rewards, completion_lens: lens, datasets } = o;
  if (!Array.isArray(rewards) || !Array.isArray(lens) || !isNumbers(rewards) || !isNumbers(lens)) return;
  const n = Math.min(rewards.length, lens.length);
  const correct: number[] = [];
  const wrong: number[] = [];
  for (let i = 0; i < n; i++) (rewards[i] > 0 ? correct : wrong).push(lens[i]);
  for (const [h, lens_] of [
    ['len_correct', correct],
    ['len_wrong', wrong],
  ] as const)
    for (const l of lens_) sink.histogram(h, Math.floor(l / HISTOGRAM_BIN) * HISTOGRAM_BIN, 1);
  arrayStats(sink, name, 'len_correct', ts, correct);
  arrayStats(sink, name, 'len_wrong', ts, wrong);
  if (!Array.isArray(datasets)) return;
  const per = new Map<string, { n: number; tokens: number; reward: number }>();
  for (let i = 0; i < n; i++) {
    const d = String(datasets[i]);
    const e = per.get(d) ?? { n: 0, tokens: 0, reward: 0 };
    e.n++;
    e.tokens += lens[i];
    e.reward += rewards[i];
    per.set(d, e);
  }
  for (const [d, e] of per) {
    sink.value(name, `dataset=${d}:samples`, ts, e.n);
    sink.value(name, `dataset=${d}:tokens`, ts, e.tokens);
    sink.value(name, `dataset=${d}:reward_mean`, ts, e.reward / e.n);
  }
}

/** Any counter's values as series: numbers, booleans, number arrays (quantiles), string arrays (counts), dicts (dotted). */
function flatten(
  sink: ScanSink,
  name: string,
  ts: number,
  prefix: string,
  o: Record<string, unknown>,
  depth: number,
): void {
  for (const [k, v] of Object.entries(o)) {
    if (depth === 0 && (k === 'type' || k === 'name' || k === 'ts')) continue;
    const field = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'number') {
      if (depth === 0 && k === 'step') sink.step(ts, v);
      sink.value(name, field, ts, v);
    } else if (typeof v === 'boolean') sink.value(name, field, ts, v ? 1 : 0);
    else if (Array.isArray(v)) {
      if (isNumbers(v)) arrayStats(sink, name, field, ts, v);
      else if (v.every((x) => typeof x === 'string')) {
        const counts = new Map<string, number>();
        for (const x of v as string[]) counts.set(x, (counts.get(x) ?? 0) + 1);
        for (const [x, c] of counts) sink.value(name, `${field}=${x}`, ts, c);
      }
    } else if (v && typeof v === 'object' && depth < 3)
      flatten(sink, name, ts, field, v as Record<string, unknown>, depth + 1);
  }
  if (depth === 0 && name === 'batch.reward_vs_len') rewardVsLen(sink, name, ts, o);
}

function numberOr(v: unknown, fallback: number): number {
  return typeof v === 'number' ? v : fallback;
}

export class TraceScanner {
  private pending: PendingBuffer | undefined;
  private lastBufferSecond = NaN;

  constructor(private readonly sink: ScanSink) {}

  /** The lines in buf[start, end] (end: the last line's newline); returns how many. */
  scan(buf: Buffer, start: number, end: number): number {
    let s = start;
    let lines = 0;
    while (s < end) {
      let e = buf.indexOf(10, s);
      if (e < 0 || e > end) e = end;
      if (e > s) this.line(buf, s, e);
      lines++;
      s = e + 1;
    }
    return lines;
  }

  /** The last buffer event of the scan: its by_version and fates. */
  finish(): void {
    this.flushBuffer(true);
  }

  private line(buf: Buffer, s: number, e: number): void {
    if (!matches(buf, s, PREFIX) || !this.fast(buf, s, e)) this.slow(buf, s, e);
  }

  /** tracer.py's own shape; false = read this line with JSON.parse instead. */
  private fast(buf: Buffer, s: number, e: number): boolean {
    let pos = s + PREFIX.length;
    const typeEnd = stringEnd(buf, pos, e);
    if (typeEnd < 0) return false;
    const kind = buf.toString('latin1', pos, typeEnd) as Kind;
    if (kind === 'meta' || !KINDS.includes(kind)) return false;
    pos = typeEnd + 1;
    let name = '';
    if (kind !== 'buffer') {
      if (!matches(buf, pos, NAME)) return false;
      pos += NAME.length;
      const nameEnd = plainStringEnd(buf, pos, e);
      if (nameEnd < 0) return false;
      name = nameAt(buf, pos, nameEnd);
      pos = nameEnd + 1;
    }
    if (!matches(buf, pos, TS)) return false;
    pos += TS.length;
    const tsEnd = numberEnd(buf, pos, e);
    const ts = Number(buf.toString('latin1', pos, tsEnd));
    if (Number.isNaN(ts)) return false;
    pos = tsEnd;
    if (kind === 'buffer') return this.bufferEvent(buf, s, e, pos, ts);
    if (kind === 'instant') {
      this.sink.instant(name, ts);
      return true;
    }
    return this.fields(buf, e, pos, kind, name, ts);
  }

  /** The flat `, "key": value` pairs after ts; false at the first nested value (before emitting any). */
  private fields(
    buf: Buffer,
    e: number,
    start: number,
    kind: 'span' | 'counter',
    name: string,
    ts: number,
  ): boolean {
    const keys: string[] = [];
    const values: number[] = [];
    let pos = start;
    while (pos < e && buf[pos] !== CLOSE) {
      if (!matches(buf, pos, FIELD)) return false;
      pos += FIELD.length;
      const keyEnd = plainStringEnd(buf, pos, e);
      if (keyEnd < 0 || !matches(buf, keyEnd, COLON)) return false;
      const key = nameAt(buf, pos, keyEnd);
      pos = keyEnd + COLON.length;
      const c = buf[pos];
      if (c === Q) {
        const strEnd = stringEnd(buf, pos + 1, e);
        if (strEnd < 0) return false;
        pos = strEnd + 1;
        continue;
      }
      if (c === 0x7b || c === 0x5b) return false; // { [: nested
      const vEnd = numberEnd(buf, pos, e);
      const text = buf.toString('latin1', pos, vEnd);
      pos = vEnd;
      if (text === 'true' || text === 'false') {
        keys.push(key);
        values.push(text === 'true' ? 1 : 0);
        continue;
      }
      if (text === 'null') continue;
      const v = Number(text);
      if (Number.isNaN(v) && text !== 'NaN') return false;
      keys.push(key);
      values.push(v);
    }
    if (kind === 'span') {
      let dur = NaN;
      let group = NaN;
      let slot = NaN;
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        if (k === 'dur') dur = values[i];
        else if (k === 'replica' || k === 'worker') group = values[i];
        else if (k === 'slot') slot = values[i];
      }
      this.sink.span(name, ts, dur, group, slot);
      return true;
    }
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] === 'step') this.sink.step(ts, values[i]);
      this.sink.value(name, keys[i], ts, values[i]);
    }
    return true;
  }

  private bufferEvent(buf: Buffer, s: number, e: number, pos: number, ts: number): boolean {
    if (!matches(buf, pos, SIZE)) return false;
    const a = pos + SIZE.length;
    const size = Number(buf.toString('latin1', a, numberEnd(buf, a, e)));
    if (Number.isNaN(size)) return false;
    this.sink.value('buffer', 'size', ts, size);
    this.keepBuffer(buf.subarray(s, e), ts);
    return true;
  }

  private keepBuffer(line: Buffer | Record<string, unknown>, ts: number): void {
    const second = Math.floor(ts);
    if (this.pending && this.pending.second !== second) this.flushBuffer(false);
    // The chunk a line lies in is never reused (index.ts reads into fresh buffers), so no copy.
    this.pending = { line, ts, second };
  }

  private flushBuffer(last: boolean): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    if (!Buffer.isBuffer(p.line)) {
      this.bufferObject(p.line, last);
      return;
    }
    if (!last) {
      // Only by_version is wanted here: a flat dict after ts and size, before the (long) fates.
      const byVersion = flatDictAfter(p.line, BY_VERSION);
      if (byVersion !== undefined) {
        this.byVersion(p.ts, byVersion);
        return;
      }
    }
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(p.line.toString('utf8')) as Record<string, unknown>;
    } catch {
      this.sink.badLine();
      return;
    }
    this.bufferObject(o, last);
  }

  /**
   * The buffer's samples by age (versions behind the newest in it: 0, 1, 2, ≥3), so the series stay
   * few however many versions a run has; and how many versions it holds.
   */
  private byVersion(ts: number, byVersion: Record<string, unknown>): void {
    if (Math.floor(ts) === this.lastBufferSecond) return;
    this.lastBufferSecond = Math.floor(ts);
    const entries = Object.entries(byVersion).filter((e): e is [string, number] => typeof e[1] === 'number');
    let newest = -Infinity;
    for (const [v] of entries) newest = Math.max(newest, Number(v));
    const ages = [0, 0, 0, 0];
    for (const [v, n] of entries) ages[Math.min(3, Math.max(0, newest - Number(v)))] += n;
    this.sink.value('buffer', 'age=0', ts, ages[0]);
    this.sink.value('buffer', 'age=1', ts, ages[1]);
    this.sink.value('buffer', 'age=2', ts, ages[2]);
    this.sink.value('buffer', 'age>=3', ts, ages[3]);
    this.sink.value('buffer', 'versions', ts, entries.length);
  }

  private bufferObject(o: Record<string, unknown>, last: boolean): void {
    const byVersion = o.by_version;
    if (byVersion && typeof byVersion === 'object')
      this.byVersion(numberOr(o.ts, NaN), byVersion as Record<string, unknown>);
    if (last && o.fates && typeof o.fates === 'object')
      this.sink.fates(o.fates as Record<string, Record<string, number>>);
  }

  private slow(buf: Buffer, s: number, e: number): void {
    let o: unknown;
    try {
      o = JSON.parse(buf.toString('utf8', s, e));
    } catch {
      this.sink.badLine();
      return;
    }
    if (!o || typeof o !== 'object' || Array.isArray(o)) {
      this.sink.badLine();
      return;
    }
    this.event(o as Record<string, unknown>);
  }

  private event(o: Record<string, unknown>): void {
    const type = o.type;
    const ts = numberOr(o.ts, NaN);
    const name = typeof o.name === 'string' ? o.name : String(type ?? 'record');
    if (type === 'meta') {
      this.sink.meta(o);
    } else if (type === 'span') {
      this.sink.span(
        name,
        ts,
        numberOr(o.dur, NaN),
        numberOr(o.replica ?? o.worker, NaN),
        numberOr(o.slot, NaN),
      );
    } else if (type === 'instant') {
      this.sink.instant(name, ts);
    } else if (type === 'buffer') {
      if (typeof o.size === 'number') this.sink.value('buffer', 'size', ts, o.size);
      this.keepBuffer(o, ts);
    } else {
      flatten(this.sink, name, ts, '', o, 0);
    }
  }
}
