import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { DashboardData } from '../../lib/dashboard/data';
import type { PasskAnswer, PasskCampaignAnswer } from '../../lib/dashboard/passk';
import { startServer, type DashboardServer } from '../../lib/dashboard/server';

/*
 * `/api/passk` over real HTTP on loopback, against a results folder of pass@k campaigns written here: a
 * run folder our job wrote (plan + passk/shard_<i>/), one with shards missing, their script's bare
 * output, a folder whose plan is not JSON, and a training run that is no campaign. The figures are
 * checked against the unbiased estimator worked by hand; the cache by counting the files opened.
 */

// the module object itself (not an import's copy of it): what lib/ calls through, so a spy sees its opens
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodeFs = require('node:fs') as typeof fs;

const record = (id: string, scores: number[]): string =>
  JSON.stringify({
    prompt_id: id,
    scores,
    num_correct: scores.filter((s) => s > 0).length,
    num_completions: scores.length,
    completions: scores.map((s) => ({ text: `answer ${s}`, score: s })),
  });

function plan(o: { dataset: string; n: number; label: string; shards: number }): string {
  return JSON.stringify({
    version: 1,
    campaign: {
      dataset: o.dataset,
      split: 'test',
      n: o.n,
      sampling: { temperature: '1.0' },
      model: { label: o.label, id: `org/${o.label}`, from: 'hub' },
      trainer: 'their-trainer',
    },
    campaignId: 'c0ffee',
    shards: Array.from({ length: o.shards }, (_, index) => ({ index, host: 0, gpu: index, argv: [] })),
    files: {
      shardFolder: 'shard_{shard}',
      results: 'verification_results.jsonl',
      completions: 'completions.jsonl',
      summary: 'summary.json',
    },
    model: { containerPath: '/opt/ml/model', modelPath: '/opt/ml/model' },
    resumeArgs: [],
    datasetCaches: [],
    importRoots: [],
  });
}

function shard(base: string, index: number, text: string): string {
  const dir = path.join(base, `shard_${index}`);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'verification_results.jsonl');
  fs.writeFileSync(file, text);
  return file;
}

let root: string;
let data: DashboardData;
let server: DashboardServer;
/** The shard file appended to in the cache test. */
let growing: string;

function get(p: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: server.port, path: p }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

async function passk(): Promise<PasskAnswer> {
  const r = await get('/api/passk');
  expect(r.status).toBe(200);
  return JSON.parse(r.body) as PasskAnswer;
}

const byId = (a: PasskAnswer, id: string): PasskCampaignAnswer => {
  const c = a.campaigns.find((x) => x.id === id);
  if (!c) throw new Error(`no campaign ${id} in ${a.campaigns.map((x) => x.id).join(', ')}`);
  return c;
};

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-passk-view-'));
  // our job's run folder: two shards; shard 1 stopped mid-write (its last line cut off)
  const a = path.join(root, 'passk-qwen-gsm8k');
  fs.mkdirSync(a);
  fs.writeFileSync(
    path.join(a, 'passk-plan.json'),
    plan({ dataset: 'gsm8k', n: 4, label: 'Qwen base', shards: 2 }),
  );
  shard(path.join(a, 'passk'), 0, `${record('p1', [0, 1, 0, 0])}\n${record('p2', [1, 1, 0, 0])}\n`);
  growing = shard(
    path.join(a, 'passk'),
    1,
    `${record('p3', [0, 0, 0, 0])}\n${record('p4', [0, 0, 1, 1]).slice(0, 40)}`,
  );
  // the same benchmark, another model, 3 shards planned and one written
  const b = path.join(root, 'passk-grpo-gsm8k');
  fs.mkdirSync(b);
  fs.writeFileSync(
    path.join(b, 'passk-plan.json'),
    plan({ dataset: 'gsm8k', n: 2, label: 'GRPO', shards: 3 }),
  );
  shard(path.join(b, 'passk'), 0, `${record('p1', [1, 0])}\n${record('p2', [1, 1])}\n`);
  // their script's output copied in as it is: shard folders, no plan
  shard(path.join(root, 'their-math-output'), 0, `${record('m1', [1, 0, 0, 0, 0, 0, 0, 0])}\n`);
  // a plan that is not JSON and no shards: listed with its problem
  fs.mkdirSync(path.join(root, 'passk-broken'));
  fs.writeFileSync(path.join(root, 'passk-broken', 'passk-plan.json'), '{"version": 1, "campaign": ');
  // a training run: no campaign
  fs.mkdirSync(path.join(root, 'train-run', 'traces'), { recursive: true });
  fs.writeFileSync(path.join(root, 'train-run', 'traces', 'trace.jsonl'), '');

  data = new DashboardData({ resultsDir: root });
  server = await startServer({ data, jobs: async () => ({ jobs: [] }) });
});

