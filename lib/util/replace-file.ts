import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from './safe-file';

/*
 * Writing a file at a path a user typed (`--out`). Renaming over the path replaces whatever directory
 * entry is there, so as root a device such as /dev/full would become a regular file, and a FIFO or a
 * symlink would be swapped out silently. Only an absent name or a regular file is written; anything else
 * is refused before any byte is written. A symlink is refused rather than followed: its target may be
 * anything (/proc/self/fd/1, a device), and writing through it would not be atomic either.
 */

export type NotRegularKind = 'folder' | 'symlink' | 'FIFO' | 'device' | 'socket' | 'special file';

/** The path is there and is not a regular file: nothing was written. */
export class NotARegularFileError extends Error {
  constructor(
    readonly file: string,
    readonly kind: NotRegularKind,
  ) {
    super(
      kind === 'folder'
        ? `${file} is a folder: give a file name in it (e.g. ${path.join(file, 'report.html')})`
        : kind === 'symlink'
          ? `${file} is a symlink, which is not followed: give the path of a regular file, or a new name`
          : `${file} is a ${kind}, not a regular file: give the path of a regular file, or a new name`,
    );
    this.name = 'NotARegularFileError';
  }
}

function kindOf(st: fs.Stats): NotRegularKind | undefined {
  if (st.isFile()) return undefined;
  if (st.isDirectory()) return 'folder';
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isFIFO()) return 'FIFO';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'device';
  if (st.isSocket()) return 'socket';
  return 'special file';
}

/**
 * The regular file at `file` (its stats), or undefined when nothing is there. Throws
 * NotARegularFileError for anything else (the link itself is looked at, never its target).
 */
export function existingRegularFile(file: string): fs.Stats | undefined {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const kind = kindOf(st);
  if (kind) throw new NotARegularFileError(file, kind);
  return st;
}

/**
 * Writes `data` to `file`, which must be absent or a regular file (else NotARegularFileError, and
 * nothing is written). The bytes go to a temporary file in the same folder, flushed to disk, then
 * renamed over `file`: a reader, or an interrupted write, never sees half of it. A replaced file keeps
 * its permission bits.
 */
export function replaceRegularFile(file: string, data: string | Uint8Array): void {
  const before = existingRegularFile(file);
  writeFileAtomic(file, data, {
    // the permission bits only: a setuid or setgid bit must not pass to a file this process writes
    ...(before ? { mode: before.mode & 0o777 } : {}),
    durable: true,
    beforeRename: () => existingRegularFile(file),
  });
}

/** A folder on the way to `file` is not one (a file stands there): nothing was written. */
export class NotAFolderError extends Error {
  constructor(readonly folder: string) {
    super(`${folder} is not a folder`);
    this.name = 'NotAFolderError';
  }
}

/**
 * Checks an output path before any work: its folder made, and the path itself absent or a regular file
 * (else NotARegularFileError or NotAFolderError; the file system's own refusals are thrown as they are).
 * Returns the absolute path.
 */
export function prepareOutFile(file: string): string {
  const abs = path.resolve(file);
  try {
    fs.mkdirSync(path.dirname(abs), { recursive: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new NotAFolderError(path.dirname(abs));
    throw e;
  }
  existingRegularFile(abs);
  return abs;
}
