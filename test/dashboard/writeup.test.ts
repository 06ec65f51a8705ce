import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeupAnswer } from '../../lib/dashboard/writeup';
import { readWriteupSpec } from '../../lib/dashboard/writeup-spec';
import { ProblemsError } from '../../lib/errors';
import { lineOf, REPO_ROOT, tempDir } from '../helpers/fixtures';
import { writeTrace } from '../helpers/traces';

/*
 * The writeup spec (their generate_staleness_plots.py spec, plus run:/passk:) and the data the page is
 * drawn from: runs with traces, our watcher's eval summary and their per-benchmark summaries, pass@k
 * folders in both layouts, a base model in their evals layout.
 */

const WATCHER = path.join(REPO_ROOT, 'test/fixtures/eval-results/training-run/evals');

/** One prompt's record as their eval_pass_at_k.py writes it (scores in completion order). */
function passkLine(id: string, scores: number[]): string {
  const c = scores.filter((s) => s > 0).length;
  return JSON.stringify({
    prompt_id: id,
    num_completions: scores.length,
    num_correct: c,
    pass_rate: c / scores.length,
    scores,
  });
}

function writeShards(dir: string, shards: string[][]): void {
  shards.forEach((lines, i) => {
    fs.mkdirSync(path.join(dir, `shard_${i}`), { recursive: true });
    fs.writeFileSync(path.join(dir, `shard_${i}`, 'verification_results.jsonl'), `${lines.join('\n')}\n`);
  });
}

const PLAN = {
  version: 1,
  campaign: {
    dataset: 'gsm8k',
    split: 'test',
    n: 4,
    sampling: {},
    model: { label: 'dapo-b:final', id: 'dapo-b:final', from: 'job' },
    trainer: 'rlvr',
  },
  campaignId: 'c1',
  shards: [{ index: 0, host: 0, gpu: 0, argv: [] }],
  files: {
    shardFolder: 'shard_{shard}',
    results: 'verification_results.jsonl',
    completions: 'c.jsonl',
    summary: 's.json',
  },
};

interface WriteupFixture {
  readonly root: string;
  readonly spec: string;
}

/**
 * Two run folders (traces, our watcher summary at steps 100 and 200, their `evals/math/summary.jsonl`),
 * a bare pass@k folder of their script (run a) and a campaign folder of ours (run b), a base model in
 * their layout (math accuracy, gsm8k pass@k merged), and the spec in their shape naming it all.
 */
