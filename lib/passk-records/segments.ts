/**
 * A shard's output file as the job leaves it in the run folder: the script appends to it all job long in a
 * work folder outside the run folder, and the job copies its complete lines into segment files beside
 * where the file would be, each written once (`verification_results.00000.jsonl`, `…00001.jsonl`, …).
 * SageMaker uploads a changed file whole on every sync, so one file that grows all job would be sent
 * again and again; sealed segments are sent once. A run folder of an older job, or a bare folder of their
 * script's output, has the single file itself (the legacy name): it is read first, then the segments in
 * sequence order, as one stream.
 */
import * as path from 'node:path';

/** Digits of a segment's sequence number: padded so that a listing sorts them (more digits past 99999). */
export const SEGMENT_DIGITS = 5;

function split(name: string): { stem: string; ext: string } {
  const ext = path.posix.extname(name);
  return ext && ext !== name ? { stem: name.slice(0, -ext.length), ext } : { stem: name, ext: '' };
}

/** `verification_results.jsonl`, 3 → `verification_results.00003.jsonl` (a name without extension: `name.00003`). */
export function segmentName(name: string, seq: number): string {
  const { stem, ext } = split(name);
  return `${stem}.${String(seq).padStart(SEGMENT_DIGITS, '0')}${ext}`;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const patterns = new Map<string, RegExp>();

function patternOf(name: string): RegExp {
  let p = patterns.get(name);
  if (!p) {
    const { stem, ext } = split(name);
    // Exactly the padded form, or longer without a leading zero: one name per number.
    p = new RegExp(
      `^${escapeRegExp(stem)}\\.(\\d{${SEGMENT_DIGITS}}|[1-9]\\d{${SEGMENT_DIGITS},})${escapeRegExp(ext)}$`,
    );
    patterns.set(name, p);
  }
  return p;
}

/** The sequence number of `entry` when it is a segment of the file `name`, else undefined. */
export function segmentSeq(name: string, entry: string): number | undefined {
  const m = patternOf(name).exec(entry);
  return m ? Number(m[1]) : undefined;
}

/** Whether `entry` is the file `name` itself (the legacy single file) or one of its segments. */
export function isStreamFile(name: string, entry: string): boolean {
  return entry === name || segmentSeq(name, entry) !== undefined;
}

/**
 * The entries of one folder that make the file `name`'s stream, in reading order: the legacy file first,
 * then the segments by sequence number. `entries` are base names (a listing of the folder, or of keys).
 */
export function streamOrder(name: string, entries: Iterable<string>): string[] {
  let legacy = false;
  const segments: [number, string][] = [];
  for (const e of entries) {
    if (e === name) legacy = true;
    else {
      const seq = segmentSeq(name, e);
      if (seq !== undefined) segments.push([seq, e]);
    }
  }
  segments.sort((a, b) => a[0] - b[0]);
  return [...(legacy ? [name] : []), ...segments.map(([, e]) => e)];
}
