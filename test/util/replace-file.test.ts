import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { existingRegularFile, replaceRegularFile } from '../../lib/util';
import { NotARegularFileError } from '../../lib/util/replace-file';

/* replaceRegularFile writes a new name or a regular file only, whole, through a temporary file. */

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-replace-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('replaceRegularFile', () => {
  it('creates a new file and replaces a regular one, keeping its mode, leaving nothing else', () => {
    const file = path.join(dir, 'a.html');
    replaceRegularFile(file, 'one');
    expect(fs.readFileSync(file, 'utf8')).toBe('one');
    fs.chmodSync(file, 0o600);
    replaceRegularFile(file, 'two');
    expect(fs.readFileSync(file, 'utf8')).toBe('two');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir)).toEqual(['a.html']);
  });

  it('replaces the file by rename: a reader holding the old one still reads it whole', () => {
    const file = path.join(dir, 'a.html');
    fs.writeFileSync(file, 'old page');
    const fd = fs.openSync(file, 'r');
    replaceRegularFile(file, 'new page');
    expect(fs.readFileSync(fd, 'utf8')).toBe('old page');
    fs.closeSync(fd);
  });

  it.each([
    ['FIFO', (p: string) => execFileSync('mkfifo', [p]), (st: fs.Stats) => st.isFIFO()],
    ['folder', (p: string) => fs.mkdirSync(p), (st: fs.Stats) => st.isDirectory()],
    ['symlink', (p: string) => fs.symlinkSync('/proc/self/fd/1', p), (st: fs.Stats) => st.isSymbolicLink()],
  ])('refuses a %s, leaving it as it was and writing nothing', (kind, make, still) => {
    const file = path.join(dir, 'x');
    make(file);
    expect(() => existingRegularFile(file)).toThrow(NotARegularFileError);
    let error: unknown;
    try {
      replaceRegularFile(file, 'page');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NotARegularFileError);
    expect((error as NotARegularFileError).kind).toBe(kind);
    expect((error as Error).message).toContain(file);
    expect(still(fs.lstatSync(file))).toBe(true);
    expect(fs.readdirSync(dir)).toEqual(['x']);
  });
});
