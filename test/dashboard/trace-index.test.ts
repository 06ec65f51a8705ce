import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TraceScanner, type ScanSink } from '../../lib/dashboard/scan';
import { indexDirOf, openIndex, updateIndex } from '../../lib/dashboard/trace-index';
import { MAX_LINE } from '../../lib/util/line-blocks';
import { downsample, seriesOn, stepBreakdown, stepTable, sumByX } from '../../lib/dashboard/query';
import { DashboardData } from '../../lib/dashboard/data';
import { lookupSamples } from '../../lib/dashboard/samples';
import { pyJson, traceLines, writeTrace } from '../helpers/traces';

function recorder(): { sink: ScanSink; out: string[] } {
  const out: string[] = [];
  const sink: ScanSink = {
    value: (n, f, ts, v) => out.push(`v ${n}|${f} ${ts} ${v}`),
    span: (n, ts, dur, g, s) => out.push(`s ${n} ${ts} ${dur} ${g} ${s}`),
    instant: (n, ts) => out.push(`i ${n} ${ts}`),
    meta: (m) => out.push(`m ${JSON.stringify(m)}`),
    step: (ts, step) => out.push(`step ${ts} ${step}`),
    fates: (f) => out.push(`f ${JSON.stringify(f)}`),
    badLine: () => out.push('bad'),
    histogram: (n, bin, c) => out.push(`h ${n} ${bin} ${c}`),
  };
  return { sink, out };
}

function scanText(text: string): string[] {
  const { sink, out } = recorder();
  const scanner = new TraceScanner(sink);
  const buf = Buffer.from(text);
  scanner.scan(buf, 0, buf.length - 1);
  scanner.finish();
  return out;
}

const tmp = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-ix-'));

