import * as fs from 'node:fs';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { NOFOLLOW } from './safe-file';

/*
 * The one .tar.gz reader (the trainer's source in the container, a job's model.tar.gz on download) and
 * its one guard: an archive names where its entries go, so every name — and every symlink's target —
 * is checked against the real folder before anything is written.
 */

/** An archive entry that would land (or point) outside the folder it is extracted into. */
export class UnsafeEntryError extends Error {
  constructor(
    readonly entry: string,
    why: string,
  ) {
    super(`unsafe entry ${entry} in the archive: ${why}`);
    this.name = 'UnsafeEntryError';
  }
}

/** `p` is `root` or below it (both absolute and normalised). */
function within(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** `p` with every symlink on the way followed, as far as it exists (the rest appended as written). */
function realResolve(p: string, depth = 0): string {
  try {
    return fs.realpathSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || depth > 40) throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  const here = path.join(realResolve(parent, depth + 1), path.basename(p));
  let link: string;
  try {
    link = fs.readlinkSync(here); // a dangling symlink: where writing through it would go
  } catch {
    return here;
  }
  return realResolve(path.resolve(path.dirname(here), link), depth + 1);
}

/**
 * Where the entry `name` goes in `dest`, or an UnsafeEntryError: an absolute name, a `..` segment, or
 * a path that ends outside `dest` once the symlinks already there are followed. For a symlink entry
 * (`linkname` given) its target must stay inside `dest` too: not absolute, no `..` after a name (which
 * would step back through a symlink, not a folder), and inside once resolved from the link's real folder.
 */
export function safeEntryPath(dest: string, name: string, linkname?: string): string {
  const refuse = (why: string) =>
    new UnsafeEntryError(linkname === undefined ? name : `${name} -> ${linkname}`, why);
  if (name === '' || path.isAbsolute(name) || name.startsWith('/')) throw refuse('not a relative path');
  if (name.split('/').includes('..')) throw refuse('a ".." segment');
  const root = path.resolve(dest);
  const target = path.resolve(root, name);
  if (target === root || !within(root, target)) throw refuse('outside the folder');
  const realRoot = realResolve(root);
  const realParent = realResolve(path.dirname(target));
  if (!within(realRoot, realParent) || !within(realRoot, realResolve(target))) {
    throw refuse('outside the folder through a symlink');
  }
  if (linkname !== undefined) {
    if (linkname === '' || path.isAbsolute(linkname) || linkname.startsWith('/')) {
      throw refuse('a symlink to an absolute path');
    }
    const segments = linkname.split('/');
    const firstName = segments.findIndex((s) => s !== '..');
    if (firstName >= 0 && segments.slice(firstName).includes('..')) throw refuse('a ".." after a name');
    if (!within(realRoot, realResolve(path.resolve(realParent, linkname)))) {
      throw refuse('a symlink pointing outside the folder');
    }
  }
  return target;
}

/** Entry types no archive of ours holds, refused like an unsafe name: what they would make, and why not. */
const SPECIAL_ENTRIES: Readonly<Record<string, string>> = {
  'character-device': 'a character device',
  'block-device': 'a block device',
  fifo: 'a fifo',
  link: 'a hard link',
};

export interface ExtractOptions {
  /** Create symlink entries (each target through the guard); without, they are left out. */
  readonly symlinks?: boolean;
  /**
   * An unsafe entry (outside the folder, or a device, fifo or hard link): `fail` rejects the extraction
   * (the default); `skip` leaves it out.
   */
  readonly unsafe?: 'fail' | 'skip';
  /**
   * Write each file as `<name><partialSuffix>`, renamed to its name when complete; a file cut off by
   * a failure is removed. Without, files are written in place.
   */
  readonly partialSuffix?: string;
}

/**
 * Streams a .tar.gz into `dest` (created if missing): regular files with their modes, symlinks when
 * asked; devices, fifos and hard links are unsafe entries; folders and other entries are left out. Returns the files written, as the archive names them (a
 * leading `./` dropped).
 */
export async function extractTarGz(
  source: NodeJS.ReadableStream,
  dest: string,
  options: ExtractOptions = {},
): Promise<string[]> {
  // Loaded here: a command that has nothing to unpack needs no tar reader.
  const { extract } = await import('tar-stream');
  fs.mkdirSync(dest, { recursive: true });
  const ex = extract();
  // Handled at once (a rejection met only later, in the catch below, is "unhandled" to Node 24 and jest).
  let feedError: unknown;
  const feeding = pipeline(source, createGunzip(), ex).catch((err: unknown) => {
    feedError = err;
  });
  const written: string[] = [];
  let partial: string | undefined;
  try {
    for await (const entry of ex) {
      const { header } = entry;
      const name = header.name.replace(/^(\.\/)+/, '');
      const special = SPECIAL_ENTRIES[header.type ?? ''];
      if (special !== undefined) {
        if (options.unsafe !== 'skip') throw new UnsafeEntryError(name, `${special} entry`);
        entry.resume();
        continue;
      }
      const kind =
        header.type === 'file' ? 'file' : header.type === 'symlink' && options.symlinks ? 'link' : undefined;
      let target: string | undefined;
      if (name !== '') {
        try {
          target = safeEntryPath(dest, name, kind === 'link' ? (header.linkname ?? '') : undefined);
        } catch (err) {
          if (options.unsafe !== 'skip' || !(err instanceof UnsafeEntryError)) throw err;
        }
      }
      if (target === undefined || kind === undefined) {
        entry.resume();
        continue;
      }
      fs.mkdirSync(path.dirname(target), { recursive: true });
      if (kind === 'link') {
        fs.symlinkSync(header.linkname!, target);
        entry.resume();
        continue;
      }
      const file = options.partialSuffix ? target + options.partialSuffix : target;
      partial = file;
      // Created exclusively, never through a link: whatever stands at the name (an earlier entry of the
      // same name, a link an earlier entry made) is removed first, not written through.
      fs.rmSync(file, { force: true });
      const fd = fs.openSync(
        file,
        fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | NOFOLLOW,
        (header.mode ?? 0o644) & 0o777,
      );
      await pipeline(entry, fs.createWriteStream(file, { fd }));
      if (file !== target) fs.renameSync(file, target);
      partial = undefined;
      written.push(name);
    }
    await feeding;
    if (feedError !== undefined) throw feedError;
  } catch (err) {
    await feeding;
    if (partial && options.partialSuffix) fs.rmSync(partial, { force: true });
    throw err;
  }
  return written;
}
