/*
 * `/api/passk` on campaign folders anyone could have written: the same bounded merge as `passk results`
 * (counts no campaign has are bad lines, not seconds of work), a plan naming paths outside its run folder
 * is listed as unreadable with why, and unequal n across prompts is among the problems.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { DashboardData } from '../../lib/dashboard/data';
import type { PasskAnswer, PasskCampaignAnswer } from '../../lib/dashboard/passk';
import { startServer, type DashboardServer } from '../../lib/dashboard/server';
import { tempDir } from '../helpers/fixtures';
import { passkPlan } from '../helpers/passk';

let server: DashboardServer;
let root: string;

function shard(base: string, index: number, lines: readonly string[]): void {
  fs.mkdirSync(path.join(base, `shard_${index}`), { recursive: true });
  fs.writeFileSync(
    path.join(base, `shard_${index}`, 'verification_results.jsonl'),
    lines.map((l) => `${l}\n`).join(''),
  );
}

function get(p: string): Promise<{ status: number; body: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: server.port, path: p }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: Date.now() - started }));
      })
      .on('error', reject);
  });
}

function byId(a: PasskAnswer, id: string): PasskCampaignAnswer {
  const c = a.campaigns.find((x) => x.id === id);
  if (!c) throw new Error(`no campaign ${id}`);
  return c;
}

beforeAll(async () => {
  const top = tempDir('rlvr-passk-hardening-');
  root = path.join(top, 'results');
  // three lines with counts no campaign has, beside one that is fine
  shard(path.join(root, 'huge-counts'), 0, [
    '{"prompt_id":"x1","num_completions":200000000,"num_correct":100000000}',
    '{"prompt_id":"x2","num_completions":200000000,"num_correct":100000000}',
    '{"prompt_id":"x3","num_completions":200000000,"num_correct":100000000}',
    '{"prompt_id":"ok","scores":[1,0,0,0]}',
  ]);
  // a plan that sends the reader up out of its run folder
  const escape = path.join(root, 'escaping-plan');
  fs.mkdirSync(path.join(escape, 'passk', 'shard_0'), { recursive: true });
  const plan = passkPlan(1);
  fs.writeFileSync(
    path.join(escape, 'passk-plan.json'),
    JSON.stringify({
      ...plan,
      files: { ...plan.files, results: '../../../../elsewhere/shard_3/verification_results.jsonl' },
    }),
  );
  // beside the results folder (so no campaign of its own), where that path lands
  shard(path.join(top, 'elsewhere'), 3, ['{"prompt_id":"outside-secret","scores":[1,1]}']);
  // n differs across prompts
  shard(path.join(root, 'unequal-n'), 0, [
    '{"prompt_id":"a","scores":[1]}',
    '{"prompt_id":"b","scores":[0,0,0,0]}',
  ]);
  server = await startServer({
    data: new DashboardData({ resultsDir: root }),
    jobs: async () => ({ jobs: [] }),
  });
});

afterAll(async () => {
  await server.close();
});

describe('/api/passk hardening', () => {
  it('three lines with counts no campaign has cost no seconds: bad lines with where', async () => {
    const r = await get('/api/passk');
    expect(r.status).toBe(200);
    expect(r.ms).toBeLessThan(2000);
    const c = byId(JSON.parse(r.body) as PasskAnswer, 'huge-counts');
    expect(c.prompts).toBe(1);
    expect(c.badLines).toBe(3);
    expect(c.badLineExamples.map((b) => [b.shard, b.line])).toEqual([
      [0, 1],
      [0, 2],
      [0, 3],
    ]);
    expect(c.passAtK.map((p) => p.k)).toEqual([1, 2, 4]);
  });

  it('a plan naming a path outside its run folder: listed with why, nothing outside read', async () => {
    const r = await get('/api/passk');
    const c = byId(JSON.parse(r.body) as PasskAnswer, 'escaping-plan');
    expect(c.prompts).toBe(0);
    expect(c.problems.join('\n')).toMatch(/passk-plan\.json.*outside the run folder/);
  });

  it('unequal n across prompts is among the problems, naming the k of fewer prompts', async () => {
    const c = byId(JSON.parse((await get('/api/passk')).body) as PasskAnswer, 'unequal-n');
    expect(c.problems.join('\n')).toMatch(/n differs across prompts \(1–4\).*pass@2 and pass@4/);
  });

  it('guard: the campaign read whole (no problem of n) has none of these', async () => {
    const c = byId(JSON.parse((await get('/api/passk')).body) as PasskAnswer, 'huge-counts');
    expect(c.problems.join('\n')).not.toMatch(/differs|outside/);
  });
});
