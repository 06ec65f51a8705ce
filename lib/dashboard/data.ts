import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildTable, readLocalResults, type ResultRow, type ResultsTable } from '../eval-records';
import { resolvePanels, type ResolvedPanel } from './panels';
import {
  downsample,
  seriesOn,
  stepBreakdown,
  stepOf,
  stepTable,
  sumByX,
  timeline,
  type Axis,
  type StepBreakdown,
  type StepTable,
  type TimelineLane,
  type XY,
} from './query';
import { writeFileAtomic } from '../util';
import { overview, type Overview } from './overview';
import { PasskCampaigns, type PasskAnswer } from './passk';
import {
  listRunIds,
  overrideLabels,
  runDocs,
  runFiles,
  NOTES_FILE,
  type RunDocs,
  type RunFiles,
} from './runs';
import { lookupSamples, type SampleLookup } from './samples';
import { indexDirOf, openIndex, type TraceIndex, type UpdateStats } from './trace-index';

/*
 * The dashboard's answers, as JSON-ready objects: the server (server.ts) serves them, the report
 * (report.ts) inlines them. Runs are folders of the results folder (runs.ts); their traces are read
 * through the column store (trace-index.ts), opened once and reopened only when the trace changed.
 */

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface OpenRun {
  files: RunFiles;
  size: number;
  mtimeMs: number;
  index: TraceIndex;
  table: StepTable;
  /** Per-step derived span series (`span:<name>|count`, `|mean_dur`). */
  derived: Map<string, { x: Float64Array; y: Float64Array }>;
  lastUpdate: UpdateStats;
  breakdown?: StepBreakdown;
}

const MAX_WIDTH = 4000;
/** Runs kept open (index and columns read); a compare takes at most 32. */
const MAX_OPEN_RUNS = 48;
const REWARD_KEYS = ['reward_stats|reward_overall', 'metrics|avg_reward', 'rewards|mean'];