function makeFixture(specText?: string): WriteupFixture {
  const root = tempDir('rlvr-writeup-');
  for (const [id, offset, math] of [
    ['grpo-a', 0, [0.4, 0.5]],
    ['dapo-b', 0.1, [0.45, 0.35]],
  ] as const) {
    const dir = path.join(root, 'runs', id);
    fs.mkdirSync(path.join(dir, 'traces'), { recursive: true });
    writeTrace(path.join(dir, 'traces', 'trace.jsonl'), { steps: 30, batch: 4, rewardOffset: offset });
    fs.cpSync(WATCHER, path.join(dir, 'evals'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'evals', 'math'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'evals', 'math', 'summary.jsonl'),
      `${JSON.stringify({ step: 10, accuracy: math[0] })}\n${JSON.stringify({ step: 20, accuracy: math[1] })}\n`,
    );
  }
  // run a: their script's bare shards (n=4: c = 2, 0 | 4, 1)
  writeShards(path.join(root, 'passk', 'grpo-a'), [
    [passkLine('p1', [1, 0, 1, 0]), passkLine('p2', [0, 0, 0, 0])],
    [passkLine('p3', [1, 1, 1, 1]), passkLine('p4', [0, 0, 0, 1])],
  ]);
  // run b: a campaign folder our job writes (the plan names the dataset)
  const b = path.join(root, 'passk', 'dapo-b');
  fs.mkdirSync(b, { recursive: true });
  fs.writeFileSync(path.join(b, 'passk-plan.json'), JSON.stringify(PLAN));
  writeShards(path.join(b, 'passk'), [[passkLine('p1', [1, 1, 1, 1]), passkLine('p2', [1, 0, 0, 0])]]);
  const base = path.join(root, 'base', 'evals');
  fs.mkdirSync(path.join(base, 'math'), { recursive: true });
  fs.writeFileSync(path.join(base, 'math', 'summary.json'), JSON.stringify({ accuracy: 0.3 }));
  fs.mkdirSync(path.join(base, 'gsm8k', 'pass-at-k'), { recursive: true });
  fs.writeFileSync(
    path.join(base, 'gsm8k', 'pass-at-k', 'merged_summary.json'),
    JSON.stringify({ pass_at_k: { 'pass@1': 0.25, 'pass@2': 0.35, 'pass@4': 0.5 } }),
  );
  const spec = path.join(root, 'writeup.yaml');
  fs.writeFileSync(
    spec,
    specText ??
      `# their generator's spec, with our passk: per run
output: writeup_plots.js
html_prefix: wu
runs:
  - id: grpo-a
    run_dir: runs/grpo-a
    label: "GRPO a"
    color: "#3b82f6"
    family: grpo
    passk: [{dir: passk/grpo-a, benchmark: gsm8k}]
  - id: dapo-b
    run_dir: runs/dapo-b
    label: "DAPO b"
    color: "#f97316"
    family: dapo
    passk: [passk/dapo-b]
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

function specProblems(text: string): { error: ProblemsError; file: string } {
  const fx = makeFixture(text);
  try {
    readWriteupSpec(fx.spec);
  } catch (e) {
    if (e instanceof ProblemsError) return { error: e, file: fx.spec };
    throw e;
  }
  throw new Error('the spec was accepted');
}

describe('the writeup spec', () => {
  it('takes their spec as it is: run_dir relative to the spec file, their output and html_prefix noted', () => {
    const fx = makeFixture();
    const spec = readWriteupSpec(fx.spec);
    expect(spec.runs.map((r) => [r.id, r.label, r.color, r.family])).toEqual([
      ['grpo-a', 'GRPO a', '#3b82f6', 'grpo'],
      ['dapo-b', 'DAPO b', '#f97316', 'dapo'],
    ]);
    expect(spec.runs[0].runDir).toBe(path.join(fx.root, 'runs', 'grpo-a'));
    expect(spec.runs[0].passk).toEqual([
      expect.objectContaining({ dir: path.join(fx.root, 'passk', 'grpo-a'), benchmark: 'gsm8k' }),
    ]);
    expect(spec.runs[1].passk[0].benchmark).toBeUndefined();
    expect(spec.base).toEqual(
      expect.objectContaining({ label: 'Base', evalsDir: path.join(fx.root, 'base', 'evals') }),
    );
    expect(spec.excludeBenchmarks).toEqual(['ifeval']);
    expect(spec.presets).toEqual([
      { id: 'only-a', label: 'GRPO only', runs: ['grpo-a'], text: 'The GRPO run alone.' },
    ]);
    // their output is their JavaScript file: not where the page goes
    expect(spec.output).toBeUndefined();
    expect(spec.notes.join('\n')).toMatch(/output: writeup_plots\.js .*--out/);
    expect(spec.notes.join('\n')).toMatch(/html_prefix/);
    expect(spec.title).toBe('wu writeup');
  });

  it('takes output: *.html as where the page goes (relative to the spec), and run: ids', () => {
    const fx = makeFixture('title: Mine\noutput: out/page.html\nruns:\n  - run: some-job\n');
    const spec = readWriteupSpec(fx.spec);
    expect(spec.output).toBe(path.join(fx.root, 'out', 'page.html'));
    expect(spec.runs).toEqual([
      expect.objectContaining({ id: 'some-job', label: 'some-job', run: 'some-job' }),
    ]);
    expect(spec.title).toBe('Mine');
  });

  it('refuses a likely misspelling with file:line:column, and notes a key it does not know', () => {
    const text = 'runs:\n  - id: a\n    run_dri: runs/grpo-a\n    colour_map: x\nbase_modle:\n  label: B\n';
    const { error, file } = specProblems(text);
    const lines = error.message.split('\n');
    expect(lines).toContainEqual(
      expect.stringContaining(
        `${file}:${lineOf(text, 'run_dri')}:5: runs[0].run_dri: unknown key "run_dri" — did you mean "run_dir"?`,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringContaining(
        `${file}:${lineOf(text, 'base_modle')}:1: base_modle: unknown key "base_modle" — did you mean "base_model"?`,
      ),
    );
    // a key that resembles none is no misspelling: not among the problems
    expect(error.message).not.toMatch(/colour_map/);
    expect(error.exitCode).toBe(2);
  });

  it('reports every problem at once, each where it is written', () => {
    const text = [
      'runs:',
      '  - id: a',
      '    run_dir: runs/nowhere',
      '  - id: a',
      '    run_dir: runs/grpo-a',
      '    run: grpo-a',
      '    color: "not a colour!"',
      '  - label: no source',
      'presets:',
      '  - id: p',
      '    runs: [a, grpo-b]',
      '',
    ].join('\n');
    const { error, file } = specProblems(text);
    const at = (needle: string): string => `${file}:${lineOf(text, needle)}:`;
    expect(error.message).toContain(`${at('runs/nowhere')}14: runs[0].run_dir: runs/nowhere: no such folder`);
    expect(error.message).toContain(`${at('run: grpo-a')}5: runs[1].run: give run_dir or run, not both`);
    expect(error.message).toContain(`${at('not a colour')}`);
    expect(error.message).toMatch(/run id "a" is used twice/);
    expect(error.message).toMatch(/runs\[2\]: no run_dir or run/);
    expect(error.message).toContain(`${at('[a, grpo-b]')}`);
    expect(error.message).toMatch(/no run "grpo-b" in runs:/);
  });

  it('says what a spec is when the file is not one', () => {
    expect(specProblems('- just\n- a list\n').error.message).toMatch(/a mapping with runs/);
    expect(specProblems('runs: []\n').error.message).toMatch(/runs: a list of at least one run/);
  });
});

describe('the writeup data', () => {
  it('has every run’s training curves, evals in both layouts, pass@k and the summary against the base', async () => {
    const fx = makeFixture();
    const w = await writeupAnswer(readWriteupSpec(fx.spec));
    expect(w.runs.map((r) => [r.id, r.lastStep])).toEqual([
      ['grpo-a', 30],
      ['dapo-b', 30],
    ]);
    expect(w.curves.map((c) => c.id)).toEqual(['reward', 'loss', 'kl', 'entropy', 'completion-length']);
    for (const c of w.curves) {
      expect(Object.keys(c.runs)).toEqual(['grpo-a', 'dapo-b']);
      expect(c.runs['grpo-a'].x.length).toBeGreaterThan(10);
    }
    expect(w.curves[0].runs['grpo-a'].key).toBe('reward_stats|reward_overall');

    // their summary.jsonl and our watcher summary (its ifeval left out: exclude_benchmarks)
    const byBench = Object.fromEntries(w.evals.map((e) => [e.benchmark, e]));
    expect(Object.keys(byBench).sort()).toEqual(['gsm8k_cot 8-shot', 'math']);
    expect(byBench.math.runs['grpo-a']).toEqual({ x: [10, 20], y: [0.4, 0.5] });
    expect(byBench.math.base).toBe(0.3);
    expect(byBench['gsm8k_cot 8-shot'].runs['grpo-a'].x).toEqual([100, 200]);
    expect(byBench['gsm8k_cot 8-shot'].metric).toBe('strict');

    // pass@k: a's bare shards named by the spec, b's campaign by its plan's dataset, the base's merge
    expect(w.passk.map((p) => p.benchmark)).toEqual(['gsm8k']);
    const p = w.passk[0];
    expect(p.runs['grpo-a'].k).toEqual([1, 2, 4]);
    expect(p.runs['grpo-a'].unbiased[0]).toBeCloseTo((0.5 + 0 + 1 + 0.25) / 4, 10);
    expect(p.runs['grpo-a'].unbiased[1]).toBeCloseTo((5 / 6 + 0 + 1 + 0.5) / 4, 10);
    expect(p.runs['grpo-a'].unbiased[2]).toBeCloseTo(0.75, 10);
    expect(p.runs['grpo-a'].about).toMatch(/n=4, 4 prompts, 2 shard/);
    expect(p.runs['dapo-b'].unbiased[0]).toBeCloseTo((1 + 0.25) / 2, 10);
    expect(p.base?.unbiased).toEqual([0.25, 0.35, 0.5]);

    // the summary: a row per run, each cell with its difference to the base model
    const cols = w.summary.columns.map((c) => c.label);
    expect(cols).toEqual(['gsm8k_cot 8-shot', 'math', 'gsm8k pass@1', 'gsm8k pass@4']);
    expect(w.summary.base).toEqual({ label: 'Base', cells: [null, 0.3, 0.25, 0.5] });
    const a = w.summary.rows.find((r) => r.id === 'grpo-a')!;
    expect(a.cells[0]).toEqual({ value: expect.any(Number), step: 200 });
    expect(a.cells[1]).toEqual({ value: 0.5, step: 20, delta: expect.closeTo(0.2, 10) });
    expect(a.cells[2]!.delta).toBeCloseTo(0.4375 - 0.25, 10);
    expect(a.cells[3]!.delta).toBeCloseTo(0.25, 10);
    const b = w.summary.rows.find((r) => r.id === 'dapo-b')!;
    expect(b.cells[1]!.delta).toBeCloseTo(0.05, 10);
    expect(w.summary.rows.map((r) => r.label)).toEqual(['GRPO a', 'DAPO b']);
  });

  it('leaves out excluded benchmarks (by prefix, as their page does)', async () => {
    const fx = makeFixture();
    const text = fs.readFileSync(fx.spec, 'utf8').replace('[ifeval]', '[gsm8k, ifeval]');
    fs.writeFileSync(fx.spec, text);
    const w = await writeupAnswer(readWriteupSpec(fx.spec));
    expect(w.evals.map((e) => e.benchmark)).toEqual(['math']);
    expect(w.passk).toEqual([]);
    expect(w.summary.columns.map((c) => c.label)).toEqual(['math']);
  });

  it('reads run: ids from the results folder, and says which are not there, where the spec names them', async () => {
    const fx = makeFixture();
    const text = 'runs:\n  - run: grpo-a\n  - run: nope\n    label: gone\n';
    fs.writeFileSync(fx.spec, text);
    const spec = readWriteupSpec(fx.spec);
    const err = await writeupAnswer(spec, { resultsDir: path.join(fx.root, 'runs') }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProblemsError);
    expect((err as Error).message).toContain(
      `${fx.spec}:${lineOf(text, 'nope')}:10: runs.nope.run: no run "nope"`,
    );
    expect((err as Error).message).toMatch(/Runs there: dapo-b, grpo-a/);
    fs.writeFileSync(fx.spec, 'runs:\n  - run: grpo-a\n');
    const w = await writeupAnswer(readWriteupSpec(fx.spec), { resultsDir: path.join(fx.root, 'runs') });
    expect(w.runs.map((r) => r.id)).toEqual(['grpo-a']);
    expect(w.evals.map((e) => e.benchmark).sort()).toEqual(['gsm8k_cot 8-shot', 'ifeval', 'math']);
  });

  it('refuses a pass@k folder with no results in it, at its place in the spec', async () => {
    const fx = makeFixture();
    fs.mkdirSync(path.join(fx.root, 'empty'));
    const text = 'runs:\n  - run_dir: runs/grpo-a\n    passk: [empty]\n';
    fs.writeFileSync(fx.spec, text);
    const err = await writeupAnswer(readWriteupSpec(fx.spec)).catch((e: unknown) => e);
    expect((err as Error).message).toContain(`${fx.spec}:3:13: runs.grpo-a.passk:`);
    expect((err as Error).message).toMatch(/no pass@k results/);
  });
});
