import * as fs from 'node:fs';
import * as path from 'node:path';
import { RotatingLog } from '../../lib/container/process';
import { streamOrder } from '../../lib/passk-records';
import { tempDir } from '../helpers/fixtures';

/** The log's text as a reader puts it together: the parts by number, then the live file. */
function wholeLog(dir: string, name: string): string {
  const entries = fs.readdirSync(dir);
  const parts = streamOrder(name, entries).filter((e) => e !== name);
  return [...parts, name].map((e) => fs.readFileSync(path.join(dir, e), 'utf8')).join('');
}

describe('a process log in the run folder', () => {
  it('moves the live file aside at a size bound, and by age once it has a few bytes; nothing is lost', () => {
    const dir = tempDir('rlvr-log-');
    const file = path.join(dir, 'trainer.log');
    let now = 0;
    const log = new RotatingLog(file, { bytes: 1000, ageMs: 60_000, minBytes: 100 }, () => now);
    let text = '';
    for (let i = 0; i < 50; i++) {
      const line = `line ${i} ${'x'.repeat(40)}\n`;
      log.write(line);
      text += line;
    }
    // Past 1000 bytes: parts of at most ~1000 bytes each, the live file under the bound.
    expect(fs.statSync(path.join(dir, 'trainer.00000.log')).size).toBeGreaterThanOrEqual(1000);
    expect(fs.statSync(file).size).toBeLessThan(1100);
    // A quiet log: under minBytes, not moved however long it waited.
    log.end();
    const quiet = new RotatingLog(
      path.join(dir, 'eval.log'),
      { bytes: 1000, ageMs: 60_000, minBytes: 100 },
      () => now,
    );
    quiet.write('a\n');
    now += 120_000;
    quiet.write('b\n');
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('eval.'))).toEqual(['eval.log']);
    // With minBytes, a minute later it is moved at the next line.
    quiet.write('c'.repeat(120) + '\n');
    now += 60_000;
    quiet.write('d\n');
    quiet.end();
    expect(fs.readFileSync(path.join(dir, 'eval.log'), 'utf8')).toBe('d\n');
    expect(wholeLog(dir, 'eval.log')).toBe(`a\nb\n${'c'.repeat(120)}\nd\n`);
    // A restart: the earlier attempt's live file becomes the next part, this attempt's log starts empty.
    const again = new RotatingLog(file, { bytes: 1000, ageMs: 60_000, minBytes: 100 }, () => now);
    again.write('restarted\n');
    again.end();
    expect(fs.readFileSync(file, 'utf8')).toBe('restarted\n');
    expect(wholeLog(dir, 'trainer.log')).toBe(`${text}restarted\n`);
  });
});