describe('the trace scanner', () => {
  const lines = [...traceLines({ steps: 3, batch: 4, bufferEvents: 5 })];

  it('reads tracer.py lines in place and agrees with JSON.parse of the same events', () => {
    const fast = scanText(lines.join(''));
    // The same events in another spacing take the JSON.parse path throughout.
    const slow = scanText(lines.map((l) => `${JSON.stringify(JSON.parse(l))}\n`).join(''));
    expect(fast).toEqual(slow);
    expect(fast).toContain('v metrics|loss 57.5 0.5');
    expect(fast.filter((l) => l.startsWith('s vllm.generate_single')).length).toBe(12);
    expect(fast).toContain('s vllm.generate_single 0.5 6 0 0');
    expect(fast.filter((l) => l === 'bad')).toEqual([]);
  });

  it('turns any numeric counter field into a series: unknown names, arrays as quantiles, string arrays as counts, dicts dotted', () => {
    const out = scanText(
      [
        pyJson({ type: 'counter', name: 'my.new_counter', ts: 1, a: 2, ok: true, s: 'text', n: null }),
        pyJson({
          type: 'counter',
          name: 'lens',
          ts: 2,
          xs: [1, 2, 3, 4],
          ds: ['a', 'b', 'a'],
          d: { x: { y: 5 } },
        }),
        pyJson({ type: 'counter', name: 'metrics', ts: 3, loss: NaN }).replace('null', 'NaN'),
      ].join('\n') + '\n',
    );
    expect(out).toEqual(
      expect.arrayContaining([
        'v my.new_counter|a 1 2',
        'v my.new_counter|ok 1 1',
        'v lens|xs:n 2 4',
        'v lens|xs:mean 2 2.5',
        'v lens|xs:p50 2 2',
        'v lens|xs:max 2 4',
        'v lens|ds=a 2 2',
        'v lens|ds=b 2 1',
        'v lens|d.x.y 2 5',
        'v metrics|loss 3 NaN',
      ]),
    );
    expect(out.some((l) => l.includes('|s '))).toBe(false);
  });

  it('splits completion lengths by correctness and counts samples and tokens per dataset', () => {
    const out = scanText(
      `${pyJson({ type: 'counter', name: 'batch.reward_vs_len', ts: 5, rewards: [1, 0, 1, 0], completion_lens: [10, 100, 30, 300], datasets: ['g', 'g', 'm', 'm'], step: 7 })}\n`,
    );
    expect(out).toEqual(
      expect.arrayContaining([
        'step 5 7',
        'v batch.reward_vs_len|len_correct:p50 5 10',
        'v batch.reward_vs_len|len_correct:max 5 30',
        'v batch.reward_vs_len|len_wrong:p90 5 300',
        'v batch.reward_vs_len|dataset=g:samples 5 2',
        'v batch.reward_vs_len|dataset=m:tokens 5 330',
        'v batch.reward_vs_len|dataset=m:reward_mean 5 0.5',
        'h len_correct 0 1',
        'h len_wrong 100 1',
        'h len_wrong 300 1',
      ]),
    );
  });

  it('keeps the buffer by age at most once per second, and the fates of the last event', () => {
    const buffer = (ts: number, size: number, byVersion: Record<string, number>, used: number): string =>
      pyJson({ type: 'buffer', ts, size, by_version: byVersion, fates: { used: { '0': used }, wasted: {} } });
    const out = scanText(
      [
        buffer(0.1, 1, { '0': 1 }, 0),
        buffer(0.5, 2, { '0': 1, '1': 1 }, 1),
        buffer(1.2, 3, { '0': 1, '3': 2 }, 2),
      ].join('\n') + '\n',
    );
    expect(out.filter((l) => l.startsWith('v buffer|size'))).toEqual([
      'v buffer|size 0.1 1',
      'v buffer|size 0.5 2',
      'v buffer|size 1.2 3',
    ]);
    // second 0: its last event (ts 0.5); second 1: ts 1.2 (version 0 is 3 behind the newest, 3)
    expect(out.filter((l) => l.startsWith('v buffer|age'))).toEqual([
      'v buffer|age=0 0.5 1',
      'v buffer|age=1 0.5 1',
      'v buffer|age=2 0.5 0',
      'v buffer|age>=3 0.5 0',
      'v buffer|age=0 1.2 2',
      'v buffer|age=1 1.2 0',
      'v buffer|age=2 1.2 0',
      'v buffer|age>=3 1.2 1',
    ]);
    expect(out.filter((l) => l.startsWith('f '))).toEqual(['f {"used":{"0":2},"wasted":{}}']);
  });

  it('counts a line that is not JSON as unreadable and goes on', () => {
    const out = scanText(
      `{"type": "counter", "name": "metrics", "ts": 1, "loss": 2}\nnot json\n{"type": "counter", "name": "metrics", "ts": 2, "loss": 1}\n`,
    );
    expect(out).toEqual(['v metrics|loss 1 2', 'bad', 'v metrics|loss 2 1']);
  });

  it('reads names with escapes through JSON.parse', () => {
    const out = scanText(`{"type": "counter", "name": "a\\"b", "ts": 1, "x\\u00e9": 2}\n`);
    expect(out).toEqual(['v a"b|xé 1 2']);
  });
});

/** A 3-step trace, indexed: its folder, the index folder and the manifest as written. */
interface Manifest {
  series: Record<string, { file: string }>;
}

async function indexedTrace(): Promise<{ dir: string; trace: string; ixDir: string; m: Manifest }> {
  const dir = tmp();
  const trace = path.join(dir, 'trace.jsonl');
  writeTrace(trace, { steps: 3, batch: 2, bufferEvents: 2 });
  await updateIndex(trace);
  const ixDir = indexDirOf(trace);
  const m = JSON.parse(fs.readFileSync(path.join(ixDir, 'index.json'), 'utf8')) as Manifest;
  return { dir, trace, ixDir, m };
}

