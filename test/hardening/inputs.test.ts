import * as fs from 'node:fs';
import * as path from 'node:path';
import { createProgram, leafCommands, checkOptionValues } from '../../bin/program';
import { parseTags } from '../../bin/commands/submit-flags';
import { YamlFile } from '../../lib/config';
import { firstInvalidUtf8, YAML_LIMITS } from '../../lib/config/yaml-file';
import { ProblemsError, UserError } from '../../lib/errors';
import { imageReferenceProblem, parseImageReference } from '../../lib/image/reference';
import { jobLogPathProblem } from '../../lib/submission/job-log';
import { checkSweepSize, SWEEP_MAX_JOBS, sweepSize } from '../../lib/training/sweep';
import { tempDir } from '../helpers/fixtures';

/** The first problem's position and message of what `run` throws. */
function problemOf(run: () => unknown): { line: number; column: number; message: string } {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ProblemsError);
    const p = (err as ProblemsError).problems[0];
    return { line: p.location!.line, column: p.location!.column, message: p.message };
  }
  throw new Error('did not throw');
}

describe('image references', () => {
  const digest = `sha256:${'0123456789abcdef'.repeat(4)}`;
  it.each([
    ['123456789012.dkr.ecr.us-west-2.amazonaws.com/rlvr-experiments@' + digest],
    ['123456789012.dkr.ecr.us-west-2.amazonaws.com/rlvr-experiments:deps-abc123'],
    ['img:1'],
    ['img'],
    ['localhost:5000/team/trainer:v1.2'],
    ['docker.io/library/python:3.11-slim'],
    [`trainer:v1@${digest}`],
  ])('%s is an image reference', (ref) => {
    expect(imageReferenceProblem(ref)).toBeUndefined();
  });

  it.each([
    ['not an image', /white space/],
    ['', /empty/],
    ['foo@sha256:xyz', /digest "sha256:xyz" is not sha256:/],
    [`foo@sha512:${'a'.repeat(128)}`, /digest/],
    ['Acme/Trainer:1', /lower case/],
    [':latest', /not an image reference/],
    ['foo:', /not an image reference/],
    ['foo:bad tag', /white space/],
    [`${'a'.repeat(256)}:1`, /256 characters/],
  ])('%j is refused with the expected forms', (ref, why) => {
    const problem = imageReferenceProblem(ref);
    expect(problem).toMatch(why);
    expect(problem).toMatch(/expected repository\[:tag\] or repository@sha256:<64 hex digits>$/);
  });

  it('splits a reference into repository, tag and digest', () => {
    expect(parseImageReference(`localhost:5000/a/b:t@${digest}`)).toEqual({
      repository: 'localhost:5000/a/b',
      tag: 't',
      digest,
    });
  });
});

describe('YAML the launcher reads', () => {
  it.each([
    [[0x61, 0x62], -1],
    [[0xc3, 0xa9, 0x61], -1],
    [[0xf0, 0x9f, 0x98, 0x80], -1],
    [[0x61, 0xff], 1],
    [[0x61, 0xc3], 1],
    [[0xc0, 0x80], 0], // overlong
    [[0xed, 0xa0, 0x80], 0], // a surrogate
    [[0xe2, 0x82, 0x61], 0],
  ])('first invalid UTF-8 byte of %j: %i', (bytes, at) => {
    expect(firstInvalidUtf8(Uint8Array.from(bytes))).toBe(at);
  });

  it('refuses bytes that are not UTF-8 at their line and column (never U+FFFD)', () => {
    const dir = tempDir();
    const file = path.join(dir, 'c.yaml');
    fs.writeFileSync(
      file,
      Buffer.concat([Buffer.from('a: 1\nb: "é'), Buffer.from([0xff]), Buffer.from('"\n')]),
    );
    expect(problemOf(() => YamlFile.read(file, 'c.yaml'))).toEqual({
      line: 2,
      column: 6,
      message: 'bytes that are not UTF-8 (ff 22 0a…)',
    });
  });

  it('keeps a UTF-8 byte order mark as before', () => {
    const dir = tempDir();
    const file = path.join(dir, 'c.yaml');
    fs.writeFileSync(file, '\uFEFFa: 1\n');
    expect(YamlFile.read(file).toJS()).toEqual({ a: 1 });
  });

  it('refuses a NUL or another control character, naming line and column', () => {
    expect(problemOf(() => YamlFile.parse('a: 1\nb: x\u0000y\n', 'c.yaml'))).toMatchObject({
      line: 2,
      column: 5,
      message: 'a NUL character (U+0000)',
    });
    expect(problemOf(() => YamlFile.parse('a: \u001b[31m\n', 'c.yaml'))).toMatchObject({
      line: 1,
      column: 4,
      message: 'a control character (U+001B)',
    });
    expect(YamlFile.parse('a: "x\ty"\r\nb: 2\r\n', 'c.yaml').toJS()).toEqual({ a: 'x\ty', b: 2 });
  });

  it('refuses an alias bomb within a second, at the alias that passes the limit', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++)
      lines.push(
        `a${i}: &a${i} [${Array(9)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    const started = Date.now();
    const p = problemOf(() => YamlFile.parse(lines.join('\n'), 'bomb.yaml'));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(p).toMatchObject({ line: 5, column: 10 });
    expect(p.message).toMatch(/more than 10000 values/);
  });

  it('refuses an alias inside the node it names', () => {
    expect(problemOf(() => YamlFile.parse('a: &a [1, *a]\n', 'c.yaml')).message).toMatch(/expand/);
  });

  it('takes ordinary aliases, even more than 100 uses of one anchor', () => {
    const text = `base: &b {lr: 1}\nuses: [${Array(150).fill('*b').join(', ')}]\n`;
    const value = YamlFile.parse(text, 'c.yaml').toJS() as { uses: unknown[] };
    expect(value.uses).toHaveLength(150);
  });

  it('refuses a file over 1 MiB at the line where it passes the limit, reading no more', () => {
    const dir = tempDir();
    const file = path.join(dir, 'big.yaml');
    const line = `# ${'x'.repeat(97)}\n`; // 100 bytes
    fs.writeFileSync(file, `a: 1\n${line.repeat(50000)}`);
    const p = problemOf(() => YamlFile.read(file, 'big.yaml'));
    const offset = YAML_LIMITS.maxBytes - 5;
    expect(p).toMatchObject({ line: 2 + Math.floor(offset / 100), column: (offset % 100) + 1 });
    expect(p.message).toMatch(/the file is 4\.8 MiB: it passes the limit of 1 MiB here/);
    expect(() => YamlFile.parse(`a: 1\n${line.repeat(11000)}`, 'text.yaml')).toThrow(/too large/);
  });

  it('still names a missing file', () => {
    expect(() => YamlFile.read('/nonexistent/c.yaml')).toThrow(/no such file/);
  });
});

