import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  forEachLineBlock,
  MAX_LINE,
  openRegularFile,
  readJsonFile,
  tailBefore,
  writeFileAtomic,
} from '../util';

/*
 * The completions beside a trace, looked up by step or prompt id without reading the files whole:
 * `rollouts.jsonl` (rollout_logger.py: prompt_id, prompt, completions, rewards, generated_at_version)
 * and `samples.jsonl` (sample_logger.py: event, ts, prompt_id, and per event version, trained_at_step,
 * reason, …). A small line index (offset, length, step, prompt) is kept beside the trace index and
 * extended by the bytes a file grew by (after checking the 64 bytes before them are unchanged: both
 * loggers open their file "w", so a restarted trainer rewrites it); a lookup reads only the lines it returns.
 */

interface LineIndex {
  size: number;
  /** The 64 bytes before `size` (base64): a file rewritten since (a restarted trainer opens it "w") differs. */
  tail: string;
  /** [offset, length, step (NaN → null), prompt index] per line. */
  lines: [number, number, number | null, number][];
  prompts: string[];
}

const PROMPT = Buffer.from('"prompt_id":', 'latin1');

/** Where the value of `key` (`"name":`) starts: after the colon and any spaces (json.dumps or not). */
function valueAt(line: Buffer, key: Buffer): number {
  const at = line.indexOf(key);
  if (at < 0) return -1;
  let i = at + key.length;
  while (line[i] === 0x20) i++;
  return i;
}

function numberAfter(line: Buffer, key: Buffer): number | null {
  const start = valueAt(line, key);
  if (start < 0) return null;
  let end = start;
  while (end < line.length && line[end] !== 0x2c && line[end] !== 0x7d) end++;
  const v = Number(line.toString('latin1', start, end));
  return Number.isFinite(v) && end > start ? v : null;
}

function promptOf(line: Buffer): string | undefined {
  const start = valueAt(line, PROMPT);
  if (start < 0 || line[start] !== 0x22) return undefined;
  const end = line.indexOf(0x22, start + 1);
  return end < 0 ? undefined : line.toString('utf8', start + 1, end);
}

function emptyLineIndex(): LineIndex {
  return { size: 0, tail: '', lines: [], prompts: [] };
}

/** A line index read back, if it has the shape we write (else it is built anew). */
function readLineIndex(indexFile: string, size: number): LineIndex {
  const ix = readJsonFile<LineIndex | undefined>(indexFile, undefined);
  const ok =
    ix &&
    typeof ix.size === 'number' &&
    ix.size <= size &&
    typeof ix.tail === 'string' &&
    Array.isArray(ix.lines) &&
    Array.isArray(ix.prompts) &&
    ix.lines.every(
      (l) =>
        Array.isArray(l) &&
        l.length === 4 &&
        l[0] >= 0 &&
        l[1] >= 0 &&
        l[1] <= MAX_LINE &&
        l[0] + l[1] <= ix.size &&
        Number.isInteger(l[3]) &&
        l[3] >= 0 &&
        l[3] < ix.prompts.length,
    );
  return ok ? ix : emptyLineIndex();
}

/**
 * Extends (or builds) the line index of `file`, keyed by `stepKey` (e.g. `"generated_at_version": `);
 * undefined when `file` is not a regular file (a symlink, a FIFO: see openRegularFile).
 */
function lineIndex(file: string, indexFile: string, stepKey: string): LineIndex | undefined {
  const f = openRegularFile(file);
  if (!f) return undefined;
  const { fd, size } = f;
  let ix: LineIndex;
  try {
    ix = readLineIndex(indexFile, size);
    if (ix.size > 0 && tailBefore(fd, ix.size) !== ix.tail) ix = emptyLineIndex();
    if (ix.size === size) return ix;
    const key = Buffer.from(`"${stepKey}":`, 'latin1');
    const promptIds = new Map(ix.prompts.map((p, i) => [p, i]));
    const lines = ix.lines;
    const prompts = ix.prompts;
    const { end } = forEachLineBlock(fd, ix.size, size, 4 * 1024 * 1024, (buf, start, stop, offset) => {
      for (let s = start, e = buf.indexOf(10, s); s < stop; s = e + 1, e = buf.indexOf(10, s)) {
        const line = buf.subarray(s, e);
        const prompt = promptOf(line) ?? '';
        let p = promptIds.get(prompt);
        if (p === undefined) {
          p = prompts.length;
          prompts.push(prompt);
          promptIds.set(prompt, p);
        }
        lines.push([offset + s, e - s, numberAfter(line, key), p]);
      }
    });
    // A cut last line (or a long one still being passed over) is read from its start again next time.
    ix.size = end;
    ix.tail = tailBefore(fd, end);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.mkdirSync(path.dirname(indexFile), { recursive: true });
    writeFileAtomic(indexFile, JSON.stringify(ix));
  } catch {
    // a read-only results folder still answers (the index is built again next time)
  }
  return ix;
}

