import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { forEachLineBlock, MAX_LINE, tailBefore } from '../../lib/util/line-blocks';

/*
 * The line reader the trace index and the samples index share, against real files: whole lines at any
 * chunk size, a cut last line left for later, lines over MAX_LINE passed over however they fall.
 */

let dir: string;
beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-lines-'))));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function linesOf(file: string, chunk: number, from = 0): { lines: string[]; end: number; longLines: number } {
  const fd = fs.openSync(file, 'r');
  try {
    const lines: string[] = [];
    const r = forEachLineBlock(fd, from, fs.fstatSync(fd).size, chunk, (buf, start, stop, offset) => {
      expect(buf[stop - 1]).toBe(10);
      for (let s = start; s < stop;) {
        const e = buf.indexOf(10, s);
        lines.push(`${offset + s}:${buf.toString('latin1', s, e)}`);
        s = e + 1;
      }
    });
    return { lines, ...r };
  } finally {
    fs.closeSync(fd);
  }
}

describe('forEachLineBlock', () => {
  it('hands over the same whole lines, at their offsets, whatever the chunk size, and leaves a cut last line', () => {
    const file = path.join(dir, 'small.jsonl');
    const text = ['{"a": 1}', '', '{"b": 22}', 'x'.repeat(50), '{"c": 3}'].join('\n') + '\n{"cut';
    fs.writeFileSync(file, text);
    const whole = text.slice(0, text.lastIndexOf('\n') + 1);
    let at = 0;
    const want = whole
      .split('\n')
      .slice(0, -1)
      .map((l) => {
        const s = `${at}:${l}`;
        at += l.length + 1;
        return s;
      });
    for (const chunk of [1, 3, 7, 16, 4096]) {
      expect(linesOf(file, chunk)).toEqual({ lines: want, end: whole.length, longLines: 0 });
    }
    // read on from where it stopped, after the cut line was finished
    fs.appendFileSync(file, '": 4}\n');
    expect(linesOf(file, 5, whole.length)).toEqual({
      lines: [`${whole.length}:{"cut": 4}`],
      end: text.length + 6,
      longLines: 0,
    });
  });

  it('passes over a line one byte over MAX_LINE that ends inside a later chunk, and hands over one of MAX_LINE', () => {
    const file = path.join(dir, 'long.jsonl');
    const fd = fs.openSync(file, 'w');
    const block = Buffer.alloc(8 * 1024 * 1024, 0x61);
    for (let n = 0; n < MAX_LINE; n += block.length) fs.writeSync(fd, block);
    fs.writeSync(fd, 'a\nshort\n'); // the first line: MAX_LINE + 1 bytes
    fs.closeSync(fd);
    const over = linesOf(file, 8 * 1024 * 1024);
    expect(over.longLines).toBe(1);
    expect(over.lines).toEqual([`${MAX_LINE + 2}:short`]);
    expect(over.end).toBe(MAX_LINE + 8);

    fs.truncateSync(file, MAX_LINE); // now exactly MAX_LINE bytes of 'a', then its newline
    fs.appendFileSync(file, '\n');
    const at = linesOf(file, 8 * 1024 * 1024);
    expect([at.longLines, at.lines.length, at.end]).toEqual([0, 1, MAX_LINE + 1]);
  });

  it('fingerprints the bytes before an offset', () => {
    const file = path.join(dir, 'tail.jsonl');
    fs.writeFileSync(file, `${'x'.repeat(100)}\n`);
    const fd = fs.openSync(file, 'r');
    try {
      expect(Buffer.from(tailBefore(fd, 101), 'base64').toString()).toBe(`${'x'.repeat(63)}\n`);
      expect(Buffer.from(tailBefore(fd, 10), 'base64').toString()).toBe('x'.repeat(10));
      expect(tailBefore(fd, 0)).toBe('');
    } finally {
      fs.closeSync(fd);
    }
  });
});
