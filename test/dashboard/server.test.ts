/* eslint-disable @typescript-eslint/no-explicit-any -- the JSON answers of the API under test */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DashboardData } from '../../lib/dashboard/data';
import type { Live } from '../../lib/dashboard/live';
import { overrideLabels } from '../../lib/dashboard/runs';
import { startServer, type DashboardServer } from '../../lib/dashboard/server';
import { pageHtml } from '../../lib/dashboard/web-bundle';
import {
  makeResultsFixture,
  startLocalDashboard,
  type LocalDashboard,
  EVAL_RUN,
  SWEEP_ID,
  sweepRun,
  TRAINING_RUN,
  type ResultsFixture,
} from '../helpers/dashboard';
import { writeTrace } from '../helpers/traces';

/*
 * The dashboard's server over real HTTP on loopback, against a results folder of generated traces in
 * the trainer's event format (test/helpers/dashboard.ts).
 */

interface Reply {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** A raw request: the path is sent as given (no URL normalisation), headers as given. */
function request(
  port: number,
  rawPath: string,
  o: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: rawPath,
        method: o.method ?? 'GET',
        headers: { host: `127.0.0.1:${port}`, ...o.headers },
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

async function json(port: number, p: string): Promise<Record<string, any>> {
  const r = await request(port, p);
  if (r.status !== 200) throw new Error(`${p}: ${r.status} ${r.body}`);
  return JSON.parse(r.body);
}

let fx: ResultsFixture;
let data: DashboardData;
let server: DashboardServer;
let live: Live;
let dash: LocalDashboard;
let port: number;

beforeAll(async () => {
  fx = makeResultsFixture();
  // the running sweep job's trace last grew two hours ago: stalled
  const old = new Date(Date.now() - 2 * 3600_000);
  fs.utimesSync(fx.sweepTraces[3], old, old);
  dash = await startLocalDashboard(fx.root);
  ({ data, server, live } = dash);
  port = server.port;
});

afterAll(async () => {
  await dash.stop();
  fs.rmSync(fx.root, { recursive: true, force: true });
});

describe('dashboard API', () => {
  it('lists every run folder as a job, with sweep, checkpoints, latest step and reward, and flags a stalled one', async () => {
    const { jobs } = await json(port, '/api/jobs');
    const byName = new Map((jobs as any[]).map((j) => [j.name, j]));
    expect([...byName.keys()].sort()).toEqual(
      [TRAINING_RUN, EVAL_RUN, ...[0, 1, 2, 3].map(sweepRun), 'annotations-adhoc-20261124-020000'].sort(),
    );
    const t = byName.get(TRAINING_RUN);
    expect(t).toMatchObject({
      status: 'Completed',
      hasTrace: true,
      latestStep: 200,
      localCheckpoints: 1,
      description: 'gsm8k baseline',
    });
    expect(typeof t.latestReward).toBe('number');
    expect(byName.get(EVAL_RUN).hasTrace).toBe(false);
    expect([0, 1, 2, 3].map((i) => byName.get(sweepRun(i)).sweep)).toEqual([
      SWEEP_ID,
      SWEEP_ID,
      SWEEP_ID,
      SWEEP_ID,
    ]);
    expect(byName.get(sweepRun(3)).flags).toEqual([
      expect.stringMatching(/^stalled: no trace growth for 1[12]\d min$/),
    ]);
    expect(byName.get(sweepRun(2)).flags).toEqual([]);
  });

  it('gives a run its panels (known counters and unknown ones), steps, eval results from the watcher and rlvr eval, and its documents', async () => {
    const run = await json(port, `/api/run?id=${TRAINING_RUN}`);
    expect(run.steps).toMatchObject({ count: 200, first: 1, last: 200, marker: 'metrics' });
    const panels = new Map((run.panels as any[]).map((p) => [p.id, p.keys]));
    expect(panels.get('rewards')).toEqual(
      expect.arrayContaining(['reward_stats|reward_overall', 'metrics|avg_reward', 'rewards|mean']),
    );
    expect(panels.get('training')).toEqual(
      expect.arrayContaining(['metrics|loss', 'metrics|grad_norm', 'grpo.debug|kl_mean']),
    );
    expect(panels.get('counter-custom.probe')).toEqual(['custom.probe|alpha', 'custom.probe|beta']);
    expect(panels.get('buffer')).toEqual(['buffer|age=0', 'buffer|age=1', 'buffer|age=2', 'buffer|age>=3']);
    expect(panels.get('completion-length')).toHaveLength(4);
    expect(run.spans.map((s: any) => s.name)).toEqual(
      expect.arrayContaining([
        'vllm.generate_single',
        'verify',
        'forward_backward',
        'optim_step',
        'sync.trainer_to_vllm',
      ]),
    );
    expect(run.docs.config).toMatch(/lr: 0.000001/);
    expect(run.docs.results).toMatch(/gsm8k 0.76/);
    expect(run.fates.used).toBeDefined();
    // every completion of the run (200 steps × 4) in the correct/wrong length histograms
    const count = (h: Record<string, number>) => Object.values(h).reduce((a, b) => a + b, 0);
    expect(count(run.histograms.len_correct) + count(run.histograms.len_wrong)).toBe(800);
    // the watcher's summary (steps 100, 200) and the eval job's units (step100, final) of this run
    const points = (run.evals as any[]).map((e) => `${e.checkpointId}@${e.step} ${e.task}`);
    expect(points).toEqual(
      expect.arrayContaining([
        `${TRAINING_RUN}:step100@100 gsm8k_cot`,
        `${TRAINING_RUN}:step200@200 gsm8k_cot`,
        `${TRAINING_RUN}:final@200 minerva_math`,
      ]),
    );
    expect(run.evalTable.rows.length).toBeGreaterThanOrEqual(3);
  });

  it('downsamples a series to the pixels asked for and keeps the count of points behind it', async () => {
    const r = await json(
      port,
      `/api/series?id=${TRAINING_RUN}&keys=metrics|loss,buffer|size&width=50&axis=step`,
    );
    expect(r.series['metrics|loss'].n).toBe(200);
    expect(r.series['metrics|loss'].x.length).toBeLessThanOrEqual(100);
    expect(r.series['buffer|size'].n).toBe(1200);
    expect(r.series['buffer|size'].x.length).toBeLessThanOrEqual(100);
    const t = await json(port, `/api/series?id=${TRAINING_RUN}&keys=metrics|loss&width=1000&axis=time`);
    expect(t.series['metrics|loss'].x[0]).toBeCloseTo(18.5, 5); // the first metrics counter's ts (traces.ts)
  });

  it('adds up a bar panel’s counters of one step (two lag counters a step) when asked', async () => {
    const run = await json(port, `/api/run?id=${TRAINING_RUN}`);
    const lag = (run.panels as any[]).find((p) => p.id === 'lag');
    expect(lag).toMatchObject({
      bars: true,
      keys: ['batch.lag|lag_0', 'batch.lag|lag_1', 'batch.lag|lag_2'],
    });
    const tokens = (run.panels as any[]).find((p) => p.id === 'tokens');
    expect(tokens.keys).toEqual(
      expect.arrayContaining(['batch.datasets|gsm8k_tokens', 'batch.datasets|math_tokens']),
    );
    const datasets = (run.panels as any[]).find((p) => p.id === 'datasets');
    expect(datasets.keys).toEqual(expect.arrayContaining(['batch.datasets|gsm8k', 'batch.datasets|math']));
    expect(datasets.keys).not.toContain('batch.datasets|gsm8k_tokens');
    const summed = await json(
      port,
      `/api/series?id=${TRAINING_RUN}&keys=batch.lag|lag_0,batch.lag|lag_1&sum=batch.lag|lag_0&width=1000`,
    );
    expect(summed.series['batch.lag|lag_0'].n).toBe(200);
    expect(new Set(summed.series['batch.lag|lag_0'].y)).toEqual(new Set([5]));
    expect(summed.series['batch.lag|lag_0'].x.slice(0, 3)).toEqual([1, 2, 3]);
    const raw = await json(port, `/api/series?id=${TRAINING_RUN}&keys=batch.lag|lag_0&width=1000`);
    expect(raw.series['batch.lag|lag_0'].n).toBe(400);
  });

  it('draws the pipeline timeline merged to pixels and the per-step breakdown', async () => {
    const t = await json(port, `/api/timeline?id=${TRAINING_RUN}&width=100`);
    const gen = (t.lanes as any[]).filter((l) => l.phase === 'generation');
    expect(gen.map((l) => l.lane).sort()).toEqual([
      'vllm.generate_single #0/0',
      'vllm.generate_single #0/1',
      'vllm.generate_single #1/0',
      'vllm.generate_single #1/1',
    ]);
    for (const l of t.lanes as any[]) expect(l.bars.length / 3).toBeLessThanOrEqual(101);
    // the last 10 steps: from the metrics marker of step 190 (ts 18.5 + 189 × 20) to the end
    const last = await json(port, `/api/timeline?id=${TRAINING_RUN}&width=100&last=10`);
    expect(last.from).toBeCloseTo(3798.5, 5);
    const bars = (last.lanes as any[]).find((l) => l.lane === 'forward_backward').bars;
    expect(bars.length / 3).toBe(10);
    const b = await json(port, `/api/breakdown?id=${TRAINING_RUN}`);
    expect(b.steps).toHaveLength(200);
    expect(b.phases.training[10]).toBeCloseTo(5, 5); // forward_backward 4 s + optim_step 1 s of a 20 s step
  });

  it('finds a step’s samples and rollouts, and a prompt’s, reading only those lines', async () => {
    const s = await json(port, `/api/samples?id=${TRAINING_RUN}&step=5`);
    expect(s.rollouts.map((r: any) => r.prompt_id).sort()).toEqual(['p5-0', 'p5-1']);
    expect(s.events.map((e: any) => `${e.event} ${e.prompt_id}`)).toEqual(['trained p5-0', 'trained p5-1']);
    const p = await json(port, `/api/samples?id=${TRAINING_RUN}&prompt=p7-1`);
    expect(p.rollouts).toHaveLength(1);
    expect(p.rollouts[0].completions).toEqual(['8', 'I do not know']);
    expect(p.events.map((e: any) => e.event)).toEqual(['buffered', 'trained']);
  });

  it('compares a sweep: every run on each panel, named by its overrides, eval tables with deltas to a baseline', async () => {
    const ids = [0, 1, 2, 3].map(sweepRun);
    const c = await json(
      port,
      `/api/compare?ids=${ids.join(',')}&keys=metrics|avg_reward,custom.probe|alpha&width=200`,
    );
    expect(Object.keys(c.series['metrics|avg_reward']).sort()).toEqual(ids);
    expect(c.labels[sweepRun(2)]).toBe('training.lr=0.000005');
    expect(c.sweeps[sweepRun(0)]).toBe(SWEEP_ID);
    const withBase = await json(
      port,
      `/api/compare?ids=${TRAINING_RUN},${sweepRun(0)}&keys=&baseline=${TRAINING_RUN}:step100`,
    );
    const rows = withBase.evalTable.rows as any[];
    expect(withBase.evalTable.baseline).toBe(`${TRAINING_RUN}:step100`);
    expect(rows.some((r) => r.cells.some((cell: any) => cell && typeof cell.delta === 'number'))).toBe(true);
  });

  it('names runs by the config keys that differ among them when no sweep tags are known', () => {
    const labels = overrideLabels([
      { id: 'a', config: 'training:\n  lr: 1e-6\n  beta: 0.01\nseed: 1\n' },
      { id: 'b', config: 'training:\n  lr: 2e-6\n  beta: 0.01\nseed: 1\n' },
    ]);
    expect(labels.get('a')).toBe('training.lr=0.000001');
    expect(labels.get('b')).toBe('training.lr=0.000002');
  });

  it('adds exactly the new points when a trace grows, and tells open pages', async () => {
    const id = sweepRun(0);
    const before = await json(
      port,
      `/api/series?id=${id}&keys=metrics|loss,span:vllm.generate_single|count&width=1000`,
    );
    expect(before.series['metrics|loss'].n).toBe(40);
    const events: string[] = [];
    const stream = http.get(
      { host: '127.0.0.1', port, path: '/api/events', headers: { host: `127.0.0.1:${port}` } },
      (res) => res.on('data', (d: Buffer) => events.push(d.toString())),
    );
    await new Promise((r) => setTimeout(r, 100));
    writeTrace(
      fx.sweepTraces[0],
      { steps: 3, batch: 4, bufferEvents: 6, firstStep: 41, rewardOffset: 0 },
      true,
    );
    live.check();
    await new Promise((r) => setTimeout(r, 100));
    stream.destroy();
    expect(events.join('')).toContain(`event: run\ndata: {"id":"${id}"}`);
    const after = await json(
      port,
      `/api/series?id=${id}&keys=metrics|loss,span:vllm.generate_single|count&width=1000`,
    );
    expect(after.series['metrics|loss'].n).toBe(43);
    expect(after.series['metrics|loss'].x.slice(-3)).toEqual([41, 42, 43]);
    expect(after.series['metrics|loss'].y.slice(-1)[0]).toBeCloseTo(1 / 43, 6);
    expect(after.series['span:vllm.generate_single|count'].n).toBe(43);
    const run = await json(port, `/api/run?id=${id}`);
    expect(run.index.lastUpdate.rebuilt).toBe(false);
  });
});

describe('dashboard safety', () => {
  it('binds 127.0.0.1 only', async () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.url).toBe(`http://127.0.0.1:${port}/`);
    const other = Object.values(os.networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    if (other) {
      await expect(
        new Promise((resolve, reject) => {
          const req = http.get({ host: other, port, path: '/api/jobs', timeout: 2000 }, resolve);
          req.on('error', reject);
        }),
      ).rejects.toThrow(/ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|timeout/);
    }
  });

  it.each([
    '/../../../../etc/passwd',
    '/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
    '/app.js/../../package.json',
    '/api/run?id=..',
    '/api/run?id=../../../../etc',
    '/api/run?id=%2e%2e%2f%2e%2e%2fetc',
    '/api/run?id=%2Fetc',
    '/api/run?id=.rlvr-index',
    `/api/run?id=${TRAINING_RUN}%2F..%2F..`,
    '/api/samples?id=..%2F..%2Fetc&prompt=x',
    '/api/series?id=..&keys=metrics|loss',
    '/api/run?id=outside-link',
    '/node_modules/uplot/package.json',
    '/lib/dashboard/server.ts',
  ])('refuses %s with a 4xx and nothing of the file', async (p) => {
    if (!fs.existsSync(path.join(fx.root, 'outside-link')))
      fs.symlinkSync(os.tmpdir(), path.join(fx.root, 'outside-link'));
    const r = await request(port, p);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.body).not.toMatch(/root:|"name": ?"rlvr-infra"|timingSafeEqual/);
  });

  it('answers only its own Host (no DNS rebinding)', async () => {
    const r = await request(port, '/api/jobs', { headers: { host: `evil.example:${port}` } });
    expect(r.status).toBe(421);
  });

  it('writes notes from the same origin only, to the local run folder', async () => {
    const put = (headers: Record<string, string>) =>
      request(port, `/api/notes?id=${TRAINING_RUN}`, {
        method: 'PUT',
        headers: { 'content-type': 'text/plain', ...headers },
        body: 'lr too high',
      });
    expect((await put({})).status).toBe(403);
    expect((await put({ origin: 'http://evil.example' })).status).toBe(403);
    expect((await put({ origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'cross-site' })).status).toBe(
      403,
    );
    expect(fs.existsSync(path.join(fx.root, TRAINING_RUN, 'NOTES.md'))).toBe(false);
    const ok = await put({ origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' });
    expect(ok.status).toBe(200);
    expect(fs.readFileSync(path.join(fx.root, TRAINING_RUN, 'NOTES.md'), 'utf8')).toBe('lr too high');
    expect(
      (
        await request(port, `/api/notes?id=..`, {
          method: 'PUT',
          headers: { origin: `http://127.0.0.1:${port}` },
          body: 'x',
        })
      ).status,
    ).toBe(404);
    expect((await request(port, `/api/jobs`, { method: 'POST', body: 'x' })).status).toBe(405);
  });

  it('writes notes under a fresh name, so a symlink planted at the temporary name is not followed', async () => {
    const dir = path.join(fx.root, TRAINING_RUN);
    const victim = path.join(os.tmpdir(), `rlvr-victim-${process.pid}`);
    fs.writeFileSync(victim, 'keep me');
    fs.symlinkSync(victim, path.join(dir, 'NOTES.md.tmp'));
    try {
      const r = await request(port, `/api/notes?id=${TRAINING_RUN}`, {
        method: 'PUT',
        headers: { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' },
        body: 'second thoughts',
      });
      expect(r.status).toBe(200);
      expect(fs.readFileSync(victim, 'utf8')).toBe('keep me');
      expect(fs.readFileSync(path.join(dir, 'NOTES.md'), 'utf8')).toBe('second thoughts');
      expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual(['NOTES.md.tmp']);
    } finally {
      fs.rmSync(path.join(dir, 'NOTES.md.tmp'));
      fs.rmSync(victim);
    }
  });

  it('shows no document that is a symlink out of the run folder, and a FIFO blocks nothing', async () => {
    const id = 'annotations-adhoc-20261127-000000';
    const dir = path.join(fx.root, id);
    fs.mkdirSync(path.join(dir, 'traces'), { recursive: true });
    writeTrace(path.join(dir, 'traces', 'trace.jsonl'), { steps: 3, batch: 2, bufferEvents: 2 });
    const secret = path.join(os.tmpdir(), `rlvr-secret-${process.pid}`);
    fs.writeFileSync(secret, 'aws_secret_access_key = hunter2\n');
    fs.symlinkSync(secret, path.join(dir, 'config.yaml'));
    fs.symlinkSync(secret, path.join(dir, 'traces', 'rollouts.jsonl'));
    execFileSync('mkfifo', [path.join(dir, 'RESULTS.md'), path.join(dir, 'traces', 'samples.jsonl')]);
    try {
      const run = await json(port, `/api/run?id=${id}`);
      expect(run.docs.config).toBeUndefined();
      expect(run.docs.results).toBeUndefined();
      expect(run.hasSamples).toBe(false);
      const samples = await json(port, `/api/samples?id=${id}&step=1`);
      expect(samples).toEqual({ rollouts: [], events: [], more: 0 });
      const jobs = await request(port, '/api/jobs');
      expect(jobs.status).toBe(200);
      expect(`${JSON.stringify(run)}${jobs.body}`).not.toContain('hunter2');
    } finally {
      fs.rmSync(dir, { recursive: true });
      fs.rmSync(secret);
    }
  });

  it('answers series named __proto__ or constructor like any unknown name', async () => {
    for (const keys of ['constructor', '__proto__', 'toString,hasOwnProperty']) {
      const r = await json(port, `/api/series?id=${TRAINING_RUN}&keys=${keys}`);
      expect(Object.keys(r.series).sort()).toEqual(keys.split(',').sort());
      for (const v of Object.values(r.series) as any[]) expect(v.n).toBe(0);
      const c = await json(port, `/api/compare?ids=${TRAINING_RUN}&keys=${keys}`);
      expect(Object.keys(c.series).sort()).toEqual(keys.split(',').sort());
    }
  });

  it('inlines a report’s data as JSON that trace text cannot break out of', () => {
    const data = { name: '</script><script>alert(1)</script>', note: '<!--<script>', ok: 'a<b' };
    const html = pageHtml({ inline: { assets: { js: '', css: '' }, data, title: 'r' } });
    const m = /<script id="rlvr-data" type="application\/json">([\s\S]*?)<\/script>/.exec(html);
    expect(m).not.toBeNull();
    expect(m![1]).not.toContain('<');
    expect(JSON.parse(m![1])).toEqual(data);
    expect(html.match(/<script/g)).toHaveLength(2);
  });

  it('sends a content security policy and no-sniff with every answer', async () => {
    const r = await request(port, '/');
    expect(r.status).toBe(200);
    expect(r.headers['content-security-policy']).toMatch(/default-src 'self'/);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.body).toContain('<script src="/app.js">');
    const js = await request(port, '/app.js');
    expect(js.status).toBe(200);
    // no CDN: the only URLs in the bundle are XML namespaces (uPlot's SVG)
    expect(
      js.body.match(/https?:\/\/[^"'\s)]*/g)?.filter((u) => !u.startsWith('http://www.w3.org/')) ?? [],
    ).toEqual([]);
  });

  it('refuses another host without a token, and with one requires it in every request', async () => {
    await expect(startServer({ data, host: '0.0.0.0', jobs: async () => ({}) })).rejects.toThrow(/--token/);
    const token = 'k3y-0123456789abcdef';
    const open = await startServer({
      data,
      host: '0.0.0.0',
      port: 0,
      token,
      jobs: async () => ({ jobs: [] }),
    });
    try {
      const get = (p: string, headers: Record<string, string> = {}) =>
        request(open.port, p, { headers: { host: `0.0.0.0:${open.port}`, ...headers } });
      expect((await get('/api/jobs')).status).toBe(401);
      expect((await get('/api/jobs', { authorization: 'Bearer wrong-token-000000' })).status).toBe(401);
      expect((await get('/api/jobs', { authorization: `Bearer ${token}` })).status).toBe(200);
      expect((await get(`/?token=${token}`)).status).toBe(200);
      // reached by the machine's name from another one: the token, not the Host, lets it in
      const named = { host: `gpu-box.internal:${open.port}`, authorization: `Bearer ${token}` };
      expect((await get('/api/jobs', named)).status).toBe(200);
      expect((await get('/api/jobs', { host: `gpu-box.internal:${open.port}` })).status).toBe(401);
      expect(open.url).toBe(`http://0.0.0.0:${open.port}/?token=${token}`);
    } finally {
      await open.close();
    }
  });
});
