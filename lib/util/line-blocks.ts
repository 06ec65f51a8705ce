import { readInto } from './safe-file';

/*
 * Reading a growing line-oriented file (a trace, a JSONL log) from where we left off: whole lines in
 * blocks, never one line held whole past MAX_LINE, and a fingerprint of the bytes before the point we
 * stopped at, so a file rewritten since (a restarted trainer opens its files "w") is noticed.
 */

/** A longer line is passed over, never held whole: no one record may take the reader's memory. */
export const MAX_LINE = 64 * 1024 * 1024;

/** How many bytes before a reader's end its fingerprint covers. */
export const TAIL_BYTES = 64;

/** The TAIL_BYTES before `end` (base64): compared before reading on from `end`. */
export function tailBefore(fd: number, end: number): string {
  const start = Math.max(0, end - TAIL_BYTES);
  const buf = Buffer.alloc(end - start);
  return buf.subarray(0, readInto(fd, buf, 0, start, buf.length)).toString('base64');
}

export interface LineBlocks {
  /** The file offset just after the last whole line passed (handed over or passed over). */
  readonly end: number;
  /** Lines longer than MAX_LINE, passed over. */
  readonly longLines: number;
}

/**
 * Reads bytes [from, size) of `fd`, `chunk` at a time, and hands `onBlock` each run of whole lines:
 * buf[start, stop) ends just after a newline; `offset` is the file offset of buf[0]. Every chunk is a
 * fresh buffer, so a caller may keep slices of it. No line handed over is longer than MAX_LINE: a longer
 * one is dropped up to its newline and counted. A cut last line (or a long one not yet ended) is left
 * for the next read, from `end`.
 */
export function forEachLineBlock(
  fd: number,
  from: number,
  size: number,
  chunk: number,
  onBlock: (buf: Buffer, start: number, stop: number, offset: number) => void,
): LineBlocks {
  let carry = Buffer.alloc(0);
  let at = from;
  let end = from;
  let longLines = 0;
  // Set while passing over a line longer than MAX_LINE whose newline has not come yet.
  let skipping = false;
  while (at < size) {
    const want = Math.min(chunk, size - at);
    const buf = Buffer.allocUnsafe(carry.length + want);
    carry.copy(buf, 0);
    const offset = at - carry.length;
    const got = readInto(fd, buf, carry.length, at, want);
    at += got;
    const filled = carry.length + got;
    const lastNewline = filled > 0 ? buf.lastIndexOf(10, filled - 1) : -1;
    if (lastNewline < 0) {
      carry = buf.subarray(0, filled);
      if (carry.length > MAX_LINE) {
        skipping = true;
        carry = Buffer.alloc(0);
      }
    } else {
      // Only the first line can be long: it may have begun in the carry; the others are inside a chunk.
      const first = buf.indexOf(10);
      let start = 0;
      if (skipping || first > MAX_LINE) {
        start = first + 1;
        skipping = false;
        longLines++;
      }
      if (start <= lastNewline) onBlock(buf, start, lastNewline + 1, offset);
      end = offset + lastNewline + 1;
      carry = Buffer.from(buf.subarray(lastNewline + 1, filled));
    }
    if (got === 0) break;
  }
  return { end, longLines };
}