/** One more step appended to indexedTrace's trace. */
const growByOneStep = (trace: string): number =>
  writeTrace(trace, { steps: 1, batch: 2, bufferEvents: 2, firstStep: 4 }, true);

describe('the column store', () => {
  it('indexes a trace, reopens it without reading it, and on growth parses only the appended bytes', async () => {
    const dir = tmp();
    const trace = path.join(dir, 'trace.jsonl');
    const size1 = writeTrace(trace, { steps: 30, batch: 4, bufferEvents: 6 });
    const first = await updateIndex(trace);
    expect(first).toMatchObject({ bytesRead: size1, rebuilt: true });
    expect(fs.existsSync(path.join(dir, '.rlvr-index', 'trace.jsonl', 'index.json'))).toBe(true);

    const again = await updateIndex(trace);
    expect(again).toEqual({ bytesRead: 0, linesAdded: 0, rebuilt: false });

    const { index: before } = await openIndex(trace);
    const lossBefore = before.column('series', 'metrics|loss').length / 2;
    const spansBefore = before.column('spans', 'vllm.generate_single').length / 4;
    const size2 = writeTrace(trace, { steps: 5, batch: 4, bufferEvents: 6, firstStep: 31 }, true);
    const grown = await updateIndex(trace);
    // the appended bytes, and the 64 bytes before them that prove the old part is unchanged
    expect(grown.bytesRead).toBe(size2 - size1 + 64);
    expect(grown.rebuilt).toBe(false);
    const { index } = await openIndex(trace);
    const loss = index.column('series', 'metrics|loss');
    expect(loss.length / 2 - lossBefore).toBe(5);
    expect(index.column('spans', 'vllm.generate_single').length / 4 - spansBefore).toBe(20);
    const table = stepTable(index);
    const { x, y } = seriesOn(index, 'metrics|loss', 'step', table);
    expect(Array.from(x)).toEqual(Array.from({ length: 35 }, (_, i) => i + 1));
    expect(y[34]).toBeCloseTo(1 / 35, 6);
  });

  it('waits for a line still being written, and indexes anew a trace that was rewritten', async () => {
    const dir = tmp();
    const trace = path.join(dir, 'trace.jsonl');
    fs.writeFileSync(
      trace,
      '{"type": "counter", "name": "metrics", "ts": 1, "loss": 2}\n{"type": "counter", "name": "met',
    );
    await updateIndex(trace);
    let { index } = await openIndex(trace);
    expect(Array.from(index.column('series', 'metrics|loss'))).toEqual([1, 2]);
    expect(index.manifest.badLines).toBe(0);
    fs.appendFileSync(trace, 'rics", "ts": 2, "loss": 1}\n');
    ({ index } = await openIndex(trace));
    expect(Array.from(index.column('series', 'metrics|loss'))).toEqual([1, 2, 2, 1]);
    // A restarted trainer truncates its trace (tracer.py opens it with "w").
    fs.writeFileSync(trace, '{"type": "counter", "name": "metrics", "ts": 9, "loss": 7}\n');
    const stats = await updateIndex(trace);
    expect(stats.rebuilt).toBe(true);
    ({ index } = await openIndex(trace));
    expect(Array.from(index.column('series', 'metrics|loss'))).toEqual([9, 7]);
  });

  it('cuts columns back to what index.json names after a crash between the appends and the manifest', async () => {
    const { trace, ixDir, m } = await indexedTrace();
    const col = path.join(ixDir, m.series['metrics|loss'].file);
    fs.appendFileSync(col, Buffer.alloc(16, 7)); // a half-done append of a later update
    growByOneStep(trace);
    const { index } = await openIndex(trace);
    const loss = index.column('series', 'metrics|loss');
    expect(loss.length).toBe(8);
    expect(loss[7]).toBeCloseTo(0.25, 6);
  });
});

