import * as fs from 'node:fs';
import * as path from 'node:path';
import { readLocalResults, type ResultRow } from '../eval-records';
import { ProblemsError, UserError, type Problem, type SourceLocation } from '../errors';
import { readPasskFolder, type MergedPasskResults } from '../passk-records';
import { isObject, readJsonFile, readTextFile } from '../util';
import { DashboardData } from './data';
import type { XY } from './query';
import { checkOutFile, resultsFolder, writeOutFile } from './paths';
import { listRunIds, runFiles } from './runs';
import { REPORT_WIDTH, urls } from './urls';
import { pageHtml, webAssets } from './web-bundle';
import {
  writeupNeedsResults,
  type PasskSource,
  type WriteupBaseSpec,
  type WriteupRunSpec,
  type WriteupSpec,
} from './writeup-spec';

/** More than any eval watcher's summaries: a larger file is not read. */
const SUMMARY_MAX_BYTES = 64 * 1024 * 1024;

/*
 * `rlvr report --spec writeup.yaml`: the team's writeup page as one self-contained file. The runs a
 * spec names (run folders anywhere, or runs of the results folder) are read here, in Node, into one
 * JSON answer (WriteupAnswer) that the page's writeup view draws: training curves, eval accuracy over
 * steps, pass@k curves per benchmark, and a summary table against the base model. The answer is
 * inlined like the report's (report.ts), so the page needs no server and no network.
 *
 * Evals are read in both layouts: ours (eval units and the watcher's `evals/summary_*.json`, as the
 * dashboard reads them) and theirs (`evals/<bench>/summary.jsonl`, `summary.json`, `step*\/summary.json`
 * with `accuracy`, as generate_staleness_plots.py reads them). Pass@k: our campaign folders (`passk:`
 * in the spec), and their `evals/<bench>/pass-at-k*\/merged_summary.json` inside a run folder.
 */

/** The training curves: per panel, the first series key a run has (trainers name them differently). */
const CURVES: readonly { id: string; title: string; subtitle: string; keys: readonly string[] }[] = [
  {
    id: 'reward',
    title: 'Reward',
    subtitle: 'mean reward of the step’s samples (filtered ones included)',
    keys: ['reward_stats|reward_overall', 'metrics|avg_reward', 'rewards|mean'],
  },
  { id: 'loss', title: 'Loss', subtitle: 'training loss per step', keys: ['metrics|loss'] },
  {
    id: 'kl',
    title: 'KL divergence',
    subtitle: 'mean KL to the reference policy',
    keys: ['grpo.debug|kl_mean', 'grpo_debug|kl_mean', 'gkd.debug|kl_mean'],
  },
  {
    id: 'entropy',
    title: 'Entropy',
    subtitle: 'mean token entropy of the policy',
    keys: ['grpo.debug|entropy_mean', 'grpo_debug|entropy_mean', 'gkd.debug|entropy_mean'],
  },
  {
    id: 'completion-length',
    title: 'Completion length',
    subtitle: 'mean completion tokens per step',
    keys: ['batch.padding|completion_lens:mean'],
  },
];

export interface WriteupRun {
  readonly id: string;
  readonly label: string;
  readonly color?: string;
  readonly family?: string;
  /** The folder read (as the spec names it). */
  readonly source: string;
  readonly lastStep?: number;
}

export interface WriteupCurvePanel {
  readonly id: string;
  readonly title: string;
  readonly subtitle: string;
  /** Run id → its series (downsampled), with the key it came from. */
  readonly runs: Record<string, XY & { readonly key: string }>;
}

export interface WriteupEvalPanel {
  readonly benchmark: string;
  readonly metric: string;
  /** Run id → accuracy (0–1) by step. */
  readonly runs: Record<string, { readonly x: number[]; readonly y: number[] }>;
  readonly base?: number;
}

export interface PasskCurve {
  readonly k: number[];
  /** 1 − C(n−c, k)/C(n, k), averaged over prompts; null when the source gives only the first-k figure. */
  readonly unbiased: (number | null)[];
  /** The share of prompts with a correct completion among the first k (their script's figure), if known. */
  readonly firstK: (number | null)[];
  /** What was read, for the legend and the reader: `n=…, prompts, shards`. */
  readonly about: string;
}

export interface WriteupPasskPanel {
  readonly benchmark: string;
  readonly runs: Record<string, PasskCurve>;
  readonly base?: PasskCurve;
}

