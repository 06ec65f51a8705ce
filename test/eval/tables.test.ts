import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { IS3, S3ObjectInfo } from '../../lib/aws';
import { UserError } from '../../lib/errors';
import { resultsOfJobs } from '../../lib/eval/tables';
import { S3Layout } from '../../lib/layout';
import { defaultedJobLogPath, writableJobLogPath } from '../../lib/submission/job-log';
import { bareEnv, runCli } from '../helpers/cli';
import { tempDir } from '../helpers/fixtures';
import { BAD_RECORDS, GOOD_RECORD, writeMalformedUnits } from '../eval-records/malformed-fixture';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'eval-results');

/** Each test with a cache folder of its own (XDG_CACHE_HOME), removed after it. */
function useTempCache(): () => string {
  let cache = '';
  const before = process.env.XDG_CACHE_HOME;
  beforeEach(() => {
    cache = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-tables-'));
    process.env.XDG_CACHE_HOME = cache;
  });
  afterEach(() => {
    process.env.XDG_CACHE_HOME = before;
    fs.rmSync(cache, { recursive: true, force: true });
  });
  return () => cache;
}

describe('resultsOfJobs (rlvr eval results)', () => {
  const cacheDir = useTempCache();

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
    expect(fs.existsSync(path.join(cacheDir(), 'rlvr', 'eval-results', 'durations.json'))).toBe(true);
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

/** The files of a local folder as an S3 job's run folder (listing, head and GETs), read-only. */
function folderAsS3(dir: string, layout: S3Layout, job: string): IS3 {
  const files = (rel = ''): string[] =>
    fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
      const r = path.posix.join(rel, e.name);
      return e.isDirectory() ? files(r) : [r];
    });
  const prefix = layout.checkpointsPrefix(job);
  const objects: S3ObjectInfo[] = files().map((r) => ({
    key: `${prefix}${r}`,
    size: fs.statSync(path.join(dir, r)).size,
    etag: `"${fs.statSync(path.join(dir, r)).mtimeMs}"`,
  }));
  return {
    listObjects: async (_bucket: string, p: string) => objects.filter((o) => o.key.startsWith(p)),
    headObject: async () => undefined,
    getObjectText: async (_bucket: string, key: string) =>
      fs.readFileSync(path.join(dir, key.slice(prefix.length)), 'utf8'),
  } as unknown as IS3;
}

describe('malformed unit records (rlvr eval results)', () => {
  useTempCache();

  const failedCells = (table: Awaited<ReturnType<typeof resultsOfJobs>>['table']) =>
    table.rows.flatMap((r) => r.cells.filter((c) => c && 'failed' in c));

  it('in a local folder: each a failed cell and a warning naming its path, the good unit its row', async () => {
    const cwd = tempDir('rlvr-malformed-cwd-');
    writeMalformedUnits(path.join(cwd, 'eval-run'));
    const warn = jest.fn();
    const { table } = await resultsOfJobs(['eval-run'], { cwd, openContext: jest.fn(), warn });
    expect(table.rows.map((r) => r.label)).toEqual(['base']);
    expect(table.rows[0].cells.some((c) => c && 'value' in c)).toBe(true);
    expect(failedCells(table)).toHaveLength(3);
    const said = warn.mock.calls.map((c) => String(c[0]));
    expect(said).toHaveLength(3);
    for (const f of Object.values(BAD_RECORDS))
      expect(said.some((w) => w.includes(path.join('eval-run', f)))).toBe(true);
  });

  it('in S3: each a failed cell and a warning naming its key; a repeat (from the cache) warns the same', async () => {
    const dir = writeMalformedUnits(tempDir('rlvr-malformed-s3-'));
    const layout = new S3Layout('bucket');
    const job = 'annotations-adhoc-eval-1';
    const s3 = folderAsS3(dir, layout, job);
    const openContext = async () => ({ aws: { s3 }, layout, close: () => undefined }) as never;
    for (let attempt = 0; attempt < 2; attempt++) {
      const warn = jest.fn();
      const { table, stats } = await resultsOfJobs([job], { cwd: dir, openContext, warn });
      expect(table.rows.map((r) => r.label)).toEqual(['base']);
      expect(table.rows[0].cells.some((c) => c && 'value' in c)).toBe(true);
      expect(failedCells(table)).toHaveLength(3);
      const said = warn.mock.calls.map((c) => String(c[0]));
      expect(said).toHaveLength(3);
      for (const f of Object.values(BAD_RECORDS))
        expect(said.some((w) => w.includes(`s3://bucket/${layout.checkpointsPrefix(job)}${f}`))).toBe(true);
      expect(said.join('\n')).not.toContain(GOOD_RECORD);
      if (attempt === 1) expect(stats?.fetched).toBeLessThan(stats!.files);
    }
  });

  it('`rlvr eval results <folder>` exits 0 with the table, the bad units failed and each bad file named', async () => {
    const cwd = tempDir('rlvr-malformed-cli-');
    writeMalformedUnits(path.join(cwd, 'eval-run'));
    const r = await runCli(['eval', 'results', 'eval-run'], {
      cwd,
      env: bareEnv({ XDG_CACHE_HOME: cwd }),
    });
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\| base +\|/);
    expect(r.stdout.match(/FAILED/g)).toHaveLength(3);
    // The warnings go to stderr, one per bad file, apart from the table.
    const warnings = r.stderr.split('\n').filter((l) => l.startsWith('warning: unit record'));
    expect(warnings).toHaveLength(Object.keys(BAD_RECORDS).length);
    for (const f of Object.values(BAD_RECORDS))
      expect(warnings.some((w) => w.includes(path.join('eval-run', f)))).toBe(true);
    expect(r.stderr).toMatch(/deviations: missing/);
    expect(r.stderr).toMatch(/not JSON/);
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
