import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { DashboardData } from '../../lib/dashboard/data';
import { startServer, type DashboardServer } from '../../lib/dashboard/server';
import { chromiumAvailable, launchChromium, type PageProbe } from '../helpers/browser';
import { describeWithPeer } from '../helpers/moto';

/*
 * The pass@k view (#/passk) in headless Chromium against the real server on a free loopback port, over
 * a results folder of campaigns: two models on gsm8k/test, one on math/test, and their script's bare
 * output. Every benchmark's chart has a canvas with a size and a uPlot series holding values for each of
 * its campaigns; the tables have a row per campaign with its pass@1; the first-k toggle adds the dashed
 * lines. A screenshot goes to test-output/dashboard/passk.png.
 */

const OUT = path.resolve(__dirname, '..', '..', 'test-output', 'dashboard');

const record = (id: string, scores: number[]): string =>
  JSON.stringify({
    prompt_id: id,
    scores,
    num_correct: scores.filter((s) => s > 0).length,
    num_completions: scores.length,
  });

/** A campaign run folder: its plan and, per shard, the scores of its prompts. */
function campaign(root: string, id: string, dataset: string, label: string, shards: number[][][]): void {
  const dir = path.join(root, id);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'passk-plan.json'),
    JSON.stringify({
      version: 1,
      campaign: {
        dataset,
        split: 'test',
        n: shards[0][0].length,
        sampling: {},
        model: { label, id: `org/${label}`, from: 'hub' },
        trainer: 't',
      },
      campaignId: id,
      shards: shards.map((_, index) => ({ index, host: 0, gpu: index, argv: [] })),
    }),
  );
  shards.forEach((prompts, i) => {
    const s = path.join(dir, 'passk', `shard_${i}`);
    fs.mkdirSync(s, { recursive: true });
    fs.writeFileSync(
      path.join(s, 'verification_results.jsonl'),
      prompts.map((scores, p) => `${record(`${dataset}-${i}-${p}`, scores)}\n`).join(''),
    );
  });
}

/** Scores of `n` completions with the first `c` correct. */
const scores = (n: number, c: number): number[] => Array.from({ length: n }, (_, i) => (i < c ? 1 : 0));

/** Benchmark → the campaigns (ids) its chart must draw. */
const CHARTS: Record<string, string[]> = {
  'passk-gsm8k/test': ['gsm8k-base', 'gsm8k-grpo'],
  'passk-math/test': ['math-base'],
  'passk-their-output (no plan)': ['their-output'],
};