export interface SummaryCell {
  readonly value: number;
  /** value − the base model's (absent without a base value). */
  readonly delta?: number;
  /** The step of an eval value, when known. */
  readonly step?: number;
}

export interface WriteupSummary {
  readonly columns: readonly { readonly id: string; readonly label: string; readonly title: string }[];
  readonly base?: { readonly label: string; readonly cells: (number | null)[] };
  readonly rows: readonly {
    readonly id: string;
    readonly label: string;
    readonly cells: (SummaryCell | null)[];
  }[];
}

export interface WriteupAnswer {
  readonly title: string;
  readonly spec: string;
  readonly notes: readonly string[];
  readonly runs: readonly WriteupRun[];
  readonly base?: { readonly label: string; readonly source?: string };
  readonly curves: readonly WriteupCurvePanel[];
  readonly evals: readonly WriteupEvalPanel[];
  readonly passk: readonly WriteupPasskPanel[];
  readonly summary: WriteupSummary;
  readonly presets: WriteupSpec['presets'];
}

export interface WriteupOptions {
  /** Where `run:` ids are looked up. */
  readonly resultsDir?: string;
  readonly width?: number;
}

/** Benchmark → step (undefined: not known) → accuracy, and the metric it is. */
type EvalPoints = Map<string, { metric: string; points: Map<number | undefined, number> }>;

function put(out: EvalPoints, bench: string, metric: string, step: number | undefined, value: number): void {
  const e = out.get(bench) ?? { metric, points: new Map() };
  e.points.set(step, value);
  out.set(bench, e);
}

/** `job:step100` → 100, `job:final` → the last step, else undefined (as the run view places evals). */
function stepOfCheckpoint(id: string, lastStep: number | undefined): number | undefined {
  const m = /:step_?(\d+)$/.exec(id);
  if (m) return Number(m[1]);
  return /:final$/.test(id) ? lastStep : undefined;
}

/** A benchmark's name for our rows: the task, with its shots when it has some (`gsm8k_cot 8-shot`). */
function benchOfRow(r: ResultRow): string {
  return r.numFewshot > 0 ? `${r.task} ${r.numFewshot}-shot` : r.task;
}

