import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bareEnv, runCli } from '../helpers/cli';
import { REPO_ROOT } from '../helpers/fixtures';
import {
  makeResultsFixture,
  SWEEP_ID,
  sweepRun,
  TRAINING_RUN,
  type ResultsFixture,
} from '../helpers/dashboard';

/* `rlvr dashboard` and `rlvr report` as a user runs them: bad flags exit 2, the server prints its URL. */

let fx: ResultsFixture;
beforeAll(() => {
  fx = makeResultsFixture();
});
afterAll(() => fs.rmSync(fx.root, { recursive: true, force: true }));

const env = (): Record<string, string> => bareEnv({ XDG_CACHE_HOME: fx.root });

describe('rlvr dashboard', () => {
  it.each([
    [['--results', '/nonexistent/results'], /--results \/nonexistent\/results: no such folder/],
    [['--host', '0.0.0.0'], /--host 0.0.0.0 is reachable from other machines: give --token too/],
    [['--host', '0.0.0.0', '--token', 'short'], /--token: at least 16 characters/],
    [['--port', '70000'], /--port 70000: at most 65535/],
    [['--port', 'abc'], /--port abc: a positive whole number/],
    [['--stall-minutes', '0'], /--stall-minutes 0: a positive number/],
  ])('%j exits 2 with what to do', async (args, message) => {
    const r = await runCli(['dashboard', '--no-aws', '--results', fx.root, ...args], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('serves on 127.0.0.1 at a free port, prints the URL, and stops on Ctrl-C', async () => {
    const child = spawn(
      process.execPath,
      [path.join(REPO_ROOT, 'bin', 'rlvr.js'), 'dashboard', '--no-aws', '--results', fx.root],
      {
        env: env(),
      },
    );
    let stdout = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        const m = /rlvr dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stdout);
        if (m) resolve(m[1]);
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}: ${stdout}`)));
    });
    const jobs = (await (await fetch(`${url}api/jobs`)).json()) as { jobs: { name: string }[]; aws: string };
    expect(jobs.jobs.map((j) => j.name)).toContain(TRAINING_RUN);
    expect(jobs.aws).toMatch(/--no-aws/);
    const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGINT');
    expect(await exit).toBe(0);
  });
});

describe('rlvr report', () => {
  it('writes one self-contained HTML file: the page, uPlot and the runs’ data inline, nothing fetched', async () => {
    const out = path.join(fx.root, 'share', 'report.html');
    const ids = [0, 1, 2, 3].map(sweepRun);
    const r = await runCli(['report', ...ids, '--results', fx.root, '--out', out], { env: env() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/wrote .*report\.html: 4 run\(s\)/);
    const html = fs.readFileSync(out, 'utf8');
    expect(html).toContain('<script id="rlvr-data" type="application/json">');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/);
    expect(html).toContain(SWEEP_ID);
    expect(fs.existsSync(`${out}.partial`)).toBe(false);
  });

  it('exits 2 without --out, saying what to give', async () => {
    const r = await runCli(['report', TRAINING_RUN, '--results', fx.root], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--out <file>: where to write the report/);
  });

  it('exits 2 naming a run it does not have, and writes nothing', async () => {
    const out = path.join(fx.root, 'nothing.html');
    const r = await runCli(
      ['report', TRAINING_RUN, 'annotations-adhoc-nope', '--results', fx.root, '--out', out],
      { env: env() },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/annotations-adhoc-nope: no run with a trace/);
    expect(fs.existsSync(out)).toBe(false);
  });
});
