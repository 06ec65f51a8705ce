import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';

/*
 * Files in folders other people (or a job's downloads) can write to: a planted symlink or FIFO must not
 * make us write through it, read outside the folder, or block a server on open.
 */

/**
 * Replaces `file` atomically: the text goes to a fresh temporary name (created exclusively, so a symlink
 * planted at a predictable name is never followed), which is then renamed over `file`. `mode`: the new
 * file's permission bits; `durable`: flushed to disk before the rename; `beforeRename`: a last look at
 * the target (it throws to stop), since the path may have changed while the bytes were written.
 */
export function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  options: { readonly mode?: number; readonly durable?: boolean; readonly beforeRename?: () => void } = {},
): void {
  writeFileAtomicWith(
    file,
    (fd) => {
      if (options.mode !== undefined) fs.fchmodSync(fd, options.mode);
      fs.writeFileSync(fd, data);
      if (options.durable) fs.fsyncSync(fd);
    },
    options.beforeRename,
  );
}

/**
 * Replaces `file` atomically with what `fill` writes to the descriptor of the fresh temporary file (for
 * contents made piece by piece, such as bytes copied from another file).
 */
export function writeFileAtomicWith(
  file: string,
  fill: (fd: number) => void,
  beforeRename?: () => void,
): void {
  replaceAtomically(
    file,
    (tmp) => {
      const fd = fs.openSync(tmp, 'wx', 0o666);
      try {
        fill(fd);
      } finally {
        fs.closeSync(fd);
      }
    },
    beforeRename,
  );
}

/** Copies bytes [from, to) of the open `src` to the open `dest` at its current end, 1 MiB at a time. */
export function copyBytes(src: number, dest: number, from: number, to: number): void {
  const buf = Buffer.allocUnsafe(Math.min(1024 * 1024, Math.max(1, to - from)));
  for (let at = from; at < to;) {
    const n = fs.readSync(src, buf, 0, Math.min(buf.length, to - at), at);
    if (n === 0) throw new Error(`the file ended at ${at} bytes, before ${to}`);
    fs.writeSync(dest, buf, 0, n);
    at += n;
  }
}

/**
 * Copies the regular file `src` (never through a link) to `dest`, replacing it atomically: a reader or a
 * sync of the folder sees the old file or the whole new one. False when `src` is not a regular file.
 */
export function copyFileAtomic(src: string, dest: string): boolean {
  const from = openRegularFile(src);
  if (!from) return false;
  try {
    writeFileAtomicWith(dest, (fd) => copyBytes(from.fd, fd, 0, from.size));
  } finally {
    fs.closeSync(from.fd);
  }
  return true;
}

/**
 * Replaces the regular file `file` with its bytes and `tail` after them, atomically and durably, by the
 * same fresh temporary name as writeFileAtomic: the file is copied (a reflink where the file system
 * has them), never read into memory, so a trace of any size grows at the cost of its copy.
 */
export function appendFileAtomic(file: string, tail: Uint8Array): void {
  replaceAtomically(file, (tmp) => {
    fs.copyFileSync(file, tmp, fs.constants.COPYFILE_EXCL | fs.constants.COPYFILE_FICLONE);
    const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_APPEND | NOFOLLOW);
    try {
      fs.writeFileSync(fd, tail);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  });
}

/** The one way files are replaced: `fill` writes a fresh, unpredictable name beside `file`, renamed over it. */
function replaceAtomically(file: string, fill: (tmp: string) => void, beforeRename?: () => void): void {
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    fill(tmp);
    beforeRename?.();
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}

/** Open flag: fail on a symlink rather than follow it (0 where the platform has none). */
export const NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const NONBLOCK = fs.constants.O_NONBLOCK ?? 0;

/**
 * Opens a regular file for reading, or returns undefined: missing, a symlink (unless `followLinks`: then
 * a link to a regular file is read), a FIFO, a device or a folder. Opening never blocks (O_NONBLOCK),
 * and the type is checked on the open descriptor.
 */
export function openRegularFile(
  file: string,
  options: { readonly followLinks?: boolean } = {},
): { fd: number; size: number } | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (options.followLinks ? 0 : NOFOLLOW) | NONBLOCK);
  } catch {
    return undefined;
  }
  const st = fs.fstatSync(fd);
  if (!st.isFile()) {
    fs.closeSync(fd);
    return undefined;
  }
  return { fd, size: st.size };
}

/** Whether `file` is a regular file itself (not a symlink to one). */
export function isRegularFile(file: string): boolean {
  try {
    return fs.lstatSync(file).isFile();
  } catch {
    return false;
  }
}

/** A regular file's text (see openRegularFile), or undefined when it is not one or is over `maxBytes`. */
export function readRegularText(
  file: string,
  maxBytes: number,
  options: { readonly followLinks?: boolean } = {},
): string | undefined {
  const f = openRegularFile(file, options);
  if (!f) return undefined;
  try {
    if (f.size > maxBytes) return undefined;
    const buf = Buffer.allocUnsafe(f.size);
    return buf.toString('utf8', 0, readInto(f.fd, buf, 0, 0, f.size));
  } finally {
    fs.closeSync(f.fd);
  }
}

/** Reads up to `length` bytes at `at` into buf[offset…]; returns how many it got (fewer only at the end). */
export function readInto(fd: number, buf: Buffer, offset: number, at: number, length: number): number {
  let got = 0;
  while (got < length) {
    const n = fs.readSync(fd, buf, offset + got, length - got, at + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}
