import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { DashboardData } from '../../lib/dashboard/data';
import { jobViews } from '../../lib/dashboard/jobs';
import { startServer, type DashboardServer } from '../../lib/dashboard/server';
import { chromiumAvailable, launchChromium } from '../helpers/browser';
import { bareEnv, runCli } from '../helpers/cli';
import { makeResultsFixture, TRAINING_RUN, type ResultsFixture } from '../helpers/dashboard';
import { REPO_ROOT } from '../helpers/fixtures';
import { itWithPeer } from '../helpers/moto';

/*
 * `rlvr dashboard` under a hostile tester: a token-protected page must still load its own script and
 * style; a port in use is the user's to change (exit 2), and every 127.x.y.z address is loopback.
 */

let fx: ResultsFixture;
beforeAll(() => {
  fx = makeResultsFixture();
});
afterAll(() => fs.rmSync(fx.root, { recursive: true, force: true }));

const env = (): Record<string, string> => bareEnv({ XDG_CACHE_HOME: fx.root });

/** Starts the real CLI's dashboard and resolves with its printed URL; stop() sends Ctrl-C. */
async function cliDashboard(args: string[]): Promise<{ url: string; stop: () => Promise<number | null> }> {
  const child = spawn(
    process.execPath,
    [path.join(REPO_ROOT, 'bin', 'rlvr.js'), 'dashboard', '--no-aws', '--results', fx.root, ...args],
    { env: env() },
  );
  let out = '';
  const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /rlvr dashboard: (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    void exit.then((code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  return {
    url,
    stop: () => {
      child.kill('SIGINT');
      return exit;
    },
  };
}

describe('dashboard --token', () => {
  const token = 'k3y-0123456789abcdef';
  let server: DashboardServer;
  beforeAll(async () => {
    const data = new DashboardData({ resultsDir: fx.root });
    server = await startServer({
      data,
      token,
      jobs: () =>
        jobViews({
          resultsDir: fx.root,
          stallMinutes: 30,
          progress: (id) => data.progress(id).catch(() => undefined),
        }),
    });
  });
  afterAll(() => server?.close());

  it('serves the page its assets with the token, and still refuses every request without it', async () => {
    const base = `http://127.0.0.1:${server.port}`;
    const html = await (await fetch(`${base}/?token=${token}`)).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/[^"]*)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const a of assets) expect((await fetch(`${base}${a}`)).status).toBe(200);
    for (const p of ['/', '/app.js', '/app.css', '/api/jobs', '/api/events'])
      expect((await fetch(`${base}${p}`)).status).toBe(401);
    expect((await fetch(`${base}/app.js?token=wrong-token-0000000`)).status).toBe(401);
  });

  it('takes the token in a URL only for what a browser asks by URL; the API needs the header', async () => {
    const base = `http://127.0.0.1:${server.port}`;
    expect((await fetch(`${base}/api/jobs?token=${token}`)).status).toBe(401);
    const notes = await fetch(`${base}/api/notes?token=${token}`, { method: 'PUT', body: '{}' });
    expect(notes.status).toBe(401);
    expect((await fetch(`${base}/api/jobs`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(
      200,
    );
  });

  itWithPeer('chromium', chromiumAvailable())(
    'opening the printed token URL in Chromium draws the jobs view',
    async () => {
      let browser: Browser | undefined;
      try {
        browser = await launchChromium();
        const page = await browser.newPage();
        const failed: string[] = [];
        page.on('response', (r) => {
          if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
        });
        await page.goto(server.url);
        await page.waitForSelector(`table.jobs a[href="#/run/${TRAINING_RUN}"]`, { timeout: 15_000 });
        expect(await page.locator('table.jobs tbody tr').count()).toBeGreaterThan(0);
        expect(failed).toEqual([]);
      } finally {
        await browser?.close();
      }
    },
  );
});

describe('dashboard --port in use', () => {
  it('exits 2 naming the port and saying to pick another', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const r = await runCli(['dashboard', '--no-aws', '--results', fx.root, '--port', String(port)], {
        env: env(),
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--port ${port}`);
      expect(r.stderr).toMatch(/in use/);
      expect(r.stderr).toMatch(/--port 0/);
      expect(r.stderr).not.toMatch(/internal error|EADDRINUSE/);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('--port 0 picks a free port', async () => {
    const d = await cliDashboard(['--port', '0']);
    expect(d.url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/$/);
    expect(await d.stop()).toBe(0);
  });
});

describe('dashboard --host on loopback', () => {
  it('accepts 127.0.0.2 without --token and answers requests addressed to it', async () => {
    const d = await cliDashboard(['--host', '127.0.0.2']);
    try {
      expect(d.url).toMatch(/^http:\/\/127\.0\.0\.2:\d+\/$/);
      const res = await fetch(`${d.url}api/jobs`);
      expect(res.status).toBe(200);
      const jobs = (await res.json()) as { jobs: { name: string }[] };
      expect(jobs.jobs.map((j) => j.name)).toContain(TRAINING_RUN);
    } finally {
      expect(await d.stop()).toBe(0);
    }
  });

  it('still refuses an address other machines can reach without --token', async () => {
    const r = await runCli(['dashboard', '--no-aws', '--results', fx.root, '--host', '128.0.0.1'], {
      env: env(),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--host 128\.0\.0\.1 is reachable from other machines: give --token too/);
  });
});