describe('an index or a trace not to be trusted', () => {
  const line = (o: Record<string, unknown>) => `${JSON.stringify(o)}\n`;

  it('builds anew an index whose manifest names a column outside its folder, and touches nothing there', async () => {
    const { dir, trace, ixDir, m } = await indexedTrace();
    const victim = path.join(dir, 'victim.f64');
    fs.writeFileSync(victim, 'keep me');
    m.series['metrics|loss'].file = '../../victim.f64';
    fs.writeFileSync(path.join(ixDir, 'index.json'), JSON.stringify(m));
    growByOneStep(trace);
    const stats = await updateIndex(trace);
    expect(stats.rebuilt).toBe(true);
    expect(fs.readFileSync(victim, 'utf8')).toBe('keep me');
    const { index } = await openIndex(trace);
    expect(index.column('series', 'metrics|loss').length).toBe(8);
    expect(index.manifest.series['metrics|loss'].file).toMatch(/^s\d+\.f64$/);
  });

  it('does not write through a symlink in place of a column or of the index folder', async () => {
    const { dir, trace, ixDir, m } = await indexedTrace();
    const victim = path.join(dir, 'victim.bin');
    fs.writeFileSync(victim, 'keep me');
    const col = path.join(ixDir, m.series['metrics|loss'].file);
    fs.rmSync(col);
    fs.symlinkSync(victim, col);
    growByOneStep(trace);
    expect((await updateIndex(trace)).rebuilt).toBe(true);
    expect(fs.readFileSync(victim, 'utf8')).toBe('keep me');
    expect(fs.lstatSync(col).isSymbolicLink()).toBe(false);

    // the whole index folder a symlink to another folder: replaced by a real one, the other left alone
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-elsewhere-'));
    fs.rmSync(ixDir, { recursive: true });
    fs.symlinkSync(elsewhere, ixDir);
    await updateIndex(trace);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    expect(fs.lstatSync(ixDir).isDirectory()).toBe(true);
    const { index } = await openIndex(trace);
    expect(index.column('series', 'metrics|loss').length).toBe(8);
  });

  it('keeps counters and spans named __proto__ or constructor as names like any other', async () => {
    const dir = tmp();
    const trace = path.join(dir, 'trace.jsonl');
    fs.writeFileSync(
      trace,
      line({ type: 'counter', name: '__proto__', ts: 1, constructor: 3, polluted: 1 }) +
        line({ type: 'counter', name: 'constructor', ts: 2, __proto__x: 1, toString: 5 }) +
        line({ type: 'span', name: '__proto__', ts: 1, dur: 2 }) +
        line({ type: 'meta', ts: 0, ['__proto__']: { polluted: 1 } }),
    );
    let { index } = await openIndex(trace);
    // read back from index.json (not the in-memory manifest)
    ({ index } = await openIndex(trace));
    expect(index.keys('series').sort()).toEqual([
      '__proto__|constructor',
      '__proto__|polluted',
      'constructor|__proto__x',
      'constructor|toString',
    ]);
    expect(Array.from(index.column('series', '__proto__|constructor'))).toEqual([1, 3]);
    expect(index.column('spans', '__proto__').length).toBe(4);
    expect(index.column('series', 'constructor').length).toBe(0);
    expect(index.column('series', 'toString').length).toBe(0);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'n')).toBe(false);
  });

  it('passes over a line longer than MAX_LINE without holding it, and reads on after it', async () => {
    const dir = tmp();
    const trace = path.join(dir, 'trace.jsonl');
    const fd = fs.openSync(trace, 'w');
    fs.writeSync(fd, line({ type: 'counter', name: 'metrics', ts: 1, loss: 2 }));
    const junk = Buffer.alloc(8 * 1024 * 1024, 0x61);
    for (let n = 0; n <= MAX_LINE; n += junk.length) fs.writeSync(fd, junk);
    fs.closeSync(fd);
    // still being written: nothing of it counted yet
    let { index } = await openIndex(trace);
    expect(Array.from(index.column('series', 'metrics|loss'))).toEqual([1, 2]);
    expect(index.manifest.badLines).toBe(0);
    fs.appendFileSync(trace, `\n${line({ type: 'counter', name: 'metrics', ts: 2, loss: 1 })}`);
    ({ index } = await openIndex(trace));
    expect(Array.from(index.column('series', 'metrics|loss'))).toEqual([1, 2, 2, 1]);
    expect(index.manifest.badLines).toBe(1);
    fs.rmSync(dir, { recursive: true });
  });

  it('indexes samples anew when a restarted trainer rewrote the file (opened "w") and it grew past the old end', () => {
    const dir = tmp();
    const rollouts = path.join(dir, 'rollouts.jsonl');
    const files = { samples: undefined, rollouts, indexDir: path.join(dir, 'ix') };
    const rollout = (p: string, chars: number) =>
      line({ prompt_id: p, completions: ['x'.repeat(chars)], generated_at_version: 0 });
    fs.writeFileSync(rollouts, rollout('a', 60) + rollout('b', 60));
    const oldEnd = fs.statSync(rollouts).size;
    expect(lookupSamples(files, { prompt: 'b' }).rollouts).toHaveLength(1);
    // the new run's second line spans the old end: read on from there, it would be lost
    fs.writeFileSync(rollouts, rollout('c', 10) + rollout('d', 300) + rollout('e', 10));
    expect(rollout('c', 10).length).toBeLessThan(oldEnd);
    expect(rollout('c', 10).length + rollout('d', 300).length).toBeGreaterThan(oldEnd);
    expect(lookupSamples(files, { prompt: 'b' }).rollouts).toEqual([]);
    expect(lookupSamples(files, { prompt: 'd' }).rollouts.map((r) => r.prompt_id)).toEqual(['d']);
    expect(lookupSamples(files, { prompt: 'c' }).rollouts.map((r) => r.prompt_id)).toEqual(['c']);
    fs.rmSync(dir, { recursive: true });
  });

  it('looks samples up past a completion line longer than MAX_LINE, never reading it', () => {
    const dir = tmp();
    const rollouts = path.join(dir, 'rollouts.jsonl');
    const fd = fs.openSync(rollouts, 'w');
    fs.writeSync(fd, line({ prompt_id: 'a', generated_at_version: 0 }));
    fs.writeSync(fd, '{"prompt_id": "huge", "completions": ["');
    const junk = Buffer.alloc(8 * 1024 * 1024, 0x61);
    for (let n = 0; n <= MAX_LINE; n += junk.length) fs.writeSync(fd, junk);
    fs.writeSync(fd, `"]}\n${line({ prompt_id: 'b', generated_at_version: 1 })}`);
    fs.closeSync(fd);
    const files = { samples: undefined, rollouts, indexDir: path.join(dir, 'ix') };
    expect(lookupSamples(files, { prompt: 'b' }).rollouts).toEqual([
      { prompt_id: 'b', generated_at_version: 1 },
    ]);
    expect(lookupSamples(files, { prompt: 'huge' }).rollouts).toEqual([]);
    expect(lookupSamples(files, { step: 1 }).rollouts.map((r) => r.prompt_id)).toEqual(['a']);
    fs.rmSync(dir, { recursive: true });
  });
});

