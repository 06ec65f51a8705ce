/* eslint-disable @typescript-eslint/no-explicit-any -- the JSON answers of the API under test */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { chromiumAvailable, launchChromium } from '../helpers/browser';
import { bareEnv, runCli } from '../helpers/cli';
import {
  makeResultsFixture,
  startLocalDashboard,
  sweepRun,
  TRAINING_RUN,
  type LocalDashboard,
  type ResultsFixture,
} from '../helpers/dashboard';
import { BAD_RECORDS, writeMalformedUnits } from '../eval-records/malformed-fixture';
import { itWithPeer } from '../helpers/moto';

/*
 * A run folder holding unit records that are not records (one missing `deviations`, one
 * `{"checkpoint": 5}`, one not JSON): the dashboard's API over real HTTP and `rlvr report` still answer,
 * each bad unit a failed cell, each bad file named in a warning.
 */

let fx: ResultsFixture;
let dash: LocalDashboard;

beforeAll(async () => {
  fx = makeResultsFixture();
  writeMalformedUnits(path.join(fx.root, TRAINING_RUN));
  dash = await startLocalDashboard(fx.root);
});

afterAll(async () => {
  await dash.stop();
  fs.rmSync(fx.root, { recursive: true, force: true });
});

async function get(p: string): Promise<{ status: number; body: string }> {
  const r = await fetch(`http://127.0.0.1:${dash.server.port}${p}`);
  return { status: r.status, body: await r.text() };
}

const named = (warnings: string[]) =>
  Object.values(BAD_RECORDS).map((f) => warnings.some((w) => w.includes(path.posix.join(TRAINING_RUN, f))));

describe('the dashboard with malformed unit records in a run folder', () => {
  it("answers the run page of that run (the bad units as failed cells, their files in the table's warnings) and every other", async () => {
    const r = await get(`/api/run?id=${TRAINING_RUN}`);
    expect(r.status).toBe(200);
    const run = JSON.parse(r.body) as Record<string, any>;
    expect(named(run.evalTable.warnings)).toEqual([true, true, true]);
    expect(run.evalTable.warnings.find((w: string) => w.includes(BAD_RECORDS.noDeviations))).toMatch(
      /deviations: missing/,
    );
    const failed = (run.evalTable.rows as any[]).flatMap((row) =>
      (row.cells as any[]).filter((c) => c && 'failed' in c),
    );
    expect(failed.filter((c) => /unreadable unit record/.test(c.failed))).toHaveLength(3);
    // The watcher's rows of the same run are still there.
    expect((run.evals as any[]).some((e) => e.metrics.length > 0)).toBe(true);
    // Past the eval rows' re-read interval too: another run's page.
    expect((await get(`/api/run?id=${sweepRun(0)}`)).status).toBe(200);
  });

  itWithPeer('chromium', chromiumAvailable())(
    'the run page in Chromium shows the bad units as failed cells, with their reason, and names each bad file',
    async () => {
      let browser: Browser | undefined;
      try {
        browser = await launchChromium();
        const page = await browser.newPage();
        await page.goto(`http://127.0.0.1:${dash.server.port}/#/run/${TRAINING_RUN}`);
        await page.waitForSelector('ul.eval-warnings li', { timeout: 15_000 });
        const warnings = await page.locator('ul.eval-warnings li').allTextContents();
        expect(named(warnings)).toEqual([true, true, true]);
        const reasons = await page
          .locator('table.evals td[title]')
          .evaluateAll((tds) => tds.map((td) => td.getAttribute('title') ?? ''));
        expect(reasons.filter((r) => /unreadable unit record/.test(r))).toHaveLength(3);
      } finally {
        await browser?.close();
      }
    },
  );

  it('answers /api/compare with the warnings', async () => {
    const r = await get(`/api/compare?ids=${TRAINING_RUN},${sweepRun(0)}&axis=step&width=500&keys=`);
    expect(r.status).toBe(200);
    expect(named(JSON.parse(r.body).evalTable.warnings)).toEqual([true, true, true]);
  });
});

describe('rlvr report on that run', () => {
  it('exits 0, and the page names each bad file', async () => {
    const out = path.join(fx.root, 'share', 'malformed.html');
    const r = await runCli(['report', TRAINING_RUN, sweepRun(0), '--results', fx.root, '--out', out], {
      env: bareEnv({ XDG_CACHE_HOME: fx.root }),
    });
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code).toBe(0);
    const html = fs.readFileSync(out, 'utf8');
    for (const f of Object.values(BAD_RECORDS)) expect(html).toContain(path.posix.join(TRAINING_RUN, f));
  });
});
