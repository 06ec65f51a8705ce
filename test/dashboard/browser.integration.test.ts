import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { DashboardData } from '../../lib/dashboard/data';
import { jobViews } from '../../lib/dashboard/jobs';
import type { Live } from '../../lib/dashboard/live';
import { buildReport } from '../../lib/dashboard/report';
import { startServer, type DashboardServer } from '../../lib/dashboard/server';
import { chromiumAvailable, launchChromium, type PageProbe } from '../helpers/browser';
import {
  makeResultsFixture,
  startLocalDashboard,
  type LocalDashboard,
  SWEEP_ID,
  sweepRun,
  TRAINING_RUN,
  type ResultsFixture,
} from '../helpers/dashboard';
import { describeWithPeer } from '../helpers/moto';
import { writeTrace } from '../helpers/traces';

/*
 * The page in headless Chromium against the real server: the jobs view, a run view, a sweep's compare
 * view and a live append. Screenshots go to test-output/dashboard/ (the README shows one).
 */

const OUT = path.resolve(__dirname, '..', '..', 'test-output', 'dashboard');

describeWithPeer('chromium', chromiumAvailable())('the dashboard page in Chromium', () => {
  let fx: ResultsFixture;
  let server: DashboardServer;
  let live: Live;
  let dash: LocalDashboard | undefined;
  let data: DashboardData;
  let browser: Browser;
  let page: Page;

  const probe = (): Promise<PageProbe> =>
    page.evaluate(() => (window as unknown as { __rlvr: PageProbe }).__rlvr);
  const open = async (hash: string): Promise<PageProbe> => {
    await page.goto(`${server.url}#${hash}`);
    await page.waitForFunction(() => {
      const p = (window as unknown as { __rlvr?: PageProbe }).__rlvr;
      return p && !Number.isNaN(p.readyMs);
    });
    return probe();
  };

  beforeAll(async () => {
    fs.mkdirSync(OUT, { recursive: true });
    fx = makeResultsFixture();
    dash = await startLocalDashboard(fx.root);
    ({ data, server, live } = dash);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on('pageerror', (e) => {
      throw e;
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await dash?.stop();
    if (fx) fs.rmSync(fx.root, { recursive: true, force: true });
  });

  it('shows every job, its status and flags, and links runs that have traces', async () => {
    await open('/jobs');
    const rows = page.locator('table.jobs tbody tr');
    expect(await rows.count()).toBe(7);
    expect(await page.locator(`table.jobs a[href="#/run/${TRAINING_RUN}"]`).count()).toBe(1);
    expect(await page.locator(`a[href="#/compare/sweep/${SWEEP_ID}"]`).count()).toBeGreaterThanOrEqual(1);
    // a favourite run is listed first, and stays so after a reload (kept in the browser)
    const last = await rows.last().getAttribute('data-job');
    await rows.last().locator('button.star').click();
    await page.waitForFunction(
      (name) => document.querySelector('table.jobs tbody tr')?.getAttribute('data-job') === name,
      last,
    );
    await page.reload();
    await page.waitForFunction(
      (name) => document.querySelector('table.jobs tbody tr')?.getAttribute('data-job') === name,
      last,
    );
    await page.screenshot({ path: path.join(OUT, 'jobs.png') });
  });

  it('draws a run’s panels with the series its trace has, eval points and the timeline; a click shows that step’s rollouts', async () => {
    const res = await fetch(`${server.url}api/run?id=${TRAINING_RUN}`);
    const run = (await res.json()) as {
      panels: { id: string; keys: string[] }[];
      evals: { task: string; step?: number; metrics: { metric: string; value: number }[] }[];
    };
    const p = await open(`/run/${TRAINING_RUN}`);
    const drawn = new Map(p.charts.map((c) => [c.id, c.series]));
    // eval scores that are fractions are drawn on the reward curves too, one series per task and metric
    const fractions = new Set(
      run.evals
        .filter((e) => e.step != null && e.metrics.length && e.metrics[0].value <= 1)
        .map((e) => `${e.task} ${e.metrics[0].metric}`),
    );
    expect(fractions.size).toBeGreaterThanOrEqual(2);
    for (const panel of run.panels)
      expect([panel.id, drawn.get(panel.id)]).toEqual([
        panel.id,
        panel.keys.length + (panel.id === 'rewards' ? fractions.size : 0),
      ]);
    expect(drawn.get('rewards')).toBe(6 + fractions.size);
    expect(drawn.get('counter-custom.probe')).toBe(2);
    expect(drawn.get('eval-points')).toBeGreaterThanOrEqual(2);
    expect(drawn.get('timeline')).toBeGreaterThanOrEqual(8);
    expect(drawn.get('breakdown')).toBeGreaterThanOrEqual(5);
    expect(drawn.get('length-histogram')).toBe(2);
    expect(drawn.get('fates')).toBe(4);
    expect(await page.locator('.uplot').count()).toBe(
      p.charts.filter((c) => c.id !== 'timeline' && c.series > 0).length,
    );
    expect(await page.locator('table.evals tbody tr').count()).toBeGreaterThanOrEqual(3);
    await page.screenshot({ path: path.join(OUT, 'run.png'), fullPage: false });
    await page.screenshot({ path: path.join(OUT, 'run-full.png'), fullPage: true });
    await page.locator('[data-panel="rewards"]').screenshot({ path: path.join(OUT, 'rewards.png') });
    const chart = page.locator('[data-panel="rewards"] .u-over');
    const box = (await chart.boundingBox())!;
    await chart.click({ position: { x: box.width / 2, y: box.height / 2 } });
    await page.waitForSelector('.samples details.rollout');
    const summary = await page.locator('.samples .sub').first().textContent();
    const step = Number(/step (\d+)/.exec(summary ?? '')?.[1]);
    expect(step).toBeGreaterThan(80);
    expect(step).toBeLessThan(120);
    expect(await page.locator('.samples details.rollout').count()).toBe(2);
  });

  it('names a timeline bar under the pointer, zooms into the seconds dragged across, goes back on a double click', async () => {
    await page.goto('about:blank'); // the last test left this run open: load it afresh
    const before = (await open(`/run/${TRAINING_RUN}`)).timeline!;
    const canvas = page.locator('canvas.timeline');
    await canvas.scrollIntoViewIfNeeded();
    const box = (await canvas.boundingBox())!;
    // from 40% to 60% of the time axis (it starts right of the lane names, 190 px)
    const at = (f: number): number => box.x + 190 + f * (box.width - 190 - 8);
    // hovering the first lane finds one of its bars and names it
    const tip = page.locator('.tl-tip');
    for (let f = 0; f <= 1 && !(await tip.isVisible()); f += 0.01) await page.mouse.move(at(f), box.y + 7);
    expect(await tip.textContent()).toMatch(/^vllm\.generate_single #0\/0: [\d.]+–[\d.]+ s \([\d.]+ s/);
    await page.mouse.move(at(0.4), box.y + 20);
    await page.mouse.down();
    await page.mouse.move(at(0.5), box.y + 20, { steps: 4 });
    await page.mouse.move(at(0.6), box.y + 20, { steps: 4 });
    await page.mouse.up();
    await page.waitForFunction(
      (from) => (window as unknown as { __rlvr: PageProbe }).__rlvr.timeline?.from !== from,
      before.from,
    );
    const zoomed = (await probe()).timeline!;
    const span = before.to - before.from;
    expect(zoomed.from).toBeCloseTo(before.from + 0.4 * span, 0);
    expect(zoomed.to).toBeCloseTo(before.from + 0.6 * span, 0);
    expect((await probe()).charts.find((c) => c.id === 'timeline')!.series).toBeGreaterThan(0);
    expect(await page.locator('button.unzoom').isVisible()).toBe(true);
    await page.screenshot({ path: path.join(OUT, 'timeline-zoomed.png') });
    await canvas.dblclick();
    await page.waitForFunction(
      (from) => (window as unknown as { __rlvr: PageProbe }).__rlvr.timeline?.from === from,
      before.from,
    );
    expect((await probe()).timeline).toEqual(before);
    expect(await page.locator('button.unzoom').isVisible()).toBe(false);
  });

  it('overlays a sweep’s runs on each panel, named by their overrides', async () => {
    const p = await open(`/compare/sweep/${SWEEP_ID}`);
    const charts = p.charts.filter((c) => c.id.startsWith('cmp-'));
    expect(charts.length).toBeGreaterThanOrEqual(8);
    for (const c of charts) expect([c.id, c.series]).toEqual([c.id, 4]);
    const legend = await page.locator('.legend-names').textContent();
    for (const lr of ['0.000001', '0.000002', '0.000005', '0.00001'])
      expect(legend).toContain(`training.lr=${lr}`);
    await page.screenshot({ path: path.join(OUT, 'compare.png') });
  });

  it('updates an open run view without a reload when its trace grows', async () => {
    const id = sweepRun(1);
    const before = await open(`/run/${id}`);
    const points = (p: PageProbe): number => p.charts.find((c) => c.id === 'training')!.points;
    expect(points(before)).toBe(40);
    await page.evaluate(() => ((window as unknown as { __reloadMarker: number }).__reloadMarker = 1));
    writeTrace(
      fx.sweepTraces[1],
      { steps: 5, batch: 4, bufferEvents: 6, firstStep: 41, rewardOffset: 0.1 },
      true,
    );
    live.check();
    await page.waitForFunction(() => {
      const p = (window as unknown as { __rlvr: PageProbe }).__rlvr;
      return p.updates >= 1 && p.charts.find((c) => c.id === 'training')?.points === 45;
    });
    expect(await page.evaluate(() => (window as unknown as { __reloadMarker?: number }).__reloadMarker)).toBe(
      1,
    );
    await page.locator('nav button[title="light / dark"]').click();
    await page.screenshot({ path: path.join(OUT, 'run-dark.png') });
  });

  it('opens an exported report from a file, with no server, and draws the same run and compare views', async () => {
    const ids = [sweepRun(0), sweepRun(1)];
    const jobs = await jobViews({
      resultsDir: fx.root,
      stallMinutes: 30,
      progress: (id) => data.progress(id),
    });
    const { html } = await buildReport(data, ids, jobs);
    const file = path.join(OUT, 'report.html');
    fs.writeFileSync(file, html);
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(`file://${file}`);
    await page.waitForFunction(
      () => !Number.isNaN((window as unknown as { __rlvr: PageProbe }).__rlvr.readyMs),
    );
    let p = await probe();
    expect(p.view).toBe('compare');
    const charts = p.charts.filter((c) => c.id.startsWith('cmp-'));
    expect(charts.length).toBeGreaterThanOrEqual(8);
    for (const c of charts) expect([c.id, c.series]).toEqual([c.id, 2]);
    await page.evaluate((id) => (location.hash = `#/run/${id}`), ids[0]);
    await page.waitForFunction(() => {
      const w = (window as unknown as { __rlvr: PageProbe }).__rlvr;
      return w.view === 'run' && !Number.isNaN(w.readyMs);
    });
    p = await probe();
    expect(p.charts.find((c) => c.id === 'rewards')?.series).toBe(6);
    expect(await page.locator('.error').count()).toBe(0);
    expect(requests.filter((u) => !u.startsWith('file://'))).toEqual([]);
  });

  it('shows a running job’s step of its steps, rate, ETA and cost at finish, and its flag past the max runtime', async () => {
    // The page against a real server whose jobs answer carries a running SageMaker job's progress, as
    // jobViews makes it from the trace in S3 (test/dashboard/live.integration.test.ts).
    const { jobs } = await jobViews({
      resultsDir: fx.root,
      stallMinutes: 30,
      progress: async () => undefined,
    });
    const running = {
      ...jobs[0],
      name: 'annotations-adhoc-20261127-090000',
      status: 'InProgress',
      cost: 12.5,
      costFinal: false,
      progress: {
        step: 120,
        maxSteps: 200,
        secondsPerStep: 40.2,
        etaSeconds: 3216,
        remainingRuntimeSeconds: 1800,
        pastMaxRuntime: true,
        cutAtStep: 164,
        costSoFar: 12.5,
        costAtFinish: 44.7,
        forecastSecondsPerStep: 38,
      },
      flags: [
        'ETA 54m is past the 30m of max runtime left: SageMaker will stop it at about step 164 of 200, before its last checkpoint',
      ],
    };
    const other = await startServer({ data, jobs: async () => ({ jobs: [running], aws: 'ok' }) });
    try {
      await page.goto(`${other.url}#/jobs`);
      await page.waitForFunction(() => {
        const p = (window as unknown as { __rlvr?: PageProbe }).__rlvr;
        return p && !Number.isNaN(p.readyMs);
      });
      const row = page.locator(`table.jobs tr[data-job="${running.name}"]`);
      const text = (await row.innerText()).replace(/\s+/g, ' ');
      expect(text).toContain('120 / 200');
      expect(text).toContain('40.2 s/step, ETA 53m36s');
      expect(text).toContain('$44.70 at finish');
      expect(text).toContain('⚠ ETA 54m is past the 30m of max runtime left');
      expect(await row.locator('.sub.late').count()).toBe(1);
    } finally {
      await other.close();
    }
  });
});