/** Our eval rows as points: each row's judged (first) metric at its checkpoint's step. */
function ourEvals(rows: readonly ResultRow[], lastStep: number | undefined, out: EvalPoints): void {
  for (const r of rows) {
    if (r.failed || r.metrics.length === 0) continue;
    const m = r.metrics[0];
    put(out, benchOfRow(r), m.metric, stepOfCheckpoint(r.checkpointId, lastStep), m.value);
  }
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** Their summary entry: `accuracy`, or ifeval's prompt- and instruction-level figures as two rows. */
function theirEntry(out: EvalPoints, bench: string, entry: unknown, step: number | undefined): void {
  if (!isObject(entry)) return;
  const acc = num(entry.accuracy);
  if (acc !== undefined) return put(out, bench, 'accuracy', step, acc);
  const prompt = num(entry.prompt_level_strict_acc);
  if (prompt === undefined) return;
  const inst = num(entry.inst_level_acc);
  if (inst === undefined) return put(out, bench, 'prompt_level_strict_acc', step, prompt);
  put(out, `${bench} (prompt)`, 'prompt_level_strict_acc', step, prompt);
  put(out, `${bench} (inst)`, 'inst_level_acc', step, inst);
}

function subfolders(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

const isFile = (f: string): boolean => {
  try {
    return fs.lstatSync(f).isFile();
  } catch {
    return false;
  }
};

/** Their evals folder: `<bench>/summary.jsonl` (a line per step), `summary.json`, or `step*\/summary.json`. */
function theirEvals(evalsDir: string, out: EvalPoints): void {
  for (const name of subfolders(evalsDir)) {
    // their generator's own normalisation: one benchmark under two folder names
    const bench = name === 'ifbench' ? 'ifbench_test' : name;
    const dir = path.join(evalsDir, name);
    const jsonl = path.join(dir, 'summary.jsonl');
    const json = path.join(dir, 'summary.json');
    if (isFile(jsonl)) {
      for (const line of (readTextFile(jsonl, SUMMARY_MAX_BYTES) ?? '').split('\n')) {
        if (!line.trim()) continue;
        try {
          const e = JSON.parse(line) as unknown;
          if (isObject(e) && num(e.step) !== undefined) theirEntry(out, bench, e, num(e.step));
        } catch {
          // a cut-off last line: the lines before it stand
        }
      }
    } else if (isFile(json)) {
      const e = readJsonFile<unknown>(json, undefined);
      theirEntry(out, bench, e, isObject(e) ? num(e.step) : undefined);
    } else {
      for (const sub of subfolders(dir)) {
        const m = /^step_?(\d+)$/.exec(sub);
        const f = path.join(dir, sub, 'summary.json');
        if (m && isFile(f)) theirEntry(out, bench, readJsonFile<unknown>(f, undefined), Number(m[1]));
      }
    }
  }
}

/** Their merged pass@k figures (`{"pass_at_k": {"pass@1": …}}`) as a curve. */
function theirPasskCurve(file: string, figure: 'unbiased' | 'firstK'): PasskCurve | undefined {
  const d = readJsonFile<unknown>(file, undefined);
  const table = isObject(d) ? d.pass_at_k : undefined;
  if (!isObject(table)) return undefined;
  const pairs = Object.entries(table)
    .map(([key, v]) => [Number(/^pass@(\d+)$/.exec(key)?.[1]), num(v)] as const)
    .filter((p): p is readonly [number, number] => Number.isInteger(p[0]) && p[1] !== undefined)
    .sort((a, b) => a[0] - b[0]);
  if (pairs.length === 0) return undefined;
  const ys = pairs.map((p) => p[1]);
  return {
    k: pairs.map((p) => p[0]),
    unbiased: figure === 'unbiased' ? ys : ys.map(() => null),
    firstK: figure === 'firstK' ? ys : ys.map(() => null),
    about: `${path.basename(file)} (their merge${figure === 'firstK' ? ': first-k figure' : ''})`,
  };
}

/**
 * Their pass@k inside an evals folder: `<bench>_pass<k>/step*\/merged_summary.json` or
 * `<bench>/pass-at-k[-512[-v2]]/merged_summary.json` (their merge_pass512.py: the unbiased estimator),
 * else that folder's `summary.json` (eval_pass_at_k.py: the first k completions).
 */
function theirPassk(evalsDir: string): Map<string, PasskCurve> {
  const out = new Map<string, PasskCurve>();
  for (const name of subfolders(evalsDir)) {
    const dir = path.join(evalsDir, name);
    const m = /^(.*)_pass\d+$/.exec(name);
    const candidates = m
      ? subfolders(dir)
          .filter((s) => /^step/.test(s))
          .reverse()
          .map((s) => path.join(dir, s))
      : ['pass-at-k-512-v2', 'pass-at-k-512', 'pass-at-k'].map((s) => path.join(dir, s));
    for (const c of candidates) {
      const curve = isFile(path.join(c, 'merged_summary.json'))
        ? theirPasskCurve(path.join(c, 'merged_summary.json'), 'unbiased')
        : isFile(path.join(c, 'summary.json'))
          ? theirPasskCurve(path.join(c, 'summary.json'), 'firstK')
          : undefined;
      if (curve) {
        out.set(m ? m[1] : name, curve);
        break;
      }
    }
  }
  return out;
}

function passkCurveOf(r: MergedPasskResults): PasskCurve {
  const ns = new Set(r.prompts.map((p) => p.n));
  const n = r.campaign ? String(r.campaign.n) : [...ns].sort((a, b) => a - b).join('/') || '?';
  const shards =
    r.shardsExpected !== undefined
      ? `${r.shardsRead.length} of ${r.shardsExpected} shards`
      : `${r.shardsRead.length} shard(s)`;
  return {
    k: r.passAtK.map((p) => p.k),
    unbiased: r.passAtK.map((p) => p.unbiased),
    firstK: r.passAtK.map((p) => p.firstK),
    about: `n=${n}, ${r.prompts.length} prompts, ${shards}${r.missingShards.length ? ` (missing: ${r.missingShards.join(', ')})` : ''}`,
  };
}

function benchOfCampaign(r: MergedPasskResults, src: PasskSource): string {
  if (src.benchmark) return src.benchmark;
  const c = r.campaign;
  if (c) return c.level ? `${c.dataset} (levels ${c.level})` : c.dataset;
  return path.basename(src.dir);
}

const loc = (at: SourceLocation): string => `${at.file}:${at.line}:${at.column}`;

/** Our pass@k folders of one run (or the base): benchmark → curve; an empty folder is a problem. */
async function ourPassk(
  sources: readonly PasskSource[],
  problems: Problem[],
  where: string,
): Promise<Map<string, PasskCurve>> {
  const out = new Map<string, PasskCurve>();
  for (const src of sources) {
    const r = await readPasskFolder(src.dir);
    if (!r || r.prompts.length === 0) {
      problems.push({
        location: src.at,
        where: `${where}.passk`,
        message: `${src.dir}: no pass@k results (${r ? 'its shards have no result lines yet' : 'no passk-plan.json, passk/shard_<i>/ or shard_<i>/ in it'})`,
        hint: 'Give the folder a pass@k job wrote (the run folder), or their script’s output folder with shard_<i>/.',
      });
      continue;
    }
    out.set(benchOfCampaign(r, src), passkCurveOf(r));
  }
  return out;
}

/** The last value at a known step (the latest checkpoint), else any value (a base model has no steps). */
function latest(points: Map<number | undefined, number>): { value: number; step?: number } | undefined {
  const steps = [...points.keys()].filter((s): s is number => s !== undefined).sort((a, b) => a - b);
  if (steps.length) return { value: points.get(steps[steps.length - 1])!, step: steps[steps.length - 1] };
  return points.has(undefined) ? { value: points.get(undefined)! } : undefined;
}

/** The figure a pass@k curve is judged by at k: the unbiased estimate, else their first-k figure. */
function passkAt(c: PasskCurve | undefined, k: number): number | undefined {
  if (!c) return undefined;
  const i = c.k.indexOf(k);
  if (i < 0) return undefined;
  return c.unbiased[i] ?? c.firstK[i] ?? undefined;
}

interface ReadRun {
  readonly run: WriteupRun;
  readonly curves: Map<string, XY & { key: string }>;
  readonly evals: EvalPoints;
  readonly passk: Map<string, PasskCurve>;
}

/** What the base model gave: its evals and pass@k curves (both empty without a base). */
interface ReadBase {
  readonly evals: EvalPoints;
  readonly passk: Map<string, PasskCurve>;
}

/** A spec's run found: the data of the results folder it is read from, its id there, and its folder. */
interface RunAt {
  readonly data: DashboardData;
  readonly id: string;
  readonly dir: string;
}

/**
 * One reading of a spec: one DashboardData per results folder (shared by the runs in it), and what the
 * reading finds beside the data — located problems (thrown at once at the end) and notes for the page.
 */
interface Reading {
  readonly o: WriteupOptions;
  readonly notes: string[];
  readonly problems: Problem[];
  dataFor(dir: string): DashboardData;
}

function startReading(spec: WriteupSpec, o: WriteupOptions): Reading {
  const datas = new Map<string, DashboardData>();
  return {
    o,
    notes: [...spec.notes],
    problems: [],
    dataFor(dir) {
      let d = datas.get(dir);
      if (!d) datas.set(dir, (d = new DashboardData({ resultsDir: dir })));
      return d;
    },
  };
}

/** A run of the results folder, or a run folder anywhere read as a run of its parent folder. */
function locateRun(r: WriteupRunSpec, g: Reading): RunAt | undefined {
  const resultsDir = g.o.resultsDir;
  if (r.run !== undefined) {
    if (!resultsDir) {
      g.problems.push({
        location: r.sourceAt,
        where: `runs.${r.id}.run`,
        message: 'run: needs --results <dir>',
      });
      return undefined;
    }
    const data = g.dataFor(resultsDir);
    const files = runFiles(resultsDir, r.run);
    if (!files) {
      g.problems.push({
        location: r.sourceAt,
        where: `runs.${r.id}.run`,
        message: `no run "${r.run}" in ${resultsDir}`,
        hint: `Runs there: ${listRunIds(resultsDir).slice(0, 12).join(', ') || 'none'}. Or give run_dir: a run folder.`,
      });
      return undefined;
    }
    return { data, id: r.run, dir: files.dir };
  }
  if (r.runDir === undefined) return undefined;
  const dir = fs.realpathSync(r.runDir);
  const data = g.dataFor(path.dirname(dir));
  const id = path.basename(dir);
  if (!runFiles(path.dirname(dir), id)) {
    g.problems.push({
      location: r.sourceAt,
      where: `runs.${r.id}.run_dir`,
      message: `${r.runDir}: its folder name is not one a run folder can have (letters, digits, . _ -)`,
    });
    return undefined;
  }
  return { data, id, dir };
}

const CURVE_KEYS = [...new Set(CURVES.flatMap((c) => c.keys))];

/** A run's training curves (per panel, the first key its trace has) and its last step; none without a trace. */
async function readCurves(
  r: WriteupRunSpec,
  { data, id, dir }: RunAt,
  g: Reading,
): Promise<{ curves: Map<string, XY & { key: string }>; lastStep?: number }> {
  const files = runFiles(path.dirname(dir), path.basename(dir));
  const curves = new Map<string, XY & { key: string }>();
  let lastStep: number | undefined;
  if (files?.trace) {
    try {
      lastStep = (await data.progress(id)).latestStep;
      const width = String(g.o.width ?? REPORT_WIDTH);
      const got = await data.series(
        new URLSearchParams({ id, axis: 'step', width, keys: CURVE_KEYS.join(',') }),
      );
      for (const c of CURVES) {
        const key = c.keys.find((k) => (got.series[k]?.x.length ?? 0) > 0);
        if (key) curves.set(c.id, { ...got.series[key], key });
      }
    } catch (e) {
      g.notes.push(`${r.label}: its trace could not be read (${(e as Error).message}); no training curves.`);
    }
  } else g.notes.push(`${r.label}: no trace (traces/trace.jsonl) in ${dir}; no training curves.`);
  return { curves, lastStep };
}

/** A run's evals (ours, then theirs) and pass@k (theirs in its evals folder, then the spec's folders). */
async function readRunResults(
  r: WriteupRunSpec,
  { data, id, dir }: RunAt,
  lastStep: number | undefined,
  g: Reading,
): Promise<{ evals: EvalPoints; passk: Map<string, PasskCurve> }> {
  const evals: EvalPoints = new Map();
  const ours =
    r.run !== undefined ? data.evalsOf(id) : readLocalResults(dir, `run folder ${id}`, id, r.runDir ?? dir);
  for (const w of ours.filter((x) => x.warning)) g.notes.push(`${r.label}: ${w.warning}`);
  ourEvals(ours, lastStep, evals);
  theirEvals(path.join(dir, 'evals'), evals);
  const passk = theirPassk(path.join(dir, 'evals'));
  for (const [bench, curve] of await ourPassk(r.passk, g.problems, `runs.${r.id}`)) passk.set(bench, curve);
  return { evals, passk };
}

/** One of the spec's runs, read; undefined when it is not there (a problem says why). */
async function readRun(r: WriteupRunSpec, g: Reading): Promise<ReadRun | undefined> {
  const at = locateRun(r, g);
  if (!at) return undefined;
  const { curves, lastStep } = await readCurves(r, at, g);
  const { evals, passk } = await readRunResults(r, at, lastStep, g);
  const source = r.run ?? r.runDir ?? at.dir;
  return {
    run: { id: r.id, label: r.label, color: r.color, family: r.family, source, lastStep },
    curves,
    evals,
    passk,
  };
}

/** The base model: their evals folder, or a run (an eval job of the base model) of ours. */
async function readBase(b: WriteupBaseSpec | undefined, g: Reading): Promise<ReadBase> {
  const evals: EvalPoints = new Map();
  let passk = new Map<string, PasskCurve>();
  if (!b) return { evals, passk };
  let dir: string | undefined = b.runDir;
  if (b.run !== undefined) {
    dir = g.o.resultsDir ? runFiles(g.o.resultsDir, b.run)?.dir : undefined;
    if (!dir)
      g.problems.push({
        location: b.at,
        where: 'base_model.run',
        message: `no run "${b.run}" in ${g.o.resultsDir ?? '(no --results)'}`,
      });
  }
  if (b.evalsDir) {
    theirEvals(b.evalsDir, evals);
    passk = theirPassk(b.evalsDir);
    // a run's evals/ folder of ours: its eval units and watcher summaries
    if (path.basename(b.evalsDir) === 'evals') dir = path.dirname(b.evalsDir);
  }
  if (dir) {
    ourEvals(readLocalResults(dir, `base model ${b.label}`), undefined, evals);
    if (!b.evalsDir) {
      theirEvals(path.join(dir, 'evals'), evals);
      passk = theirPassk(path.join(dir, 'evals'));
    }
  }
  for (const [bench, curve] of await ourPassk(b.passk, g.problems, 'base_model')) passk.set(bench, curve);
  // a base model's evals are of one checkpoint: its latest value per benchmark stands
  if (evals.size === 0 && passk.size === 0)
    g.notes.push(`base model ${b.label}: no eval results or pass@k found (${loc(b.at)}).`);
  return { evals, passk };
}

/** A training panel per curve some run has. */
function curvePanels(runs: readonly ReadRun[]): WriteupCurvePanel[] {
  return CURVES.flatMap((c) => {
    const got = runs.filter((r) => r.curves.has(c.id));
    if (got.length === 0) return [];
    return [
      {
        id: c.id,
        title: c.title,
        subtitle: c.subtitle,
        runs: Object.fromEntries(got.map((r) => [r.run.id, r.curves.get(c.id)!])),
      },
    ];
  });
}

/** An eval panel per benchmark some run has at a known step, with the base model's latest value. */
function evalPanels(
  runs: readonly ReadRun[],
  baseEvals: EvalPoints,
  excluded: (bench: string) => boolean,
): WriteupEvalPanel[] {
  const baseValue = new Map<string, number>();
  for (const [bench, e] of baseEvals) {
    const v = latest(e.points);
    if (v) baseValue.set(bench, v.value);
  }
  const benches = [...new Set(runs.flatMap((r) => [...r.evals.keys()]))].filter((x) => !excluded(x));
  return benches.flatMap((bench) => {
    const per: WriteupEvalPanel['runs'] = {};
    let metric = '';
    for (const r of runs) {
      const e = r.evals.get(bench);
      if (!e) continue;
      metric ||= e.metric;
      const pts = [...e.points]
        .filter((p): p is [number, number] => p[0] !== undefined)
        .sort((a, b) => a[0] - b[0]);
      if (pts.length) per[r.run.id] = { x: pts.map((p) => p[0]), y: pts.map((p) => p[1]) };
    }
    if (Object.keys(per).length === 0) return [];
    return [{ benchmark: bench, metric, runs: per, base: baseValue.get(bench) }];
  });
}

/** A pass@k panel per benchmark the runs or the base model have. */
function passkPanels(
  runs: readonly ReadRun[],
  basePassk: Map<string, PasskCurve>,
  excluded: (bench: string) => boolean,
): WriteupPasskPanel[] {
  const benches = [...new Set([...runs.flatMap((r) => [...r.passk.keys()]), ...basePassk.keys()])].filter(
    (x) => !excluded(x),
  );
  return benches.map((bench) => ({
    benchmark: bench,
    runs: Object.fromEntries(
      runs.filter((r) => r.passk.has(bench)).map((r) => [r.run.id, r.passk.get(bench)!]),
    ),
    base: basePassk.get(bench),
  }));
}

interface SummaryColumn {
  readonly id: string;
  readonly label: string;
  readonly title: string;
  readonly value: (r: ReadRun) => SummaryCell | null;
  readonly base?: number;
}

/**
 * The summary's columns: each benchmark's latest accuracy, and pass@1 and pass@K (the base's largest k,
 * else the runs') per pass@k benchmark.
 */
function summaryColumns(
  evals: readonly WriteupEvalPanel[],
  passk: readonly WriteupPasskPanel[],
): SummaryColumn[] {
  const columns: SummaryColumn[] = [];
  for (const p of evals)
    columns.push({
      id: `eval:${p.benchmark}`,
      label: p.benchmark,
      title: `${p.benchmark}: ${p.metric} at the latest evaluated step`,
      base: p.base,
      value: (r) => {
        const e = r.evals.get(p.benchmark);
        const v = e && latest(e.points);
        return v ? { value: v.value, step: v.step } : null;
      },
    });
  for (const p of passk) {
    const all = [p.base, ...Object.values(p.runs)].filter((c): c is PasskCurve => c !== undefined);
    const top = Math.max(...(p.base ? p.base.k : all.flatMap((c) => c.k)));
    for (const k of [...new Set([1, top])].filter(Number.isFinite))
      columns.push({
        id: `passk:${p.benchmark}@${k}`,
        label: `${p.benchmark} pass@${k}`,
        title: `${p.benchmark}: unbiased pass@${k}`,
        base: passkAt(p.base, k),
        value: (r) => {
          const v = passkAt(r.passk.get(p.benchmark), k);
          return v === undefined ? null : { value: v };
        },
      });
  }
  return columns;
}

/** The summary table: a row per run, each cell with its difference to the base model's. */
function summaryOf(
  runs: readonly ReadRun[],
  columns: readonly SummaryColumn[],
  b: WriteupBaseSpec | undefined,
): WriteupSummary {
  return {
    columns: columns.map((c) => ({ id: c.id, label: c.label, title: c.title })),
    base: b ? { label: b.label, cells: columns.map((c) => c.base ?? null) } : undefined,
    rows: runs.map((r) => ({
      id: r.run.id,
      label: r.run.label,
      cells: columns.map((c) => {
        const v = c.value(r);
        return v && c.base !== undefined ? { ...v, delta: v.value - c.base } : v;
      }),
    })),
  };
}

/** Collects the writeup's data; problems found while reading (a run not there) come at once, located. */
export async function writeupAnswer(spec: WriteupSpec, o: WriteupOptions = {}): Promise<WriteupAnswer> {
  const g = startReading(spec, o);
  const runs: ReadRun[] = [];
  for (const r of spec.runs) {
    const read = await readRun(r, g);
    if (read) runs.push(read);
  }
  const base = await readBase(spec.base, g);
  if (g.problems.length)
    throw new ProblemsError(`${spec.file}: the runs it names could not all be read`, g.problems);

  const excluded = (bench: string): boolean =>
    spec.excludeBenchmarks.some((p) => bench.toLowerCase().startsWith(p.toLowerCase()));
  const evals = evalPanels(runs, base.evals, excluded);
  const passk = passkPanels(runs, base.passk, excluded);
  const summary = summaryOf(runs, summaryColumns(evals, passk), spec.base);
  for (const p of passk)
    if (Object.keys(p.runs).length === 0) g.notes.push(`pass@k ${p.benchmark}: the base model only.`);

  const b = spec.base;
  return {
    title: spec.title,
    spec: spec.file,
    notes: g.notes,
    runs: runs.map((r) => r.run),
    base: b ? { label: b.label, source: b.evalsDir ?? b.runDir ?? b.run } : undefined,
    curves: curvePanels(runs),
    evals,
    passk,
    summary,
    presets: spec.presets,
  };
}

/** The page: the dashboard's page and uPlot with the writeup inlined, opening on its view. */
export async function buildWriteup(
  spec: WriteupSpec,
  o: WriteupOptions = {},
): Promise<{ html: string; answer: WriteupAnswer }> {
  const answer = await writeupAnswer(spec, o);
  const html = pageHtml({
    inline: {
      assets: await webAssets(),
      data: {
        [urls.writeup()]: answer,
        // the toolbar's Jobs link: an empty list rather than "not in this report"
        [urls.jobs()]: { jobs: [], aws: 'writeup: as exported' },
        __start: 'writeup',
      },
      title: answer.title,
    },
  });
  return { html, answer };
}

export interface WriteupPageOptions {
  readonly spec: WriteupSpec;
  /** The HTML file to write; else the spec's `output:`. */
  readonly out?: string;
  /** The results folder as the user named it; read only when the spec names runs of it (`run:`). */
  readonly results: string;
  /** The reader's notes: the spec's first (before the slow part), then the runs' once written. */
  readonly note: (message: string) => void;
}

/**
 * `rlvr report --spec`: writes the writeup page. The paths are refused before anything is read; a
 * spec of run folders alone needs no results folder.
 */
export async function writeWriteupPage(
  o: WriteupPageOptions,
): Promise<{ html: string; answer: WriteupAnswer; out: string }> {
  const out = o.out ?? o.spec.output;
  if (!out)
    throw new UserError(
      '--out <file>: where to write the writeup page, e.g. --out page.html (or output: page.html in the spec).',
      'BadFlag',
    );
  checkOutFile(out);
  const resultsDir = writeupNeedsResults(o.spec) ? resultsFolder(o.results) : undefined;
  for (const note of o.spec.notes) o.note(note);
  const { html, answer } = await buildWriteup(o.spec, { resultsDir });
  writeOutFile(out, html);
  for (const note of answer.notes.slice(o.spec.notes.length)) o.note(note);
  return { html, answer, out };
}
