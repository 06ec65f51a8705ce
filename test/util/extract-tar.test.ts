import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import {
  extractTarGz,
  safeEntryPath,
  UnsafeEntryError,
  type ExtractOptions,
} from '../../lib/util/extract-tar';
import { tempDir } from '../helpers/fixtures';

interface Entry {
  readonly name: string;
  readonly body?: string | Buffer;
  readonly type?: 'file' | 'symlink' | 'directory' | 'character-device' | 'block-device' | 'fifo' | 'link';
  readonly linkname?: string;
  readonly mode?: number;
}

async function tarGz(entries: readonly Entry[]): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve) => tar.on('end', () => resolve()));
  for (const e of entries) {
    const type = e.type ?? 'file';
    const header = {
      name: e.name,
      type,
      linkname: e.linkname,
      mode: e.mode ?? (type === 'directory' ? 0o755 : 0o644),
      ...(type.endsWith('-device') ? { devmajor: 1, devminor: 3 } : {}),
    };
    if (type === 'file') tar.entry(header, e.body ?? e.name);
    else tar.entry(header);
  }
  tar.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

/** Every path below `dir`, relative, symlinks shown with their target. */
function tree(dir: string): string[] {
  const out: string[] = [];
  const visit = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isSymbolicLink()) out.push(`${r} -> ${fs.readlinkSync(path.join(dir, r))}`);
      else if (e.isDirectory()) visit(r);
      else out.push(r);
    }
  };
  visit('');
  return out.sort();
}

/** The two callers' settings: the trainer source in the container, a job's model.tar.gz on download. */
const SOURCE: ExtractOptions = { symlinks: true, unsafe: 'fail' };
const ARTIFACT: ExtractOptions = { unsafe: 'skip', partialSuffix: '.rlvr-partial' };

/** `outer/dest`: anything written beside `dest` shows up in `outer`. */
function sandbox(): { outer: string; dest: string } {
  const outer = tempDir('rlvr-untar-');
  return { outer, dest: path.join(outer, 'dest') };
}

const ABSOLUTE = `/etc/rlvr-untar-test-${process.pid}`;

describe('safeEntryPath', () => {
  it('gives the path inside the folder for a plain relative name', () => {
    const { dest } = sandbox();
    expect(safeEntryPath(dest, 'a/b.txt')).toBe(path.join(dest, 'a', 'b.txt'));
    expect(safeEntryPath(dest, 'l', 'a/b.txt')).toBe(path.join(dest, 'l'));
    expect(safeEntryPath(dest, 'a/l', '../b.txt')).toBe(path.join(dest, 'a', 'l'));
  });

  it.each([
    ['../x', undefined],
    [ABSOLUTE, undefined],
    ['a/../../x', undefined],
    ['a/../x', undefined],
    ['', undefined],
    ['.', undefined],
    ['l', '../../etc'],
    ['l', '..'],
    ['a/l', '../../x'],
    ['l', '/etc'],
    ['l', 'a/../..'],
    ['l', 'a/../b'],
  ])('refuses %j (symlink to %j)', (name, linkname) => {
    const { dest } = sandbox();
    expect(() => safeEntryPath(dest, name, linkname)).toThrow(UnsafeEntryError);
  });

  it('refuses a name that leaves the folder through a symlink already there', () => {
    const { outer, dest } = sandbox();
    fs.mkdirSync(dest);
    fs.symlinkSync(outer, path.join(dest, 'out'));
    fs.symlinkSync(path.join(outer, 'missing'), path.join(dest, 'dangling'));
    fs.symlinkSync('.', path.join(dest, 'self'));
    expect(() => safeEntryPath(dest, 'out/x')).toThrow(UnsafeEntryError);
    expect(() => safeEntryPath(dest, 'dangling')).toThrow(UnsafeEntryError);
    // `self` is the folder itself: fine to write through, but `..` from there is outside.
    expect(safeEntryPath(dest, 'self/self/x')).toBe(path.join(dest, 'self', 'self', 'x'));
    expect(() => safeEntryPath(dest, 'self/self/l', '../../etc')).toThrow(UnsafeEntryError);
  });
});