describeWithPeer('chromium', chromiumAvailable())('the pass@k view in Chromium', () => {
  let root: string;
  let server: DashboardServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    fs.mkdirSync(OUT, { recursive: true });
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-passk-page-'));
    // n = 8: pass@1 = mean(c)/8
    campaign(root, 'gsm8k-base', 'gsm8k', 'Base', [
      [scores(8, 1), scores(8, 0)],
      [scores(8, 2), scores(8, 5)],
    ]);
    campaign(root, 'gsm8k-grpo', 'gsm8k', 'GRPO', [[scores(8, 4), scores(8, 6), scores(8, 8), scores(8, 2)]]);
    campaign(root, 'math-base', 'math', 'Base', [[scores(4, 1), scores(4, 0)]]);
    const bare = path.join(root, 'their-output', 'shard_0');
    fs.mkdirSync(bare, { recursive: true });
    fs.writeFileSync(path.join(bare, 'verification_results.jsonl'), `${record('x', scores(16, 3))}\n`);

    server = await startServer({
      data: new DashboardData({ resultsDir: root }),
      jobs: async () => ({ jobs: [] }),
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on('pageerror', (e) => {
      throw e;
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const probe = (): Promise<PageProbe> =>
    page.evaluate(() => (window as unknown as { __rlvr: PageProbe }).__rlvr);
  const curves = (): Promise<Record<string, { label: string; values: number }[]>> =>
    page.evaluate(
      () =>
        (window as unknown as { __rlvrCurves: Record<string, { label: string; values: number }[]> })
          .__rlvrCurves,
    );

  it('is linked from the navigation, and draws a chart per benchmark with a line per campaign', async () => {
    await page.goto(server.url);
    await page.waitForFunction(
      () => !Number.isNaN((window as unknown as { __rlvr: PageProbe }).__rlvr.readyMs),
    );
    await page.click('nav a[href="#/passk"]');
    await page.waitForFunction(() => {
      const p = (window as unknown as { __rlvr: PageProbe }).__rlvr;
      return p.view === 'passk' && !Number.isNaN(p.readyMs);
    });
    expect((await probe()).charts.map((c) => c.id).sort()).toEqual(Object.keys(CHARTS).sort());

    const drawn = await curves();
    for (const [id, campaigns] of Object.entries(CHARTS)) {
      const canvas = await page.$(`[data-chart="${id}"] canvas`);
      expect(canvas).not.toBeNull();
      const box = await canvas!.boundingBox();
      expect(box!.width).toBeGreaterThan(0);
      expect(box!.height).toBeGreaterThan(0);
      // a uPlot series per campaign, each holding a value at every k it has (log2 n + 1 of them)
      expect(drawn[id]).toHaveLength(campaigns.length);
      for (const s of drawn[id]) expect(s.values).toBeGreaterThan(1);
      expect(drawn[id].every((s) => !/first-k/.test(s.label))).toBe(true);
    }
    expect(drawn['passk-gsm8k/test'].map((s) => s.label).sort()).toEqual(['Base', 'GRPO']);
    expect(drawn['passk-gsm8k/test'].map((s) => s.values)).toEqual([4, 4]);
    await page.screenshot({ path: path.join(OUT, 'passk.png'), fullPage: true });
  });

  it('tables a row per campaign under its chart: model, n, prompts, pass@1, pass@k at the largest k', async () => {
    const rows = await page.$$eval('[data-panel="pk-gsm8k/test"] table.passk-table tbody tr', (trs) =>
      trs.map((tr) => ({
        id: tr.getAttribute('data-campaign'),
        cells: Array.from(tr.querySelectorAll('td')).map((td) => td.textContent?.trim()),
      })),
    );
    expect(rows.map((r) => r.id)).toEqual(['gsm8k-base', 'gsm8k-grpo']);
    // Base: c = 1, 0, 2, 5 of 8 → pass@1 = 8/32 = 25.0%; pass@8 = 3 of 4 prompts with a correct one
    expect(rows[0].cells.slice(0, 7)).toEqual(['■ Base', '8', '4', '25.0%', '75.0% @ k=8', '2 / 2', '–']);
    // GRPO: c = 4, 6, 8, 2 → 20/32 = 62.5%; pass@8 = 100%
    expect(rows[1].cells.slice(0, 5)).toEqual(['■ GRPO', '8', '4', '62.5%', '100.0% @ k=8']);
    const math = await page.$$eval('[data-panel="pk-math/test"] table.passk-table tbody tr', (trs) =>
      trs.map((tr) => tr.getAttribute('data-campaign')),
    );
    expect(math).toEqual(['math-base']);
  });

  it('adds their first-k figure as dashed lines when toggled', async () => {
    const updates = (await probe()).updates;
    await page.check('[data-toggle="first-k"]');
    await page.waitForFunction(
      (u) => (window as unknown as { __rlvr: PageProbe }).__rlvr.updates > u,
      updates,
    );
    const drawn = await curves();
    expect(drawn['passk-gsm8k/test'].map((s) => s.label).sort()).toEqual([
      'Base',
      'Base first-k',
      'GRPO',
      'GRPO first-k',
    ]);
    for (const id of Object.keys(CHARTS)) expect(drawn[id]).toHaveLength(CHARTS[id].length * 2);
    await page.uncheck('[data-toggle="first-k"]');
  });
});
