import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromiumAvailable, launchChromium, type PageProbe } from '../helpers/browser';
import { bareEnv, runCli } from '../helpers/cli';
import { lineOf, REPO_ROOT, tempDir } from '../helpers/fixtures';
import { describeWithPeer } from '../helpers/moto';
import { writeTrace } from '../helpers/traces';

/*
 * `rlvr report --spec writeup.yaml --out page.html` as a user runs it, and the page it writes opened
 * from file:// in headless Chromium with no server: every panel drawn (a canvas with a size, uPlot
 * holding values for each run), the pass@k panel, the summary table against the base model, presets.
 * A screenshot goes to test-output/dashboard/writeup.png.
 */

const OUT = path.resolve(__dirname, '..', '..', 'test-output', 'dashboard');
const WATCHER = path.join(REPO_ROOT, 'test/fixtures/eval-results/training-run/evals');
const RUNS = [
  { id: 'grpo-a', label: 'GRPO a', math: [0.4, 0.5] },
  { id: 'dapo-b', label: 'DAPO b', math: [0.45, 0.35] },
];

/** The panels the page must draw: a missing one fails the test. */
const CHARTS = [
  'curve-reward',
  'curve-loss',
  'curve-kl',
  'curve-entropy',
  'curve-completion-length',
  'eval-gsm8k_cot 8-shot',
  'eval-math',
  'passk-gsm8k',
];

function passkLine(id: string, scores: number[]): string {
  const c = scores.filter((s) => s > 0).length;
  return JSON.stringify({
    prompt_id: id,
    num_completions: scores.length,
    num_correct: c,
    pass_rate: c / 4,
    scores,
  });
}

/** Run folders with traces and evals (ours and theirs), their script's pass@k shards, a base model, the spec. */
function makeFixture(): { root: string; spec: string } {
  const root = tempDir('rlvr-writeup-page-');
  RUNS.forEach((r, i) => {
    const dir = path.join(root, 'runs', r.id);
    fs.mkdirSync(path.join(dir, 'traces'), { recursive: true });
    writeTrace(path.join(dir, 'traces', 'trace.jsonl'), { steps: 40, batch: 4, rewardOffset: i * 0.1 });
    fs.cpSync(WATCHER, path.join(dir, 'evals'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'evals', 'math'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'evals', 'math', 'summary.jsonl'),
      r.math.map((a, j) => JSON.stringify({ step: (j + 1) * 20, accuracy: a })).join('\n'),
    );
    for (let s = 0; s < 2; s++) {
      const shard = path.join(root, 'passk', r.id, `shard_${s}`);
      fs.mkdirSync(shard, { recursive: true });
      const lines = [0, 1, 2].map((p) =>
        passkLine(
          `p${s}-${p}`,
          [0, 1, 2, 3].map((c) => (c < p + i ? 1 : 0)),
        ),
      );
      fs.writeFileSync(path.join(shard, 'verification_results.jsonl'), `${lines.join('\n')}\n`);
    }
  });
  const base = path.join(root, 'base', 'evals');
  fs.mkdirSync(path.join(base, 'math'), { recursive: true });
  fs.writeFileSync(path.join(base, 'math', 'summary.json'), JSON.stringify({ accuracy: 0.3 }));
  fs.mkdirSync(path.join(base, 'gsm8k', 'pass-at-k'), { recursive: true });
  fs.writeFileSync(
    path.join(base, 'gsm8k', 'pass-at-k', 'merged_summary.json'),
    JSON.stringify({ pass_at_k: { 'pass@1': 0.2, 'pass@2': 0.3, 'pass@4': 0.4 } }),
  );
  const spec = path.join(root, 'writeup.yaml');
  fs.writeFileSync(
    spec,
    `output: plots.js
html_prefix: wu
runs:
${RUNS.map(
  (r, i) => `  - id: ${r.id}
    run_dir: runs/${r.id}
    label: "${r.label}"
    color: "${['#3b82f6', '#f97316'][i]}"
    family: f${i}
    passk: [{dir: passk/${r.id}, benchmark: gsm8k}]`,
).join('\n')}
base_model:
  label: "Base"
  evals_dir: base/evals
exclude_benchmarks: [ifeval]
presets:
  - id: only-a
    label: "GRPO only"
    runs: [grpo-a]
    text: "The GRPO run alone."
`,
  );
  return { root, spec };
}