function num(v: string | null, fallback: number): number {
  if (v === null || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new HttpError(400, `not a number: ${v}`);
  return n;
}

/** Per step: how many spans of each name ended in it, and their mean duration. */
function spanSeries(index: TraceIndex, table: StepTable): Map<string, { x: Float64Array; y: Float64Array }> {
  const out = new Map<string, { x: Float64Array; y: Float64Array }>();
  if (table.markers.length === 0) return out;
  for (const name of index.keys('spans')) {
    const c = index.column('spans', name);
    const count = new Map<number, number>();
    const dur = new Map<number, number>();
    for (let i = 0; i < c.length; i += 4) {
      const step = stepOf(table, c[i] + (Number.isNaN(c[i + 1]) ? 0 : c[i + 1]));
      count.set(step, (count.get(step) ?? 0) + 1);
      dur.set(step, (dur.get(step) ?? 0) + (Number.isNaN(c[i + 1]) ? 0 : c[i + 1]));
    }
    const steps = [...count.keys()].sort((a, b) => a - b);
    const x = Float64Array.from(steps);
    out.set(`span:${name}|count`, { x, y: Float64Array.from(steps.map((s) => count.get(s)!)) });
    out.set(`span:${name}|mean_dur`, {
      x,
      y: Float64Array.from(steps.map((s) => dur.get(s)! / count.get(s)!)),
    });
  }
  return out;
}

/** `job:step100` → 100, `job:final` → the last step, else undefined. */
function stepOfCheckpoint(id: string, lastStep: number | undefined): number | undefined {
  const m = /:step_?(\d+)$/.exec(id);
  if (m) return Number(m[1]);
  return /:final$/.test(id) ? lastStep : undefined;
}

export interface DashboardOptions {
  readonly resultsDir: string;
}

// The answers, as the page (web/) reads them: it imports these types only, so no server code is bundled.

/** `/api/run`: what a run view shows besides its series. */
export interface RunAnswer {
  readonly id: string;
  /** The trace shown, relative to the run folder. */
  readonly trace: string;
  readonly traces: string[];
  readonly docs: RunDocs;
  readonly index: {
    readonly lines: number;
    readonly badLines: number;
    readonly traceBytes: number;
    // a mapped type (not the interface itself): readers may take it as a Record<string, unknown>
    readonly lastUpdate: Readonly<UpdateStats>;
  };
  readonly steps: {
    readonly count: number;
    readonly first: number;
    readonly last: number | undefined;
    readonly marker: string | undefined;
  };
  readonly time: { readonly min: number; readonly max: number };
  readonly meta: Record<string, unknown>;
  readonly fates: Record<string, Record<string, number>> | null;
  readonly histograms: Record<string, Record<string, number>>;
  readonly spans: { readonly name: string; readonly n: number }[];
  readonly instants: { readonly name: string; readonly n: number }[];
  readonly series: string[];
  readonly panels: ResolvedPanel[];
  /** The eval rows of the run's checkpoints, each at its checkpoint's step when that is known. */
  readonly evals: (ResultRow & { readonly step: number | undefined })[];
  readonly evalTable: ResultsTable;
  readonly hasSamples: boolean;
  readonly lastValues: { readonly reward: number | undefined; readonly loss: number | undefined };
  readonly overview: Overview;
}

/** `/api/series`: one run's series by key, downsampled. */
export interface SeriesAnswer {
  readonly id: string;
  readonly axis: Axis;
  readonly width: number;
  readonly series: Record<string, XY>;
}

/** `/api/timeline`: the lanes of [from, to], merged to `width` pixels. */
export interface TimelineAnswer {
  readonly from: number;
  readonly to: number;
  readonly width: number;
  readonly lanes: TimelineLane[];
}

/** `/api/breakdown`. */
export type BreakdownAnswer = StepBreakdown;

/** `/api/samples`. */
export type SamplesAnswer = SampleLookup;

/** `/api/compare`: several runs' series (key → run id → series), their labels and eval table. */
export interface CompareAnswer {
  readonly ids: string[];
  readonly labels: Record<string, string>;
  readonly sweeps: Record<string, string | null>;
  readonly panels: ResolvedPanel[];
  readonly series: Record<string, Record<string, XY>>;
  readonly evalTable: ResultsTable;
}

/** `/api/notes` (PUT). */
export interface NotesAnswer {
  readonly bytes: number;
}

export class DashboardData {
  private runs = new Map<string, OpenRun>();
  private evalRows: { at: number; rows: ResultRow[] } | undefined;
  /** The results folder's pass@k campaigns, each merged once and again only when its files change. */
  readonly passkCampaigns: PasskCampaigns;

  constructor(readonly options: DashboardOptions) {
    this.passkCampaigns = new PasskCampaigns(options.resultsDir);
  }

  get resultsDir(): string {
    return this.options.resultsDir;
  }

  /** How many runs are held open (their columns in memory). */
  get openRuns(): number {
    return this.runs.size;
  }

  /** The run, its index brought up to date when its trace changed since last asked. */
  async openRun(id: string): Promise<OpenRun> {
    const files = runFiles(this.resultsDir, id);
    if (!files) throw new HttpError(404, `no run ${JSON.stringify(id)} in the results folder`);
    if (!files.trace) throw new HttpError(404, `run ${id} has no trace (traces/trace.jsonl)`);
    const st = fs.statSync(files.trace);
    const cached = this.runs.get(id);
    if (
      cached &&
      cached.files.trace === files.trace &&
      cached.size === st.size &&
      cached.mtimeMs === st.mtimeMs
    )
      return this.keepOpen(id, cached);
    const { index, stats } = await openIndex(files.trace);
    const table = stepTable(index);
    const run: OpenRun = {
      files,
      size: st.size,
      mtimeMs: st.mtimeMs,
      index,
      table,
      derived: spanSeries(index, table),
      lastUpdate: stats,
    };
    return this.keepOpen(id, run);
  }

  /**
   * Holds the run open as the most recently used (the map's last entry). Columns stay in memory while a
   * run is open, so beyond MAX_OPEN_RUNS the least recently used (the first entries) are let go.
   */
  private keepOpen(id: string, run: OpenRun): OpenRun {
    this.runs.delete(id);
    this.runs.set(id, run);
    while (this.runs.size > MAX_OPEN_RUNS) this.runs.delete(this.runs.keys().next().value!);
    return run;
  }

  /**
   * Eval rows of every run folder (watcher summaries and eval units), re-read at most every 10 s. Files
   * are named relative to the results folder (`<run>/evals/…`), as a shared report should name them.
   * A run folder that cannot be read at all is one warning row of its own, never every page's failure.
   */
  allEvalRows(): ResultRow[] {
    if (this.evalRows && Date.now() - this.evalRows.at < 10_000) return this.evalRows.rows;
    const rows = listRunIds(this.resultsDir).flatMap((id): ResultRow[] => {
      try {
        const files = runFiles(this.resultsDir, id);
        return files ? readLocalResults(files.dir, `results/${id}`, id, id) : [];
      } catch (err) {
        const why = (err as Error).message;
        return [
          {
            checkpointId: id,
            label: id,
            task: 'evals',
            numFewshot: 0,
            metrics: [],
            source: `results/${id}`,
            failed: `eval results not readable: ${why}`,
            warning: `${id}/evals: its eval results could not be read: ${why}`,
          },
        ];
      }
    });
    this.evalRows = { at: Date.now(), rows };
    return rows;
  }

  /**
   * The eval rows about a run's checkpoints (`<id>:…`), wherever they were read, and the unreadable
   * ones of its own folder (whatever checkpoint they would be about), so its page says what is wrong.
   */
  evalsOf(id: string): ResultRow[] {
    return this.allEvalRows().filter(
      (r) => r.checkpointId.startsWith(`${id}:`) || (r.warning !== undefined && r.source === `results/${id}`),
    );
  }

  /** The last value of the first of `keys` the run has. */
  private lastOf(r: OpenRun, keys: readonly string[]): number | undefined {
    for (const key of keys) {
      const pairs = r.index.column('series', key);
      if (pairs.length) return pairs[pairs.length - 1];
    }
    return undefined;
  }

  /** The latest step and reward of a run (the jobs view). */
  async progress(id: string): Promise<{ latestStep: number | undefined; latestReward: number | undefined }> {
    const r = await this.openRun(id);
    return {
      latestStep: r.table.markers.length ? r.table.first + r.table.markers.length - 1 : undefined,
      latestReward: this.lastOf(r, REWARD_KEYS),
    };
  }

  async run(id: string): Promise<RunAnswer> {
    const r = await this.openRun(id);
    const docs = runDocs(r.files.dir);
    const keys = [...r.index.keys('series'), ...r.derived.keys()];
    const lastStep = r.table.markers.length ? r.table.first + r.table.markers.length - 1 : undefined;
    const evals = this.evalsOf(id);
    return {
      id,
      trace: path.relative(r.files.dir, r.files.trace!),
      traces: r.files.traces,
      docs,
      index: {
        lines: r.index.manifest.lines,
        badLines: r.index.manifest.badLines,
        traceBytes: r.index.manifest.trace.size,
        lastUpdate: r.lastUpdate,
      },
      steps: { count: r.table.markers.length, first: r.table.first, last: lastStep, marker: r.table.marker },
      time: { min: r.index.manifest.tsMin, max: r.index.manifest.tsMax },
      meta: r.index.manifest.meta,
      fates: r.index.manifest.fates ?? null,
      histograms: r.index.manifest.histograms,
      spans: r.index.keys('spans').map((name) => ({ name, n: r.index.manifest.spans[name].n })),
      instants: r.index.keys('instants').map((name) => ({ name, n: r.index.manifest.instants[name].n })),
      series: keys.sort(),
      panels: resolvePanels(keys),
      evals: evals.map((e) => ({ ...e, step: stepOfCheckpoint(e.checkpointId, lastStep) })),
      evalTable: buildTable(evals),
      hasSamples: Boolean(r.files.samples || r.files.rollouts),
      lastValues: { reward: this.lastOf(r, REWARD_KEYS), loss: this.lastOf(r, ['metrics|loss']) },
      overview: overview(this.breakdownOf(r), r.index.manifest.fates),
    };
  }

  /** A series on the axis; `sum`: values of one x added up (bar panels: several counters a step). */
  private xy(r: OpenRun, key: string, axis: Axis, sum = false): { x: Float64Array; y: Float64Array } {
    const s = this.xyRaw(r, key, axis);
    return sum ? sumByX(s) : s;
  }

  private xyRaw(r: OpenRun, key: string, axis: Axis): { x: Float64Array; y: Float64Array } {
    const derived = r.derived.get(key);
    if (derived) {
      if (axis === 'step') return derived;
      // a derived series is per step: on the time axis each point sits at its step's marker
      const x = derived.x.map(
        (s) => r.table.markers[Math.min(r.table.markers.length - 1, s - r.table.first)],
      );
      return { x, y: derived.y };
    }
    return seriesOn(r.index, key, axis, r.table);
  }

  /** Series of one run, downsampled to `width` pixel columns over [from, to] (default: all). */
  async series(q: URLSearchParams): Promise<SeriesAnswer> {
    const id = q.get('id') ?? '';
    const r = await this.openRun(id);
    const axis = (q.get('axis') ?? 'step') as Axis;
    if (axis !== 'step' && axis !== 'time') throw new HttpError(400, `axis: step or time, not ${axis}`);
    const width = Math.min(MAX_WIDTH, Math.max(10, Math.round(num(q.get('width'), 1000))));
    const keys = (q.get('keys') ?? '').split(',').filter(Boolean);
    if (keys.length > 256) throw new HttpError(400, 'at most 256 series at once');
    const sum = new Set((q.get('sum') ?? '').split(',').filter(Boolean));
    // keyed by names from the request: no prototype for `__proto__` to reach
    const out = Object.create(null) as Record<string, XY>;
    for (const key of keys) {
      const { x, y } = this.xy(r, key, axis, sum.has(key));
      const from = num(q.get('from'), x.length ? x[0] : 0);
      const to = num(q.get('to'), x.length ? x[x.length - 1] : 1);
      out[key] = downsample(x, y, width, from, to);
    }
    return { id, axis, width, series: out };
  }

  async timeline(q: URLSearchParams): Promise<TimelineAnswer> {
    const r = await this.openRun(q.get('id') ?? '');
    const m = r.index.manifest;
    const width = Math.min(MAX_WIDTH, Math.max(10, Math.round(num(q.get('width'), 1200))));
    // `last=N`: the last N steps (from the marker N steps before the last), however long the run
    const last = q.get('last');
    const markers = r.table.markers;
    const lastFrom =
      last !== null && markers.length > Number(last) ? markers[markers.length - 1 - Number(last)] : undefined;
    const from = num(q.get('from'), lastFrom ?? m.tsMin);
    const to = num(q.get('to'), m.tsMax);
    return { from, to, width, lanes: timeline(r.index, from, to, width) };
  }

  private breakdownOf(r: OpenRun): StepBreakdown {
    r.breakdown ??= stepBreakdown(r.index, r.table);
    return r.breakdown;
  }

  async breakdown(q: URLSearchParams): Promise<BreakdownAnswer> {
    const r = await this.openRun(q.get('id') ?? '');
    return { ...this.breakdownOf(r) };
  }

  async samples(q: URLSearchParams): Promise<SamplesAnswer> {
    const r = await this.openRun(q.get('id') ?? '');
    const step = q.get('step');
    const prompt = q.get('prompt');
    if (step === null && prompt === null) throw new HttpError(400, 'give step=N or prompt=ID');
    return {
      ...lookupSamples(
        { samples: r.files.samples, rollouts: r.files.rollouts, indexDir: indexDirOf(r.files.trace!) },
        step !== null ? { step: num(step, 0) } : { prompt: prompt! },
      ),
    };
  }

  /** Several runs' series on the step axis, each named by what its config overrides. */
  async compare(q: URLSearchParams): Promise<CompareAnswer> {
    const ids = (q.get('ids') ?? '').split(',').filter(Boolean);
    if (ids.length === 0 || ids.length > 32) throw new HttpError(400, 'ids: 1 to 32 run ids');
    const axis = (q.get('axis') ?? 'step') as Axis;
    const width = Math.min(MAX_WIDTH, Math.max(10, Math.round(num(q.get('width'), 1000))));
    const runs = await Promise.all(ids.map((id) => this.openRun(id)));
    const docs = runs.map((r, i) => ({ id: ids[i], ...runDocs(r.files.dir) }));
    const labels = overrideLabels(
      docs.map((d) => ({ id: d.id, config: d.config, overrides: d.facts.overrides })),
    );
    const keys = new Set<string>();
    for (const r of runs) for (const k of [...r.index.keys('series'), ...r.derived.keys()]) keys.add(k);
    const wanted = (q.get('keys') ?? '').split(',').filter(Boolean);
    const sum = new Set((q.get('sum') ?? '').split(',').filter(Boolean));
    const series = Object.create(null) as Record<string, Record<string, XY>>;
    for (const key of wanted) {
      series[key] = Object.create(null) as Record<string, XY>;
      for (let i = 0; i < runs.length; i++) {
        const { x, y } = this.xy(runs[i], key, axis, sum.has(key));
        if (x.length) series[key][ids[i]] = downsample(x, y, width, x[0], x[x.length - 1]);
      }
    }
    const baseline = q.get('baseline') ?? undefined;
    const evals = ids.flatMap((id) => this.evalsOf(id));
    return {
      ids,
      labels: Object.fromEntries(labels),
      sweeps: Object.fromEntries(docs.map((d) => [d.id, d.facts.sweep ?? null])),
      panels: resolvePanels([...keys]),
      series,
      evalTable: buildTable(
        evals,
        baseline && evals.some((e) => e.label === baseline || e.checkpointId === baseline)
          ? baseline
          : undefined,
      ),
    };
  }

  /** `/api/passk`: the pass@k campaigns of the results folder (passk.ts). */
  passk(): Promise<PasskAnswer> {
    return this.passkCampaigns.answer();
  }

  /** Writes a run's notes (NOTES.md in its local folder; never uploaded). */
  writeNotes(id: string, text: string): NotesAnswer {
    const files = runFiles(this.resultsDir, id);
    if (!files) throw new HttpError(404, `no run ${JSON.stringify(id)}`);
    if (text.length > 1_000_000) throw new HttpError(413, 'notes: at most 1 MB');
    const file = path.join(files.dir, NOTES_FILE);
    writeFileAtomic(file, text);
    return { bytes: Buffer.byteLength(text) };
  }
}
