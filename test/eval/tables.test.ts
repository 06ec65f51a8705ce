import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UserError } from '../../lib/errors';
import { resultsOfJobs } from '../../lib/eval/tables';
import { defaultedJobLogPath, writableJobLogPath } from '../../lib/submission/job-log';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'eval-results');

describe('resultsOfJobs (rlvr eval results)', () => {
  let cache: string;
  const env = { ...process.env };
  beforeEach(() => {
    cache = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-tables-'));
    process.env.XDG_CACHE_HOME = cache;
  });
  afterEach(() => {
    process.env.XDG_CACHE_HOME = env.XDG_CACHE_HOME;
    fs.rmSync(cache, { recursive: true, force: true });
  });

  it('reads local run folders without opening AWS, and learns the units’ durations', async () => {
    const openContext = jest.fn();
    const { table, stats } = await resultsOfJobs(['eval-run', 'training-run'], {
      cwd: FIXTURES,
      baseline: 'base',
      openContext,
    });
    expect(openContext).not.toHaveBeenCalled();
    expect(stats).toBeUndefined();
    expect(table.baseline).toBe('base');
    expect(table.rows.map((r) => r.label)).toContain('step100');
    expect(fs.existsSync(path.join(cache, 'rlvr', 'eval-results', 'durations.json'))).toBe(true);
  });

  it('a baseline that names no row is bad input naming the rows there are', async () => {
    const err = await resultsOfJobs(['eval-run'], {
      cwd: FIXTURES,
      baseline: 'nope',
      openContext: jest.fn(),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toMatch(/--baseline nope: no such row \(rows: .*base/);
  });

  it('opens AWS once for the names that are not folders here, and closes it', async () => {
    const close = jest.fn();
    const openContext = jest.fn(async () => ({ aws: {}, layout: undefined, close }) as never);
    // No bucket configured: the context says so (requireLayout), and is still closed.
    await expect(
      resultsOfJobs(['eval-run', 'annotations-adhoc-eval-1'], { cwd: FIXTURES, openContext }),
    ).rejects.toThrow(/bucket/i);
    expect(openContext).toHaveBeenCalledTimes(1);
    expect(close).toHaveBeenCalledTimes(1);
  });
});

describe('the job log of a command that submits', () => {
  it('defaults to docs/job_log.md of the folder outside git, and takes RLVR_JOB_LOG relative to it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-joblog-'));
    try {
      expect(await defaultedJobLogPath({ env: {}, cwd: dir })).toBe(path.join(dir, 'docs', 'job_log.md'));
      expect(await defaultedJobLogPath({ env: { RLVR_JOB_LOG: 'log.md' }, cwd: dir })).toBe(
        path.join(dir, 'log.md'),
      );
      expect(await defaultedJobLogPath({ explicit: 'x.md', env: { RLVR_JOB_LOG: 'log.md' }, cwd: dir })).toBe(
        path.join(dir, 'x.md'),
      );
      // A folder cannot be the log: bad input that says how to name another.
      fs.mkdirSync(path.join(dir, 'logs'));
      await expect(writableJobLogPath({ explicit: 'logs', env: {}, cwd: dir })).rejects.toMatchObject({
        code: 'BadJobLog',
        message: expect.stringMatching(
          /cannot be written: it is a folder.*Name another with --job-log <file>/,
        ),
      });
      expect(await writableJobLogPath({ explicit: 'ok.md', env: {}, cwd: dir })).toBe(
        path.join(dir, 'ok.md'),
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