describe('extractTarGz', () => {
  const normal: Entry[] = [
    { name: './', type: 'directory' },
    { name: './top.txt', body: 'top' },
    { name: 'pkg/', type: 'directory' },
    { name: 'pkg/run.sh', body: '#!/bin/sh\n', mode: 0o755 },
    { name: 'pkg/deep/data.json', body: '{}' },
    { name: 'pkg/link', type: 'symlink', linkname: 'deep/data.json' },
    { name: 'up', type: 'symlink', linkname: 'pkg/deep' },
    { name: 'up/through.txt', body: 'through a symlink inside' },
  ];

  it('extracts a normal archive with the source settings: files, modes and symlinks', async () => {
    const { outer, dest } = sandbox();
    const files = await extractTarGz(Readable.from(await tarGz(normal)), dest, SOURCE);
    expect(files).toEqual(['top.txt', 'pkg/run.sh', 'pkg/deep/data.json', 'up/through.txt']);
    expect(tree(dest)).toEqual([
      'pkg/deep/data.json',
      'pkg/deep/through.txt',
      'pkg/link -> deep/data.json',
      'pkg/run.sh',
      'top.txt',
      'up -> pkg/deep',
    ]);
    expect(fs.readFileSync(path.join(dest, 'pkg/link'), 'utf8')).toBe('{}');
    expect(fs.statSync(path.join(dest, 'pkg/run.sh')).mode & 0o111).not.toBe(0);
    expect(fs.readdirSync(outer)).toEqual(['dest']);
  });

  it('extracts a normal archive with the artifact settings: regular files only, no partial names left', async () => {
    const { dest } = sandbox();
    const files = await extractTarGz(
      Readable.from(await tarGz(normal.filter((e) => e.name !== 'up/through.txt'))),
      dest,
      ARTIFACT,
    );
    expect(files).toEqual(['top.txt', 'pkg/run.sh', 'pkg/deep/data.json']);
    expect(tree(dest)).toEqual(['pkg/deep/data.json', 'pkg/run.sh', 'top.txt']);
  });

  const unsafe: [string, Entry][] = [
    ['../x', { name: '../x', body: 'escaped' }],
    [ABSOLUTE, { name: ABSOLUTE, body: 'escaped' }],
    ['a/../../x', { name: 'a/../../x', body: 'escaped' }],
    ['l -> ../../etc', { name: 'l', type: 'symlink', linkname: '../../etc' }],
    ['self -> . then self/self/l -> ../../x', { name: 'self/self/l', type: 'symlink', linkname: '../../x' }],
    // Entry types no archive of ours holds: a device node, a fifo, a hard link to a file outside.
    ['a character device', { name: 'null', type: 'character-device' }],
    ['a block device', { name: 'sda', type: 'block-device' }],
    ['a fifo', { name: 'pipe', type: 'fifo' }],
    ['a hard link to /etc/passwd', { name: 'passwd', type: 'link', linkname: '/etc/passwd' }],
    ['a hard link inside', { name: 'again.txt', type: 'link', linkname: 'before.txt' }],
  ];

  describe.each(unsafe)('an entry %s', (_label, bad) => {
    const entries = (): Entry[] => [
      { name: 'self', type: 'symlink', linkname: '.' },
      { name: 'before.txt' },
      bad,
      { name: 'after.txt' },
    ];

    it('fails the extraction with the source settings and writes nothing outside', async () => {
      const { outer, dest } = sandbox();
      await expect(extractTarGz(Readable.from(await tarGz(entries())), dest, SOURCE)).rejects.toThrow(
        UnsafeEntryError,
      );
      expect(fs.readdirSync(outer)).toEqual(['dest']);
      expect(fs.existsSync(ABSOLUTE)).toBe(false);
      expect(tree(dest)).toEqual(['before.txt', 'self -> .']);
    });

    it('is left out with the artifact settings, the rest extracted, nothing outside', async () => {
      const { outer, dest } = sandbox();
      const files = await extractTarGz(Readable.from(await tarGz(entries())), dest, ARTIFACT);
      expect(files).toEqual(['before.txt', 'after.txt']);
      expect(fs.readdirSync(outer)).toEqual(['dest']);
      expect(fs.existsSync(ABSOLUTE)).toBe(false);
      expect(tree(dest)).toEqual(['after.txt', 'before.txt']);
    });
  });

  it('with a partial suffix, leaves no partial file when the archive is cut off mid-file', async () => {
    const { dest } = sandbox();
    const whole = await tarGz([{ name: 'small.txt' }, { name: 'big.bin', body: randomBytes(1024 * 1024) }]);
    await expect(
      extractTarGz(Readable.from(whole.subarray(0, whole.length / 2)), dest, ARTIFACT),
    ).rejects.toThrow();
    expect(tree(dest)).toEqual(['small.txt']);
  });

  it('with a partial suffix, leaves no partial file when the source stream fails', async () => {
    const { dest } = sandbox();
    const whole = await tarGz([{ name: 'big.bin', body: randomBytes(1024 * 1024) }]);
    let sent = false;
    const failing = new Readable({
      read() {
        if (sent) return;
        sent = true;
        this.push(whole.subarray(0, 256 * 1024));
        // The connection drops once the first bytes are written.
        setTimeout(() => this.destroy(new Error('connection reset')), 50);
      },
    });
    await expect(extractTarGz(failing, dest, ARTIFACT)).rejects.toThrow('connection reset');
    expect(tree(dest)).toEqual([]);
  });

  it('rejects a stream that is not gzip', async () => {
    const { dest } = sandbox();
    await expect(extractTarGz(Readable.from(Buffer.from('not a tarball')), dest, SOURCE)).rejects.toThrow();
  });
});