afterAll(async () => {
  await server.close();
  fs.rmSync(root, { recursive: true, force: true });
});

afterEach(() => jest.restoreAllMocks());

/** 1 − C(n−c, k)/C(n, k) by the binomials themselves (small n): the estimator's definition. */
function binom(n: number, k: number): number {
  let r = 1;
  for (let i = 0; i < k; i++) r = (r * (n - i)) / (i + 1);
  return k > n ? 0 : r;
}
const definition = (n: number, c: number, k: number): number => 1 - binom(n - c, k) / binom(n, k);

describe('/api/passk', () => {
  it('lists the campaigns of the results folder, and only those', async () => {
    const a = await passk();
    expect(a.campaigns.map((c) => c.id).sort()).toEqual([
      'passk-broken',
      'passk-grpo-gsm8k',
      'passk-qwen-gsm8k',
      'their-math-output',
    ]);
  });

  it('answers the unbiased estimator for hand-checked (n, c), and their first-k figure', async () => {
    const q = byId(await passk(), 'passk-qwen-gsm8k');
    expect(q).toMatchObject({
      layout: 'run',
      benchmark: 'gsm8k/test',
      dataset: 'gsm8k',
      split: 'test',
      model: 'Qwen base',
      modelId: 'org/Qwen base',
      n: 4,
      prompts: 3,
      shardsRead: [0, 1],
      shardsExpected: 2,
      missingShards: [],
    });
    // prompts (n=4): c = 1, 2, 0. By hand: pass@1 = mean(1/4, 2/4, 0) = 1/4;
    // pass@2 = mean(1 − C(3,2)/C(4,2), 1 − C(2,2)/C(4,2), 0) = mean(1/2, 5/6, 0) = 4/9; pass@4 = mean(1, 1, 0)
    expect(q.passAtK.map((p) => p.k)).toEqual([1, 2, 4]);
    expect(q.passAtK[0].unbiased).toBeCloseTo(1 / 4, 12);
    expect(q.passAtK[1].unbiased).toBeCloseTo(4 / 9, 12);
    expect(q.passAtK[2].unbiased).toBeCloseTo(2 / 3, 12);
    expect(definition(4, 1, 2)).toBeCloseTo(1 / 2, 12);
    expect(definition(4, 2, 2)).toBeCloseTo(5 / 6, 12);
    // first correct at index 1, 0, none: among the first 1 → 1 prompt of 3; first 2 → 2 of 3
    expect(q.passAtK.map((p) => p.firstK)).toEqual([1 / 3, 2 / 3, 2 / 3]);
    expect(q.passAtK.every((p) => p.prompts === 3)).toBe(true);

    const g = byId(await passk(), 'passk-grpo-gsm8k');
    // n=2: c = 1, 2 → pass@1 = 3/4; pass@2 = mean(1 − C(1,2)/C(2,2), 1) = 1
    expect(g.passAtK.map((p) => [p.k, p.unbiased])).toEqual([
      [1, 0.75],
      [2, 1],
    ]);
    expect(g.passAtK[0].unbiased).toBeCloseTo((definition(2, 1, 1) + definition(2, 2, 1)) / 2, 12);
  });

  it('counts a cut-off last line as a bad line, not an error', async () => {
    const q = byId(await passk(), 'passk-qwen-gsm8k');
    expect(q.badLines).toBe(1);
    expect(q.badLineExamples[0]).toMatchObject({ shard: 1, line: 2 });
    expect(q.badLineExamples[0].why).toMatch(/^cut off/);
    expect(q.problems.join('\n')).toMatch(/1 bad line/);
  });

  it('names missing shards, reads a bare folder, and lists a malformed folder with its problem', async () => {
    const a = await passk();
    const g = byId(a, 'passk-grpo-gsm8k');
    expect(g).toMatchObject({
      model: 'GRPO',
      n: 2,
      shardsRead: [0],
      shardsExpected: 3,
      missingShards: [1, 2],
    });
    expect(g.problems.join('\n')).toMatch(/missing shards 1, 2 of 3/);

    const bare = byId(a, 'their-math-output');
    expect(bare).toMatchObject({
      layout: 'bare',
      dataset: null,
      model: 'their-math-output',
      n: 8,
      prompts: 1,
    });
    expect(bare.shardsExpected).toBeNull();
    expect(bare.passAtK.map((p) => p.k)).toEqual([1, 2, 4, 8]);
    expect(bare.passAtK[1].unbiased).toBeCloseTo(definition(8, 1, 2), 12);

    const broken = byId(a, 'passk-broken');
    expect(broken.passAtK).toEqual([]);
    expect(broken.problems.join('\n')).toMatch(/passk-plan\.json is not a pass@k plan/);
  });

  it('reads no file again when nothing changed, and only the changed campaign when one grew', async () => {
    await passk();
    const readsBefore = data.passkCampaigns.reads;
    const opened: string[] = [];
    const real = nodeFs.openSync;
    jest.spyOn(nodeFs, 'openSync').mockImplementation(((file: fs.PathLike, ...rest: unknown[]) => {
      opened.push(String(file));
      return (real as (...a: unknown[]) => number)(file, ...rest);
    }) as typeof fs.openSync);

    const again = await passk();
    expect(opened.filter((f) => f.startsWith(root))).toEqual([]);
    expect(data.passkCampaigns.reads).toBe(readsBefore);
    expect(byId(again, 'passk-qwen-gsm8k').prompts).toBe(3);

    // the cut-off record finished: that campaign is read again (and it alone), its new prompt counted
    fs.writeFileSync(
      growing,
      `${record('p3', [0, 0, 0, 0])}\n${record('p4', [0, 0, 1, 1])}\n${record('p5', [1, 1, 1, 1])}\n`,
    );
    const grown = await passk();
    expect(data.passkCampaigns.reads).toBe(readsBefore + 1);
    const q = byId(grown, 'passk-qwen-gsm8k');
    expect(q.prompts).toBe(5);
    expect(q.badLines).toBe(0);
    expect(opened.filter((f) => f.startsWith(root)).every((f) => f.includes('passk-qwen-gsm8k'))).toBe(true);
    expect(opened.some((f) => f === growing)).toBe(true);
  });

  it('lists a campaign whose shard holds no record with its problems, never a 500', async () => {
    const blocked = path.join(root, 'passk-garbage');
    fs.mkdirSync(path.join(blocked, 'passk', 'shard_0'), { recursive: true });
    fs.writeFileSync(
      path.join(blocked, 'passk-plan.json'),
      plan({ dataset: 'math', n: 4, label: 'X', shards: 1 }),
    );
    fs.writeFileSync(
      path.join(blocked, 'passk', 'shard_0', 'verification_results.jsonl'),
      '\u0000\u0001garbage\n',
    );
    try {
      const r = await get('/api/passk');
      expect(r.status).toBe(200);
      const c = byId(JSON.parse(r.body) as PasskAnswer, 'passk-garbage');
      expect(c.badLines).toBe(1);
      expect(c.prompts).toBe(0);
      expect(c.problems.join('\n')).toMatch(/no result lines yet/);
    } finally {
      fs.rmSync(blocked, { recursive: true, force: true });
    }
  });
});