describe('flags', () => {
  const submit = () => leafCommands(createProgram([])).find((c) => c.path[0] === 'submit')!.command;

  it.each([
    [
      ['submit', 'c.yaml', '--image', '--dry-run'],
      /--image needs a value: "--dry-run" is another option of rlvr submit/,
    ],
    [['submit', 'c.yaml', '--tag', '--no-spot'], /--tag needs a value/],
    [['submit', 'c.yaml', '--bucket', '--sweep=a=1'], /--bucket needs a value/],
    [['submit', 'c.yaml', '--description', '-h'], /--description needs a value/],
  ])('%j is refused', (args, message) => {
    expect(() => checkOptionValues(args, submit())).toThrow(message);
    expect(() => checkOptionValues(args, submit())).toThrow(UserError);
  });

  it.each([
    [['submit', 'c.yaml', '--image=--dry-run', '--dry-run']],
    [['submit', 'c.yaml', '--description', '--not-an-option-of-submit']],
    [['submit', 'c.yaml', '--instance-count', '-1', '--dry-run']],
    [['submit', 'c.yaml', '--image', 'img:1', '--description', 'x', '--dry-run']],
    [['submit', 'c.yaml', '--', '--image', '--dry-run']],
  ])('%j is taken', (args) => {
    expect(() => checkOptionValues(args, submit())).not.toThrow();
  });

  it('parses --tag key=value and refuses the rest with the expected form', () => {
    expect(parseTags(['team=annotations', 'note=a=b', 'empty='])).toEqual({
      team: 'annotations',
      note: 'a=b',
      empty: '',
    });
    for (const bad of ['foo', '=x', ' =x'])
      expect(() => parseTags([bad])).toThrow(/expected the form --tag key=value/);
  });
});

describe('sweep size', () => {
  const axis = (n: number) => ({ key: 'k', values: Array.from({ length: n }, (_, i) => i) });

  it('counts the combinations and refuses more than the limit before expanding', () => {
    expect(sweepSize([axis(10), axis(10), axis(10)])).toBe(1000);
    expect(SWEEP_MAX_JOBS).toBe(64);
    expect(() => checkSweepSize([axis(8), axis(8)])).not.toThrow();
    expect(() => checkSweepSize([axis(5), axis(13)])).toThrow(
      /5 × 13 = 65 combinations would create 65 jobs, more than the 64 .*--max-jobs 65/,
    );
    expect(() => checkSweepSize([axis(100)], 100)).not.toThrow();
  });
});

describe('job log path', () => {
  it.each([
    ['a folder', (d: string) => d, /it is a folder/],
    ['under /proc', () => '/proc/self/job_log.md', /under \/proc, a system folder/],
    ['under /sys', () => '/sys/job_log.md', /under \/sys/],
    ['/dev/null', () => '/dev/null', /under \/dev/],
    ['below a file', (d: string) => path.join(d, 'file', 'job_log.md'), /file is a file, so the folder/],
    ['a link into /proc', (d: string) => path.join(d, 'proc-link', 'job_log.md'), /under \/proc/],
  ])('%s is refused', (_name, at, why) => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'file'), '');
    fs.symlinkSync('/proc/self', path.join(dir, 'proc-link'));
    expect(jobLogPathProblem(at(dir))).toMatch(why);
  });

  it('takes a new file in folders still to be made, and an existing log', () => {
    const dir = tempDir();
    expect(jobLogPathProblem(path.join(dir, 'docs', 'deeper', 'job_log.md'))).toBeUndefined();
    fs.writeFileSync(path.join(dir, 'job_log.md'), '# Job log\n');
    expect(jobLogPathProblem(path.join(dir, 'job_log.md'))).toBeUndefined();
  });
});