describeWithPeer('chromium', chromiumAvailable())('rlvr report --spec: the writeup page in Chromium', () => {
  let fx: { root: string; spec: string };
  let browser: Browser;
  let page: Page;
  let file: string;
  const requests: string[] = [];
  const env = (): Record<string, string> => bareEnv({ XDG_CACHE_HOME: fx.root });

  beforeAll(async () => {
    fs.mkdirSync(OUT, { recursive: true });
    fx = makeFixture();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on('pageerror', (e) => {
      throw e;
    });
    page.on('request', (r) => requests.push(r.url()));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('refuses a misspelt spec key with file:line:column (exit 2), writing nothing', async () => {
    const text = fs
      .readFileSync(fx.spec, 'utf8')
      .replace('    run_dir: runs/dapo-b', '    rundir: runs/dapo-b');
    const bad = path.join(fx.root, 'bad.yaml');
    fs.writeFileSync(bad, text);
    const out = path.join(fx.root, 'bad.html');
    const r = await runCli(['report', '--spec', bad, '--out', out], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${bad}:${lineOf(text, 'rundir:')}:5: runs[1].rundir: unknown key "rundir" — did you mean "run_dir"?`,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('writes one self-contained page with the CLI', async () => {
    file = path.join(OUT, 'writeup.html');
    const r = await runCli(['report', '--spec', fx.spec, '--out', file], { env: env() });
    expect(r.stderr).toMatch(/note: output: plots\.js is their generator's JavaScript file/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/wrote .*writeup\.html: 2 run\(s\), 5 training, 2 eval and 1 pass@k panel\(s\)/);
    const html = fs.readFileSync(file, 'utf8');
    // nothing fetched from elsewhere: no script or stylesheet by URL
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+stylesheet/);
  }, 120_000);

  it('draws every panel from file://, with no request leaving the file', async () => {
    await page.goto(`file://${file}`);
    await page.waitForFunction(() => {
      const p = (window as unknown as { __rlvr?: PageProbe }).__rlvr;
      return p && p.view === 'writeup' && !Number.isNaN(p.readyMs);
    });
    expect(await page.locator('.error').count()).toBe(0);
    const drawn = await page.evaluate(
      () =>
        (window as unknown as { __rlvrWriteup: Record<string, { label: string; values: number }[]> })
          .__rlvrWriteup,
    );
    expect(Object.keys(drawn).sort()).toEqual([...CHARTS].sort());
    for (const id of CHARTS) {
      const canvas = page.locator(`[data-chart="${id}"] canvas`).first();
      const box = await canvas.boundingBox();
      expect({ id, width: (box?.width ?? 0) > 100, height: (box?.height ?? 0) > 100 }).toEqual({
        id,
        width: true,
        height: true,
      });
      // uPlot holds values for each run (and the base model where it has a figure)
      const labels = drawn[id].filter((s) => s.values > 0).map((s) => s.label);
      expect({ id, labels }).toEqual({ id, labels: expect.arrayContaining(RUNS.map((r) => r.label)) });
    }
    expect(drawn['eval-math'].map((s) => s.label)).toEqual(['GRPO a', 'DAPO b', 'Base (base)']);
    expect(drawn['passk-gsm8k'].map((s) => [s.label, s.values])).toEqual([
      ['GRPO a', 3],
      ['DAPO b', 3],
      ['Base (base)', 3],
    ]);
    expect(requests.filter((u) => !u.startsWith('file://') && !u.startsWith('data:'))).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'writeup.png'), fullPage: true });
  });

  it('has a summary row per run with its difference to the base model', async () => {
    const table = page.locator('table.writeup-summary');
    expect(await table.locator('thead th').allTextContents()).toEqual([
      'run',
      'gsm8k_cot 8-shot',
      'math',
      'gsm8k pass@1',
      'gsm8k pass@4',
    ]);
    expect(await table.locator('tr[data-base] td').first().textContent()).toBe('Base (base)');
    const rows = table.locator('tbody tr[data-run]');
    expect(await rows.count()).toBe(RUNS.length);
    for (const [i, r] of RUNS.entries()) {
      const row = rows.nth(i);
      expect(await row.getAttribute('data-run')).toBe(r.id);
      const cells = await row.locator('td').allTextContents();
      expect(cells[0]).toBe(r.label);
      // math: latest accuracy against the base's 30%
      const delta = (r.math[1] - 0.3) * 100;
      expect(cells[2]).toBe(
        `${(r.math[1] * 100).toFixed(1)}% ${delta >= 0 ? '+' : '−'}${Math.abs(delta).toFixed(1)} pp`,
      );
      // every figure the base model has comes with a difference (math and both pass@k columns)
      expect(await row.locator('td[data-delta]').count()).toBe(3);
    }
  });

  it('shows a preset’s runs only, with its text', async () => {
    await page.locator('button[data-preset="only-a"]').click();
    await page.waitForFunction(
      () => document.querySelectorAll('table.writeup-summary tbody tr[data-run]').length === 1,
    );
    expect(await page.locator('.preset-text').textContent()).toBe('The GRPO run alone.');
    const drawn = await page.evaluate(
      () => (window as unknown as { __rlvrWriteup: Record<string, { label: string }[]> }).__rlvrWriteup,
    );
    expect(drawn['curve-reward'].map((s) => s.label)).toEqual(['GRPO a']);
    await page.locator('button[data-preset="all"]').click();
    await page.waitForFunction(
      () => document.querySelectorAll('table.writeup-summary tbody tr[data-run]').length === 2,
    );
  });
});
