/**
 * The one atomic writer, for contents written piece by piece and for copies: a planted link at the
 * target is replaced, never written through; a link given as the source is not copied.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { copyFileAtomic, writeFileAtomicWith } from '../../lib/util';
import { tempDir } from '../helpers/fixtures';

describe('writeFileAtomicWith and copyFileAtomic', () => {
  it('replace a link planted at the target instead of writing through it, and leave no temporary file', () => {
    const dir = tempDir();
    const victim = path.join(dir, 'victim');
    fs.writeFileSync(victim, 'VICTIM');
    const target = path.join(dir, 'segment.00000.jsonl');
    fs.symlinkSync(victim, target);
    writeFileAtomicWith(target, (fd) => fs.writeSync(fd, 'line\n'));
    expect(fs.readFileSync(victim, 'utf8')).toBe('VICTIM');
    expect(fs.lstatSync(target).isFile()).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('line\n');

    const copy = path.join(dir, 'copy.json');
    fs.symlinkSync(victim, copy);
    expect(copyFileAtomic(target, copy)).toBe(true);
    expect(fs.readFileSync(victim, 'utf8')).toBe('VICTIM');
    expect(fs.readFileSync(copy, 'utf8')).toBe('line\n');
    expect(fs.readdirSync(dir).sort()).toEqual(['copy.json', 'segment.00000.jsonl', 'victim']);
  });

  it('copy only a regular file: a link as the source copies nothing', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'secret'), 'SECRET');
    fs.symlinkSync(path.join(dir, 'secret'), path.join(dir, 'summary.json'));
    expect(copyFileAtomic(path.join(dir, 'summary.json'), path.join(dir, 'out.json'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'out.json'))).toBe(false);
  });

  it('a failing fill leaves the old file and no temporary file', () => {
    const dir = tempDir();
    const target = path.join(dir, 'work.jsonl');
    fs.writeFileSync(target, 'old\n');
    expect(() =>
      writeFileAtomicWith(target, (fd) => {
        fs.writeSync(fd, 'half');
        throw new Error('disk full');
      }),
    ).toThrow('disk full');
    expect(fs.readdirSync(dir)).toEqual(['work.jsonl']);
    expect(fs.readFileSync(target, 'utf8')).toBe('old\n');
  });
});
