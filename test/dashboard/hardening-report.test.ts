import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bareEnv, runCli } from '../helpers/cli';
import { makeResultsFixture, TRAINING_RUN, type ResultsFixture } from '../helpers/dashboard';

/** Whether this process may make a device node (root): probed once in a folder of its own. */
function canMakeDevices(): boolean {
  const probe = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-mknod-')), 'dev');
  try {
    execFileSync('mknod', [probe, 'c', '1', '7'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    fs.rmSync(path.dirname(probe), { recursive: true, force: true });
  }
}

/*
 * `rlvr report --out` is given whatever path a user types: only an absent name or a regular file is
 * written (through a temporary file renamed over it); a FIFO, a device, a symlink or a folder is refused
 * with exit 2 and left as it was.
 */

let fx: ResultsFixture;
let dir: string;
beforeAll(() => {
  fx = makeResultsFixture();
  dir = path.join(fx.root, 'out');
  fs.mkdirSync(dir);
});
afterAll(() => fs.rmSync(fx.root, { recursive: true, force: true }));

const env = (): Record<string, string> => bareEnv({ XDG_CACHE_HOME: fx.root });
const report = (out: string): ReturnType<typeof runCli> =>
  runCli(['report', TRAINING_RUN, '--results', fx.root, '--out', out], { env: env() });
/** What is left in the output folder besides `keep`: no temporary file may stay behind. */
const leftovers = (keep: string[]): string[] => fs.readdirSync(dir).filter((f) => !keep.includes(f));

describe('rlvr report --out hardening', () => {
  it('refuses a FIFO with exit 2 and leaves it a FIFO', async () => {
    const fifo = path.join(dir, 'pipe.html');
    execFileSync('mkfifo', [fifo]);
    const r = await report(fifo);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(fifo);
    expect(r.stderr).toMatch(/not a regular file/);
    expect(r.stdout).not.toMatch(/wrote/);
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    expect(leftovers(['pipe.html'])).toEqual([]);
    fs.rmSync(fifo);
  });

  // Making a device node needs root (CI runs as root); elsewhere the case is skipped, said, not passed.
  (canMakeDevices() ? it : it.skip)(
    'refuses a character device (a copy of /dev/full made here) and leaves it a device',
    async () => {
      const dev = path.join(dir, 'full.html');
      execFileSync('mknod', [dev, 'c', '1', '7'], { stdio: 'ignore' });
      const r = await report(dev);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/is a device, not a regular file/);
      expect(fs.lstatSync(dev).isCharacterDevice()).toBe(true);
      expect(leftovers(['full.html'])).toEqual([]);
      fs.rmSync(dev);
    },
  );

  it('refuses a symlink outright with exit 2, leaving the link and its target untouched', async () => {
    const target = path.join(dir, 'target.html');
    const link = path.join(dir, 'link.html');
    fs.writeFileSync(target, 'keep me');
    fs.symlinkSync(target, link);
    const r = await report(link);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(link);
    expect(r.stderr).toMatch(/symlink/);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(link)).toBe(target);
    expect(fs.readFileSync(target, 'utf8')).toBe('keep me');
    expect(leftovers(['target.html', 'link.html'])).toEqual([]);
    fs.rmSync(link);
    fs.rmSync(target);
  });

  it('a path through a file (file.html/report.html) is exit 2 naming it, not an internal ENOTDIR', async () => {
    const file = path.join(dir, 'plain.html');
    fs.writeFileSync(file, 'x');
    const r = await report(path.join(file, 'report.html'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/plain\.html\/report\.html: a part of it that should be a folder is a file/);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(fs.readFileSync(file, 'utf8')).toBe('x');
    fs.rmSync(file);
  });

  it('refuses a folder with exit 2 naming it (not an internal EISDIR)', async () => {
    const folder = path.join(dir, 'folder.html');
    fs.mkdirSync(folder);
    const r = await report(folder);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(folder);
    expect(r.stderr).toMatch(/is a folder/);
    expect(r.stderr).not.toMatch(/internal error|EISDIR/);
    expect(fs.readdirSync(folder)).toEqual([]);
    fs.rmSync(folder, { recursive: true });
  });

  it('replaces a regular file whole, keeping its permissions, and leaves no temporary file', async () => {
    const file = path.join(dir, 'report.html');
    fs.writeFileSync(file, 'old');
    fs.chmodSync(file, 0o640);
    const r = await report(file);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^<!doctype html>/);
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    expect(leftovers(['report.html'])).toEqual([]);
    fs.rmSync(file);
  });

  it('a FIFO or a folder as --spec is exit 2 saying what it is, at once (never "no such file", never a blocked read)', async () => {
    const fifo = path.join(dir, 'spec-fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    for (const [spec, says] of [
      [fifo, 'not a regular file (a FIFO)'],
      [dir, 'not a regular file (a folder)'],
      [path.join(dir, 'absent.yaml'), 'no such file'],
    ]) {
      const r = await runCli(['report', '--spec', spec, '--out', path.join(dir, 'w.html')], { env: env() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--spec ${spec}: ${says}`);
    }
    fs.rmSync(fifo);
  });
});