describe('queries', () => {
  it('downsamples to at most two points per pixel column, keeping each column’s min and max', () => {
    const n = 100_000;
    const x = Float64Array.from({ length: n }, (_, i) => i);
    const y = Float64Array.from({ length: n }, (_, i) => Math.sin(i / 100));
    y[54_321] = 50; // a spike
    y[12_345] = -50;
    const d = downsample(x, y, 200, 0, n - 1);
    expect(d.n).toBe(n);
    expect(d.x.length).toBeLessThanOrEqual(400);
    expect(Math.max(...d.y)).toBe(50);
    expect(Math.min(...d.y)).toBe(-50);
    expect(d.x).toEqual([...d.x].sort((a, b) => a - b));
    const window = downsample(x, y, 10, 1000, 1010);
    expect(window.n).toBe(11);
  });

  it('places a counter that carries its own step at that step, and adds up several records of one step', async () => {
    const dir = tmp();
    const trace = path.join(dir, 'trace.jsonl');
    const lines = [
      ...[10, 20, 30].map((ts, i) => pyJson({ type: 'counter', name: 'metrics', ts, loss: i })),
      pyJson({ type: 'counter', name: 'batch.lag', ts: 25, trained_at_step: 7, lag_0: 3 }),
      pyJson({ type: 'counter', name: 'batch.lag', ts: 26, trained_at_step: 7, lag_0: 2, lag_1: 1 }),
      pyJson({ type: 'counter', name: 'batch.lag', ts: 27, trained_at_step: 8, lag_0: 4 }),
    ];
    fs.writeFileSync(trace, `${lines.join('\n')}\n`);
    const { index } = await openIndex(trace);
    const table = stepTable(index);
    const lag = seriesOn(index, 'batch.lag|lag_0', 'step', table);
    expect(Array.from(lag.x)).toEqual([7, 7, 8]);
    expect(sumByX(lag)).toEqual({ x: Float64Array.from([7, 8]), y: Float64Array.from([5, 4]) });
    // the same records counted from the markers would all be step 3
    expect(Array.from(seriesOn(index, 'metrics|loss', 'step', table).x)).toEqual([1, 2, 3]);
    expect(Array.from(seriesOn(index, 'batch.lag|lag_0', 'time', table).x)).toEqual([25, 26, 27]);
  });

  it('says where each step’s time went and how long the trainer and the rollout lanes sat idle', async () => {
    const dir = tmp();
    const trace = path.join(dir, 'trace.jsonl');
    writeTrace(trace, { steps: 4, batch: 4, bufferEvents: 4, stepSeconds: 10 });
    const { index } = await openIndex(trace);
    const b = stepBreakdown(index, stepTable(index));
    expect(b.steps).toEqual([1, 2, 3, 4]);
    // steps 2–4 run from one metrics counter to the next: 10 s each
    expect(b.duration.slice(1)).toEqual([10, 10, 10]);
    // training: forward_backward 2 s + optim_step 0.5 s; reference 1 s; sync 0.4 s (traces.ts)
    expect(b.phases.training[2]).toBeCloseTo(2.5, 5);
    expect(b.phases.reference[2]).toBeCloseTo(1, 5);
    expect(b.phases.sync[2]).toBeCloseTo(0.4, 5);
    expect(b.trainerIdle[2]).toBeCloseTo(10 - 3.9, 5);
    expect(b.rolloutIdle[2]).toBeGreaterThan(0);
  });
});

describe('runs held open', () => {
  it('keeps at most 48 runs’ columns in memory, letting the least recently used go', async () => {
    const root = tmp();
    for (let i = 0; i < 50; i++) {
      const dir = path.join(root, `run-${String(i).padStart(2, '0')}`, 'traces');
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(
        path.join(dir, 'trace.jsonl'),
        `{"type": "counter", "name": "metrics", "ts": 1, "loss": ${i}}\n`,
      );
    }
    const data = new DashboardData({ resultsDir: root });
    for (let i = 0; i < 50; i++) {
      const run = await data.run(`run-${String(i).padStart(2, '0')}`);
      expect(run.lastValues).toEqual({ reward: undefined, loss: i });
    }
    expect(data.openRuns).toBe(48);
    // the first runs were let go and open again on demand
    expect((await data.run('run-00')).lastValues).toEqual({ reward: undefined, loss: 0 });
    expect(data.openRuns).toBe(48);
    fs.rmSync(root, { recursive: true });
  });
});