function readLines(file: string, picks: readonly [number, number][]): Record<string, unknown>[] {
  const f = openRegularFile(file);
  if (!f) return [];
  try {
    return picks.flatMap(([offset, length]) => {
      const buf = Buffer.alloc(length);
      const got = fs.readSync(f.fd, buf, 0, length, offset);
      try {
        return [JSON.parse(buf.toString('utf8', 0, got)) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  } finally {
    fs.closeSync(f.fd);
  }
}

const MAX_TEXT = 4000;

/** Long texts cut (a completion can be 16k tokens); the page shows the start and says how long it was. */
function clip(record: Record<string, unknown>): Record<string, unknown> {
  const cut = (v: unknown): unknown =>
    typeof v === 'string' && v.length > MAX_TEXT ? `${v.slice(0, MAX_TEXT)}… [${v.length} chars]` : v;
  return Object.fromEntries(
    Object.entries(record).map(([k, v]) => [k, Array.isArray(v) ? v.map(cut) : cut(v)]),
  );
}

export interface SampleLookup {
  readonly rollouts: Record<string, unknown>[];
  readonly events: Record<string, unknown>[];
  /** Records that matched beyond the limit. */
  readonly more: number;
}

export interface SampleFiles {
  readonly samples: string | undefined;
  readonly rollouts: string | undefined;
  /** Where the line indexes go (the trace's index folder). */
  readonly indexDir: string;
}

/**
 * A step's records (samples trained at that step and their rollouts, plus rollouts generated at the
 * version before it), or a prompt's (every event and rollout of that prompt id).
 */
export function lookupSamples(
  files: SampleFiles,
  by: { step?: number; prompt?: string },
  limit = 40,
): SampleLookup {
  const events = files.samples
    ? lineIndex(files.samples, path.join(files.indexDir, 'samples.lines.json'), 'trained_at_step')
    : undefined;
  const rollouts = files.rollouts
    ? lineIndex(files.rollouts, path.join(files.indexDir, 'rollouts.lines.json'), 'generated_at_version')
    : undefined;
  let prompts: Set<number> | undefined;
  let eventLines: [number, number][] = [];
  let rolloutLines: [number, number][] = [];
  if (by.prompt !== undefined) {
    const want = by.prompt;
    if (events)
      eventLines = events.lines.filter((l) => events.prompts[l[3]] === want).map((l) => [l[0], l[1]]);
    if (rollouts)
      rolloutLines = rollouts.lines.filter((l) => rollouts.prompts[l[3]] === want).map((l) => [l[0], l[1]]);
  } else if (by.step !== undefined) {
    const step = by.step;
    if (events) {
      const trained = events.lines.filter((l) => l[2] === step);
      eventLines = trained.map((l) => [l[0], l[1]]);
      prompts = new Set(
        trained
          .map((l) => l[3])
          .map((p) => events.prompts[p])
          .map((p) => rollouts?.prompts.indexOf(p) ?? -1),
      );
    }
    if (rollouts)
      rolloutLines = rollouts.lines
        .filter((l) => (prompts && prompts.has(l[3])) || l[2] === step - 1)
        .map((l) => [l[0], l[1]]);
  }
  const more = Math.max(0, rolloutLines.length - limit) + Math.max(0, eventLines.length - limit);
  return {
    rollouts: files.rollouts ? readLines(files.rollouts, rolloutLines.slice(0, limit)).map(clip) : [],
    events: files.samples ? readLines(files.samples, eventLines.slice(0, limit)).map(clip) : [],
    more,
  };
}
