/// <reference lib="dom" />
/*
 * The dashboard page: plain DOM and uPlot, no framework. Views by the URL's hash: #/jobs, #/run/<id>,
 * #/compare/<id>,<id>… It asks the server for JSON (urls.ts), or, in an exported report, reads the same
 * answers from the page itself. Charts get data downsampled to their width; a live run redraws when the
 * server says its trace grew (server-sent events).
 */
import uPlot from 'uplot';
import type { ResolvedPanel } from '../panels';
import { compareSeriesUrl, REPORT_WIDTH, runSeriesUrl, TIMELINE_WINDOWS, urls } from '../urls';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
interface XY {
  x: number[];
  y: number[];
  n: number;
}

const inline: Record<string, unknown> | undefined = (() => {
  const el = document.getElementById('rlvr-data');
  return el ? (JSON.parse(el.textContent ?? '{}') as Record<string, unknown>) : undefined;
})();
const token = new URLSearchParams(location.search).get('token') ?? undefined;

/** What tests and the benchmark read: charts drawn, series per chart, when the view was ready. */
const probe = {
  view: '',
  charts: [] as { id: string; series: number; points: number }[],
  /** The seconds the timeline shows. */
  timeline: undefined as { from: number; to: number } | undefined,
  readyMs: NaN,
  startedMs: 0,
  updates: 0,
};
(window as unknown as { __rlvr: typeof probe }).__rlvr = probe;

async function api(url: string, init?: RequestInit): Promise<Json> {
  if (inline) {
    if (url in inline) return inline[url] as Json;
    throw new Error('not in this report (it holds the default views only)');
  }
  const headers: Record<string, string> = { ...(init?.headers as Record<string, string>) };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, { ...init, headers });
  const body = (await res.json()) as Json;
  if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
  return body;
}

// ---- small DOM helpers ----

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | undefined> = {},
  ...children: (Node | string | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'class') el.className = String(v);
    else el.setAttribute(k, String(v));
  }
  for (const c of children) if (c !== undefined && c !== false) el.append(c);
  return el;
}

function fmt(v: unknown, digits = 4): string {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return String(v);
    if (Number.isInteger(v)) return v.toLocaleString('en-US');
    return Number(v.toPrecision(digits)).toString();
  }
  return String(v);
}

function fmtSeconds(s: number | undefined): string {
  if (s === undefined || !Number.isFinite(s)) return '–';
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h}h${String(m).padStart(2, '0')}m` : `${m}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
}

const app = document.getElementById('app')!;

// ---- settings kept in the browser: theme, axis, smoothing, favourites ----

const store = {
  get: (k: string, d: string): string => {
    try {
      return localStorage.getItem(`rlvr.${k}`) ?? d;
    } catch {
      return d;
    }
  },
  set: (k: string, v: string): void => {
    try {
      localStorage.setItem(`rlvr.${k}`, v);
    } catch {
      // a report opened from a file may have no storage
    }
  },
};

const prefersDark = window.matchMedia?.('(prefers-color-scheme: dark)').matches;
let theme = store.get('theme', prefersDark ? 'dark' : 'light');
let axis = store.get('axis', 'step') as 'step' | 'time';
let smoothing = Number(store.get('smoothing', '0'));
/** Favourite panels (shown first in a run view) and favourite runs (first in the jobs view). */
const favourites = new Set<string>(JSON.parse(store.get('favourites', '[]')) as string[]);
const favouriteRuns = new Set<string>(JSON.parse(store.get('favouriteRuns', '[]')) as string[]);
document.documentElement.dataset.theme = theme;

const PALETTE = [
  '#2f7ed8',
  '#e4572e',
  '#29a36a',
  '#9c6ade',
  '#f2a541',
  '#17becf',
  '#d6336c',
  '#7f7f7f',
  '#8c564b',
  '#bcbd22',
  '#1f3a93',
  '#ff7f0e',
];
/** Eval points drawn over a panel's curves: colours its (up to 6) curves do not use. */
const EVAL_COLORS = PALETTE.slice(6);
const PHASE_COLORS: Record<string, string> = {
  generation: '#2f7ed8',
  verify: '#9c6ade',
  reference: '#f2a541',
  training: '#29a36a',
  sync: '#e4572e',
  other: '#7f7f7f',
};

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

/** Exponential moving average, as TensorBoard's smoothing slider (gaps kept). */
function smooth(y: (number | null)[], w: number): (number | null)[] {
  if (w <= 0) return y;
  let last: number | undefined;
  return y.map((v) => {
    if (v === null || !Number.isFinite(v)) return v;
    last = last === undefined ? v : last * w + v * (1 - w);
    return last;
  });
}

// ---- charts ----

let charts: uPlot[] = [];
function destroyCharts(): void {
  for (const c of charts) c.destroy();
  charts = [];
  probe.charts = [];
}

interface LineSpec {
  label: string;
  xy: XY;
  color: string;
  points?: boolean;
}

function chartWidth(el: HTMLElement): number {
  return Math.max(300, Math.floor(el.clientWidth || 600));
}

/** A uPlot chart of several series (each with its own x, joined), into `el`. */
function drawChart(
  el: HTMLElement,
  id: string,
  lines: LineSpec[],
  o: { stacked?: boolean; bars?: boolean; onClickX?: (x: number) => void; xLabel?: string },
): void {
  el.textContent = '';
  const usable = lines.filter((l) => l.xy.x.length > 0);
  if (usable.length === 0) {
    el.append(h('div', { class: 'empty' }, 'no data'));
    probe.charts.push({ id, series: 0, points: 0 });
    return;
  }
  const joined = uPlot.join(usable.map((l) => [l.xy.x, l.xy.y] as uPlot.AlignedData));
  let ys = joined.slice(1) as (number | null)[][];
  if (o.stacked) {
    const acc = new Array(joined[0].length).fill(0);
    ys = ys.map((y) => y.map((v, i) => (acc[i] += v ?? 0)));
    ys.reverse();
    usable.reverse();
  } else if (smoothing > 0) ys = ys.map((y, i) => (usable[i].points ? y : smooth(y, smoothing)));
  const text = cssVar('--fg');
  const grid = cssVar('--grid');
  const axisOpts = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
  const bars = uPlot.paths.bars!({ size: [0.8, 40] });
  const plot = new uPlot(
    {
      width: chartWidth(el),
      height: 220,
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      scales: { x: { time: axis === 'time' && o.xLabel === undefined ? false : false } },
      axes: [{ ...axisOpts, label: o.xLabel ?? (axis === 'step' ? 'step' : 'seconds') }, axisOpts],
      series: [
        {},
        ...usable.map((l) => ({
          label: l.label,
          stroke: l.color,
          width: 1.5,
          spanGaps: !o.stacked,
          fill: o.stacked ? `${l.color}99` : undefined,
          paths: l.points ? () => null : o.bars ? bars : undefined,
          points: l.points ? { show: true, size: 9, fill: l.color } : { show: false },
        })),
      ],
      hooks: o.onClickX
        ? {
            ready: [
              (u: uPlot) => {
                u.over.addEventListener('click', () => {
                  const idx = u.cursor.idx;
                  if (idx !== null && idx !== undefined) o.onClickX!(u.data[0][idx]);
                });
              },
            ],
          }
        : {},
    },
    [joined[0], ...ys] as uPlot.AlignedData,
    el,
  );
  charts.push(plot);
  el.dataset.series = String(usable.length);
  probe.charts.push({ id, series: usable.length, points: joined[0].length });
}

function panelBox(id: string, title: string, subtitle: string, ...body: (Node | string)[]): HTMLElement {
  const star = h('button', { class: 'star', title: 'favourite: show first' }, favourites.has(id) ? '★' : '☆');
  star.addEventListener('click', () => {
    if (favourites.has(id)) favourites.delete(id);
    else favourites.add(id);
    store.set('favourites', JSON.stringify([...favourites]));
    star.textContent = favourites.has(id) ? '★' : '☆';
  });
  return h(
    'section',
    { class: `panel${favourites.has(id) ? ' fav' : ''}`, 'data-panel': id },
    h('header', {}, h('div', {}, h('h2', {}, title), h('div', { class: 'sub' }, subtitle)), star),
    ...body,
  );
}

function shortKey(key: string): string {
  return key.split('|').slice(1).join('|') || key;
}

// ---- the jobs view ----

async function jobsView(): Promise<void> {
  probe.view = 'jobs';
  const data = await api(urls.jobs());
  const jobs = data.jobs as Json[];
  const selected = new Set<string>();
  const compareBtn = h('button', { disabled: true }, 'Compare selected');
  compareBtn.addEventListener(
    'click',
    () => (location.hash = `#/compare/${[...selected].map(encodeURIComponent).join(',')}`),
  );
  const sweeps = [...new Set(jobs.map((j) => j.sweep).filter(Boolean))] as string[];
  const ordered = [...jobs].sort(
    (a, b) => Number(favouriteRuns.has(b.name)) - Number(favouriteRuns.has(a.name)),
  );
  const rows = ordered.map((j) => {
    const star = h(
      'button',
      { class: 'star', title: 'favourite run: listed first' },
      favouriteRuns.has(j.name) ? '★' : '☆',
    );
    star.addEventListener('click', () => {
      if (favouriteRuns.has(j.name)) favouriteRuns.delete(j.name);
      else favouriteRuns.add(j.name);
      store.set('favouriteRuns', JSON.stringify([...favouriteRuns]));
      void route();
    });
    const box = h('input', { type: 'checkbox', disabled: !j.hasTrace, 'aria-label': `select ${j.name}` });
    box.addEventListener('change', () => {
      if (box.checked) selected.add(j.name);
      else selected.delete(j.name);
      compareBtn.disabled = selected.size < 1;
    });
    const name = j.hasTrace ? h('a', { href: `#/run/${encodeURIComponent(j.name)}` }, j.name) : j.name;
    return h(
      'tr',
      {
        class: `${j.flags.length ? 'flagged' : ''}${favouriteRuns.has(j.name) ? ' fav' : ''}`,
        'data-job': j.name,
      },
      h('td', {}, star, box),
      h('td', {}, name, ...(j.flags as string[]).map((f) => h('div', { class: 'flag' }, `⚠ ${f}`))),
      h(
        'td',
        { class: `status s-${j.status}` },
        j.secondaryStatus && j.secondaryStatus !== j.status ? `${j.status} / ${j.secondaryStatus}` : j.status,
      ),
      h('td', {}, j.instance),
      h('td', {}, j.started ? j.started.replace('T', ' ').slice(0, 16) : '–'),
      h('td', { class: 'num' }, fmtSeconds(j.elapsedSeconds)),
      h(
        'td',
        { class: 'num' },
        j.cost === undefined || j.cost === null
          ? '–'
          : `$${j.cost.toFixed(2)}${j.costFinal ? '' : ' so far'}`,
      ),
      h('td', {}, j.description ?? ''),
      h(
        'td',
        {},
        j.sweep ? h('a', { href: `#/compare/sweep/${encodeURIComponent(j.sweep)}` }, j.sweep) : '',
        j.overrides ? h('div', { class: 'sub' }, j.overrides) : '',
      ),
      h(
        'td',
        { class: 'num' },
        j.s3Checkpoints ? `S3 ${j.s3Checkpoints.count}${j.s3Checkpoints.final ? ' +final' : ''}` : '',
        j.localCheckpoints !== undefined && j.localCheckpoints !== null
          ? h('div', { class: 'sub' }, `here ${j.localCheckpoints}`)
          : '',
      ),
      h('td', { class: 'num' }, fmt(j.latestStep)),
      h('td', { class: 'num' }, fmt(j.latestReward, 3)),
    );
  });
  app.replaceChildren(
    h(
      'section',
      { class: 'panel' },
      h(
        'header',
        {},
        h(
          'div',
          {},
          h('h2', {}, `Jobs (${jobs.length})`),
          h('div', { class: 'sub' }, `SageMaker: ${data.aws}; refreshes by itself`),
        ),
        h(
          'div',
          {},
          ...sweeps.map((s) =>
            h('a', { class: 'chip', href: `#/compare/sweep/${encodeURIComponent(s)}` }, `sweep ${s}`),
          ),
          compareBtn,
        ),
      ),
      h(
        'table',
        { class: 'jobs' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...[
              '',
              'job',
              'status',
              'instance',
              'started',
              'elapsed',
              'cost',
              'description',
              'sweep',
              'ckpts',
              'step',
              'reward',
            ].map((t) => h('th', {}, t)),
          ),
        ),
        h('tbody', {}, ...rows),
      ),
    ),
  );
  probe.readyMs = performance.now() - probe.startedMs;
}

// ---- the run view ----

function metaTable(meta: Json): HTMLElement {
  return h(
    'table',
    { class: 'kv' },
    ...Object.entries(meta).map(([k, v]) =>
      h('tr', {}, h('th', {}, k), h('td', {}, typeof v === 'object' ? JSON.stringify(v) : fmt(v))),
    ),
  );
}

/** Utilization, what became of the samples, and the advice that follows (overview.ts). */
function overviewEl(o: Json): HTMLElement {
  const pct = (v: number | undefined): string => (v === undefined || v === null ? '–' : `${v.toFixed(0)}%`);
  const s = o.samples as Json | undefined;
  return h(
    'div',
    { class: 'overview' },
    h(
      'div',
      { class: 'util' },
      h('span', {}, 'rollout lanes busy ', h('strong', {}, pct(o.utilization.rollout))),
      h('span', {}, 'trainer busy ', h('strong', {}, pct(o.utilization.trainer))),
      s
        ? h(
            'span',
            {},
            `samples used ${pct(s.usedPct)}, wasted ${pct(s.wastedPct)}, filtered ${pct(s.filteredPct)}, failed ${pct(s.failedPct)}`,
          )
        : '',
    ),
    ...(o.advice as Json[]).map((a) =>
      h(
        'div',
        { class: `advice ${a.level}` },
        a.text,
        a.suggestion ? h('span', { class: 'sub' }, ` — ${a.suggestion}`) : '',
      ),
    ),
  );
}

function evalTableEl(table: Json): HTMLElement {
  if (!table || table.rows.length === 0)
    return h('div', { class: 'empty' }, 'no eval results for these checkpoints');
  return h(
    'table',
    { class: 'evals' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, 'checkpoint'),
        ...(table.columns as Json[]).map((c) => h('th', {}, `${c.task} ${c.numFewshot}-shot ${c.metric}`)),
      ),
    ),
    h(
      'tbody',
      {},
      ...(table.rows as Json[]).map((r) =>
        h(
          'tr',
          {},
          h('td', {}, r.label),
          ...(r.cells as Json[]).map((c) =>
            h(
              'td',
              { class: 'num' },
              !c
                ? '–'
                : 'failed' in c
                  ? 'failed'
                  : `${fmt(c.value, 4)}${c.stderr !== undefined ? ` ±${fmt(c.stderr, 2)}` : ''}${c.delta !== undefined ? ` (${c.delta >= 0 ? '+' : ''}${fmt(c.delta, 3)})` : ''}`,
            ),
          ),
        ),
      ),
    ),
  );
}

/** Where the timeline's time axis starts on its canvas (lane names to the left), and its right margin. */
const TIMELINE_LABEL_W = 190;
const TIMELINE_MARGIN = 8;

/** The seconds under pixel `px` of a timeline drawn over [from, to] on a canvas `width` wide. */
function timelineSecondsAt(px: number, width: number, from: number, to: number): number {
  const f = (px - TIMELINE_LABEL_W) / (width - TIMELINE_LABEL_W - TIMELINE_MARGIN);
  return from + Math.min(1, Math.max(0, f)) * (to - from);
}

const TIMELINE_ROW_H = 14;
/** The timeline each canvas shows (what a hover looks up). */
const drawnTimelines = new WeakMap<HTMLCanvasElement, Json>();

/** The bar under (px, py) of the timeline drawn on `canvas`, described; undefined over none. */
function timelineBarAt(canvas: HTMLCanvasElement, px: number, py: number): string | undefined {
  const t = drawnTimelines.get(canvas);
  if (!t || px < TIMELINE_LABEL_W) return undefined;
  const lane = (t.lanes as { lane: string; bars: number[] }[])[Math.floor(py / TIMELINE_ROW_H)];
  if (!lane) return undefined;
  const w = canvas.clientWidth;
  const at = timelineSecondsAt(px, w, t.from, t.to);
  const slack = timelineSecondsAt(px + 2, w, t.from, t.to) - at; // bars are at least a pixel wide
  for (let k = 0; k < lane.bars.length; k += 3) {
    const [a, b, n] = [lane.bars[k], lane.bars[k + 1], lane.bars[k + 2]];
    if (at >= a - slack && at <= b + slack)
      return `${lane.lane}: ${fmt(a, 6)}–${fmt(b, 6)} s (${fmt(b - a, 3)} s${n > 1 ? `, ${n} spans merged at this zoom` : ''})`;
  }
  return undefined;
}

/** Pipeline timeline: lanes of spans (merged to pixels) on a canvas, and the per-step breakdown. */
function drawTimeline(canvas: HTMLCanvasElement, t: Json): void {
  drawnTimelines.set(canvas, t);
  const lanes = t.lanes as { lane: string; phase: string; bars: number[] }[];
  const rowH = TIMELINE_ROW_H;
  const labelW = TIMELINE_LABEL_W;
  const width = canvas.clientWidth || 1000;
  const ratio = window.devicePixelRatio || 1;
  canvas.width = width * ratio;
  canvas.height = (lanes.length * rowH + 24) * ratio;
  canvas.style.height = `${lanes.length * rowH + 24}px`;
  const g = canvas.getContext('2d')!;
  g.scale(ratio, ratio);
  g.font = '11px system-ui, sans-serif';
  g.fillStyle = cssVar('--fg');
  const x = (v: number): number =>
    labelW + ((v - t.from) / (t.to - t.from || 1)) * (width - labelW - TIMELINE_MARGIN);
  lanes.forEach((l, i) => {
    const y = i * rowH;
    g.fillStyle = cssVar('--fg');
    g.fillText(l.lane.slice(0, 30), 4, y + 11);
    g.fillStyle = PHASE_COLORS[l.phase] ?? '#888';
    for (let k = 0; k < l.bars.length; k += 3) {
      const a = x(l.bars[k]);
      g.fillRect(a, y + 2, Math.max(1, x(l.bars[k + 1]) - a), rowH - 4);
    }
  });
  g.fillStyle = cssVar('--muted');
  g.fillText(`${fmt(t.from, 5)} s`, labelW, lanes.length * rowH + 16);
  const end = `${fmt(t.to, 5)} s`;
  g.fillText(end, width - TIMELINE_MARGIN - g.measureText(end).width, lanes.length * rowH + 16);
  probe.timeline = { from: t.from, to: t.to };
  probe.charts.push({
    id: 'timeline',
    series: lanes.length,
    points: lanes.reduce((a, l) => a + l.bars.length / 3, 0),
  });
}

function fatesChart(el: HTMLElement, fates: Record<string, Record<string, number>>): void {
  const versions = [...new Set(Object.values(fates).flatMap((f) => Object.keys(f)))]
    .map(Number)
    .sort((a, b) => a - b);
  const lines = Object.entries(fates).map(([fate, per], i) => ({
    label: fate,
    color:
      (
        { used: '#29a36a', wasted: '#e4572e', filtered: '#f2a541', failed: '#7f7f7f' } as Record<
          string,
          string
        >
      )[fate] ?? PALETTE[i],
    xy: { x: versions, y: versions.map((v) => per[String(v)] ?? 0), n: versions.length },
  }));
  drawChart(el, 'fates', lines, { stacked: true, bars: true, xLabel: 'version' });
}

/** Correct vs wrong completion lengths over the whole run, each in percent of its own count. */
function histogramChart(el: HTMLElement, hist: Record<string, Record<string, number>>): void {
  const bins = [...new Set(Object.values(hist).flatMap((x) => Object.keys(x)))]
    .map(Number)
    .sort((a, b) => a - b);
  const line = (name: string, label: string, color: string): LineSpec => {
    const h = hist[name] ?? {};
    const total = Object.values(h).reduce((a, b) => a + b, 0) || 1;
    return {
      label,
      color,
      xy: { x: bins, y: bins.map((b) => (100 * (h[String(b)] ?? 0)) / total), n: bins.length },
    };
  };
  drawChart(
    el,
    'length-histogram',
    [line('len_correct', 'correct %', '#29a36a'), line('len_wrong', 'wrong %', '#e4572e')],
    {
      bars: true,
      xLabel: 'completion tokens',
    },
  );
}

let liveRefresh: (() => void) | undefined;

async function runView(id: string): Promise<void> {
  probe.view = 'run';
  const run = await api(urls.run(id));
  const width = inline ? REPORT_WIDTH : Math.max(400, Math.min(2000, Math.floor(app.clientWidth / 2)));
  const panels = run.panels as ResolvedPanel[];
  const sections: HTMLElement[] = [];

  const steps = run.steps as Json;
  const last = (key: string): string => {
    const s = run.lastValues?.[key];
    return s === undefined ? '–' : fmt(s, 4);
  };
  sections.push(
    h(
      'div',
      { class: 'two' },
      panelBox(
        'config',
        'Run configuration',
        run.trace,
        metaTable(run.meta),
        run.docs.config
          ? h('details', {}, h('summary', {}, 'config.yaml'), h('pre', {}, run.docs.config))
          : '',
      ),
      panelBox(
        'overview',
        'Overview',
        `${fmt(run.index.lines)} events indexed${run.index.badLines ? `, ${run.index.badLines} unreadable` : ''}`,
        overviewEl(run.overview),
        metaTable({
          steps: steps.count ? `${steps.first}–${steps.last} (counted by ${steps.marker})` : 'none counted',
          'trace time': fmtSeconds(run.time.max - run.time.min),
          'trace bytes': fmt(run.index.traceBytes),
          spans: (run.spans as Json[]).map((s) => `${s.name} ×${s.n}`).join(', '),
          'latest reward': last('reward'),
          'latest loss': last('loss'),
        }),
      ),
    ),
  );

  const timelineBox = h('canvas', { class: 'timeline' });
  const windowSel = h(
    'select',
    { 'aria-label': 'timeline window' },
    ...TIMELINE_WINDOWS.map((w, i) =>
      h('option', { value: String(i) }, w === undefined ? 'whole run' : `last ${w} steps`),
    ),
  );
  windowSel.value = '2'; // the last 10 steps: a long run's whole timeline is a blur
  const timelineWidth = (): number =>
    inline ? REPORT_WIDTH : Math.max(400, timelineBox.clientWidth || 1000);
  // Drag across the timeline to zoom into those seconds (asked of the server at the pixels drawn);
  // a double click or another window goes back. A report holds the windows only.
  let zoom: { from: number; to: number } | undefined;
  const timelineUrl = (): string =>
    urls.timeline(id, timelineWidth(), TIMELINE_WINDOWS[Number(windowSel.value)], zoom);
  const unzoom = h('button', { class: 'unzoom', hidden: true }, 'reset zoom');
  const redrawTimeline = async (): Promise<void> => {
    unzoom.hidden = !zoom;
    const t = await api(timelineUrl());
    probe.charts = probe.charts.filter((c) => c.id !== 'timeline');
    drawTimeline(timelineBox, t);
  };
  windowSel.addEventListener('change', () => {
    zoom = undefined;
    void redrawTimeline();
  });
  unzoom.addEventListener('click', () => {
    zoom = undefined;
    void redrawTimeline();
  });
  const selection = h('div', { class: 'tl-select', hidden: true });
  // Hovering a bar names its lane, its seconds and how long it took.
  const tip = h('div', { class: 'tl-tip', hidden: true });
  timelineBox.addEventListener('pointermove', (e) => {
    const r = timelineBox.getBoundingClientRect();
    if (!selection.hidden) {
      tip.hidden = true; // dragging
      return;
    }
    const text = timelineBarAt(timelineBox, e.clientX - r.left, e.clientY - r.top);
    tip.hidden = text === undefined;
    if (text === undefined) return;
    tip.textContent = text;
    tip.style.left = `${Math.min(e.clientX - r.left + 12, Math.max(0, r.width - 420))}px`;
    tip.style.top = `${e.clientY - r.top + 14}px`;
  });
  timelineBox.addEventListener('pointerleave', () => (tip.hidden = true));
  if (!inline) {
    let startPx: number | undefined;
    const pxOf = (e: MouseEvent): number => e.clientX - timelineBox.getBoundingClientRect().left;
    // the pointer is captured while dragging: moves and the release come here even off the canvas
    timelineBox.addEventListener('pointerdown', (e) => {
      startPx = Math.max(TIMELINE_LABEL_W, pxOf(e));
      timelineBox.setPointerCapture(e.pointerId);
      e.preventDefault();
    });
    timelineBox.addEventListener('pointermove', (e) => {
      if (startPx === undefined) return;
      const px = Math.max(TIMELINE_LABEL_W, Math.min(timelineBox.clientWidth, pxOf(e)));
      selection.hidden = false;
      selection.style.left = `${Math.min(startPx, px)}px`;
      selection.style.width = `${Math.abs(px - startPx)}px`;
    });
    timelineBox.addEventListener('pointerup', (e) => {
      if (startPx === undefined) return;
      const [a, b] = [startPx, pxOf(e)].sort((p, q) => p - q);
      startPx = undefined;
      selection.hidden = true;
      const shown = drawnTimelines.get(timelineBox);
      if (b - a < 4 || !shown) return;
      const w = timelineBox.clientWidth;
      zoom = {
        from: timelineSecondsAt(a, w, shown.from, shown.to),
        to: timelineSecondsAt(b, w, shown.from, shown.to),
      };
      void redrawTimeline();
    });
    timelineBox.addEventListener('dblclick', () => {
      if (!zoom) return;
      zoom = undefined;
      void redrawTimeline();
    });
  }
  const breakdownBox = h('div', { class: 'chart' });
  sections.push(
    panelBox(
      'timeline',
      'Pipeline timeline',
      `spans per lane (generation, verify, reference, training, sync), merged to pixels${inline ? '' : '; drag to zoom, double-click to go back'}; below: where each step’s time went and how long GPUs sat idle`,
      h('div', { class: 'controls' }, windowSel, unzoom),
      h('div', { class: 'tl-wrap' }, timelineBox, selection, tip),
      breakdownBox,
    ),
  );

  const chartBoxes: { panel: ResolvedPanel; el: HTMLElement }[] = [];
  const histogramBox = h('div', { class: 'chart' });
  const evalBox = h('div', { class: 'chart' });
  const ordered = [...panels].sort((a, b) => Number(favourites.has(b.id)) - Number(favourites.has(a.id)));
  for (const p of ordered) {
    const el = h('div', { class: 'chart' });
    chartBoxes.push({ panel: p, el });
    sections.push(panelBox(p.id, p.title, p.subtitle, el));
    if (p.id === 'completion-length' && run.histograms?.len_correct)
      sections.push(
        panelBox(
          'length-histogram',
          'Completion length, whole run',
          'share of correct and of wrong completions per 100 tokens',
          histogramBox,
        ),
      );
    if (p.id === 'rewards')
      sections.push(
        panelBox(
          'eval-points',
          'Evaluations on the curve',
          'eval results of this run’s checkpoints at their steps',
          evalBox,
        ),
      );
  }
  const fatesBox = h('div', { class: 'chart' });
  if (run.fates)
    sections.push(
      panelBox(
        'fates',
        'Sample fates',
        'per version: used, wasted, filtered, failed (cumulative, at the end of the trace)',
        fatesBox,
      ),
    );
  sections.push(
    panelBox(
      'eval-table',
      'Evaluations',
      'the watcher’s results and rlvr eval results of this run’s checkpoints',
      evalTableEl(run.evalTable),
    ),
  );

  const samplesOut = h(
    'div',
    { class: 'samples' },
    run.hasSamples
      ? 'click a step on any chart, or look up a prompt id'
      : 'no samples.jsonl / rollouts.jsonl beside this trace',
  );
  const promptInput = h('input', { type: 'search', placeholder: 'prompt id', 'aria-label': 'prompt id' });
  const showSamples = async (by: { step?: number; prompt?: string }): Promise<void> => {
    samplesOut.textContent = 'loading…';
    try {
      const s = await api(urls.samples(id, by));
      samplesOut.replaceChildren(
        h(
          'div',
          { class: 'sub' },
          by.step !== undefined ? `step ${by.step}` : `prompt ${by.prompt}`,
          `: ${s.rollouts.length} rollouts, ${s.events.length} events${s.more ? ` (${s.more} more)` : ''}`,
        ),
        ...(s.rollouts as Json[]).map((r) =>
          h(
            'details',
            { class: 'rollout' },
            h(
              'summary',
              {},
              `${r.prompt_id} · v${fmt(r.generated_at_version)} · rewards ${JSON.stringify(r.rewards)}`,
            ),
            h('pre', {}, String(r.prompt ?? '')),
            ...((r.completions as string[]) ?? []).map((c, i) =>
              h('pre', { class: (r.rewards?.[i] ?? 0) > 0 ? 'good' : 'bad' }, c),
            ),
          ),
        ),
        ...(s.events.length
          ? [h('pre', { class: 'events' }, (s.events as Json[]).map((e) => JSON.stringify(e)).join('\n'))]
          : []),
      );
    } catch (e) {
      samplesOut.textContent = (e as Error).message;
    }
  };
  promptInput.addEventListener('change', () => void showSamples({ prompt: promptInput.value.trim() }));
  sections.push(
    panelBox(
      'samples',
      'Samples and rollouts',
      'by step (click a chart) or by prompt id',
      promptInput,
      samplesOut,
    ),
  );

  const notes = h('textarea', { rows: 6, 'aria-label': 'notes' });
  notes.value = run.docs.notes ?? '';
  const save = h(
    'button',
    { disabled: Boolean(inline) },
    inline ? 'notes are read-only in a report' : 'Save notes',
  );
  const saved = h('span', { class: 'sub' });
  save.addEventListener('click', async () => {
    try {
      const r = await api(urls.notes(id), {
        method: 'PUT',
        body: notes.value,
        headers: { 'content-type': 'text/plain' },
      });
      saved.textContent = ` saved (${r.bytes} bytes, NOTES.md in the local run folder)`;
    } catch (e) {
      saved.textContent = ` ${(e as Error).message}`;
    }
  });
  sections.push(
    panelBox(
      'notes',
      'Notes and results',
      'NOTES.md (saved to the local run folder only), RESULTS.md and run.json',
      notes,
      h('div', {}, save, saved),
      run.docs.results
        ? h('details', { open: true }, h('summary', {}, 'RESULTS.md'), h('pre', {}, run.docs.results))
        : '',
      run.docs.runInfo
        ? h(
            'details',
            {},
            h('summary', {}, 'run.json'),
            h('pre', {}, JSON.stringify(run.docs.runInfo, null, 2)),
          )
        : '',
    ),
  );

  app.replaceChildren(h('h1', {}, id), ...sections);

  const draw = async (): Promise<void> => {
    destroyCharts();
    // In the panels' own order (not favourites first): an exported report answers exactly this URL.
    const seriesUrl = runSeriesUrl(id, panels, axis, width);
    const [series, tl, bd] = await Promise.all([
      panels.length ? api(seriesUrl) : Promise.resolve({ series: {} }),
      api(timelineUrl()),
      api(urls.breakdown(id)),
    ]);
    const onClickX =
      run.hasSamples && axis === 'step'
        ? (x: number) => void showSamples({ step: Math.round(x) })
        : undefined;
    const evalPoints = new Map<string, XY>();
    for (const e of run.evals as Json[]) {
      if (e.step === undefined || e.step === null || !e.metrics?.length) continue;
      const key = `${e.task} ${e.metrics[0].metric}`;
      const p = evalPoints.get(key) ?? { x: [], y: [], n: 0 };
      p.x.push(e.step);
      p.y.push(e.metrics[0].value);
      evalPoints.set(key, p);
    }
    const evalLines = [...evalPoints].map(([k, xy], i) => {
      const order = xy.x.map((_, j) => j).sort((a, b) => xy.x[a] - xy.x[b]);
      return {
        label: k,
        color: PALETTE[i % PALETTE.length],
        points: true,
        xy: { x: order.map((j) => xy.x[j]), y: order.map((j) => xy.y[j]), n: xy.x.length },
      };
    });
    // Eval scores that are fractions (accuracy, pass@1) are drawn on the reward curves too, as points at
    // their checkpoints' steps; every eval is also in its own chart below.
    const onRewards =
      axis === 'step'
        ? evalLines
            .filter((l) => l.xy.y.every((v) => v >= 0 && v <= 1))
            .map((l, i) => ({ ...l, label: `eval ${l.label}`, color: EVAL_COLORS[i % EVAL_COLORS.length] }))
        : [];
    for (const { panel, el } of chartBoxes) {
      drawChart(
        el,
        panel.id,
        [
          ...panel.keys.map((k, i) => ({
            label: shortKey(k),
            xy: series.series[k] as XY,
            color: PALETTE[i % PALETTE.length],
          })),
          ...(panel.id === 'rewards' ? onRewards : []),
        ],
        { stacked: panel.stacked, bars: panel.bars, onClickX },
      );
    }
    if (axis === 'step') drawChart(evalBox, 'eval-points', evalLines, { onClickX });
    else evalBox.replaceChildren(h('div', { class: 'empty' }, 'eval points are drawn on the step axis'));
    drawTimeline(timelineBox, tl);
    const b = bd as Json;
    const phases = Object.entries(b.phases as Record<string, number[]>).filter(([, v]) =>
      v.some((x) => x > 0),
    );
    drawChart(
      breakdownBox,
      'breakdown',
      [
        ...phases.map(([p, v]) => ({
          label: `${p} s`,
          color: PHASE_COLORS[p],
          xy: { x: b.steps, y: v, n: v.length },
        })),
        {
          label: 'trainer idle s',
          color: '#d6336c',
          xy: { x: b.steps, y: b.trainerIdle, n: b.steps.length },
        },
        {
          label: 'rollout idle s (per lane)',
          color: '#17becf',
          xy: { x: b.steps, y: b.rolloutIdle, n: b.steps.length },
        },
        { label: 'step s', color: '#7f7f7f', xy: { x: b.steps, y: b.duration, n: b.steps.length } },
      ],
      { xLabel: 'step', onClickX },
    );
    if (run.fates) fatesChart(fatesBox, run.fates);
    if (run.histograms?.len_correct) histogramChart(histogramBox, run.histograms);
    probe.readyMs = performance.now() - probe.startedMs;
  };
  await draw();
  liveRefresh = () => {
    probe.updates++;
    void draw();
  };
}

// ---- the compare view ----

async function compareView(spec: string): Promise<void> {
  probe.view = 'compare';
  let ids: string[];
  if (spec.startsWith('sweep/')) {
    const sweep = decodeURIComponent(spec.slice(6));
    const jobs = (await api(urls.jobs())).jobs as Json[];
    ids = jobs.filter((j) => j.sweep === sweep && j.hasTrace).map((j) => j.name as string);
  } else ids = spec.split(',').map(decodeURIComponent).filter(Boolean);
  if (ids.length === 0) throw new Error('nothing to compare: no runs with traces');
  const width = inline ? REPORT_WIDTH : Math.max(400, Math.min(2000, Math.floor(app.clientWidth / 2)));
  const head = await api(urls.compare(ids, [], axis, width));
  const panels = head.panels as ResolvedPanel[];
  const chosen = new Map(panels.map((p) => [p.id, p.keys[0]]));
  const baselineSelect = h('select', { 'aria-label': 'baseline' }, h('option', { value: '' }, 'no baseline'));
  for (const r of (head.evalTable?.rows ?? []) as Json[])
    baselineSelect.append(h('option', { value: r.label }, r.label));
  const evalBox = h('div', {}, evalTableEl(head.evalTable));
  baselineSelect.addEventListener('change', async () => {
    const t = await api(urls.compare(ids, [], axis, width, baselineSelect.value || undefined));
    evalBox.replaceChildren(evalTableEl(t.evalTable));
  });
  const boxes = panels.map((p) => {
    const el = h('div', { class: 'chart' });
    const select = h(
      'select',
      { 'aria-label': `${p.title} series` },
      ...p.keys.map((k) => h('option', { value: k }, shortKey(k))),
    );
    select.addEventListener('change', () => {
      chosen.set(p.id, select.value);
      void draw();
    });
    return { p, el, box: panelBox(`cmp-${p.id}`, p.title, p.subtitle, select, el) };
  });
  app.replaceChildren(
    h('h1', {}, `Compare ${ids.length} runs`),
    h(
      'div',
      { class: 'legend-names' },
      ...ids.map((id, i) =>
        h(
          'span',
          { style: `color:${PALETTE[i % PALETTE.length]}` },
          `■ ${head.labels[id]} `,
          h('a', { href: `#/run/${encodeURIComponent(id)}` }, `(${id})`),
        ),
      ),
    ),
    panelBox('cmp-evals', 'Evaluations side by side', 'deltas to the baseline row', baselineSelect, evalBox),
    ...boxes.map((b) => b.box),
  );
  const draw = async (): Promise<void> => {
    destroyCharts();
    const data = await api(compareSeriesUrl(ids, panels, chosen, axis, width));
    for (const { p, el } of boxes) {
      const key = chosen.get(p.id)!;
      drawChart(
        el,
        `cmp-${p.id}`,
        ids.map((id, i) => ({
          label: String(head.labels[id]),
          color: PALETTE[i % PALETTE.length],
          xy: (data.series[key]?.[id] as XY) ?? { x: [], y: [], n: 0 },
        })),
        { bars: p.bars },
      );
    }
    probe.readyMs = performance.now() - probe.startedMs;
  };
  await draw();
  liveRefresh = () => {
    probe.updates++;
    void draw();
  };
}

// ---- frame, routing, live updates ----

function toolbar(): HTMLElement {
  const axisSel = h(
    'select',
    { 'aria-label': 'x axis' },
    h('option', { value: 'step' }, 'x: step'),
    h('option', { value: 'time' }, 'x: wall time'),
  );
  axisSel.value = axis;
  axisSel.addEventListener('change', () => {
    axis = axisSel.value as 'step' | 'time';
    store.set('axis', axis);
    void route();
  });
  const smoothIn = h('input', { type: 'range', min: 0, max: 0.99, step: 0.01, 'aria-label': 'smoothing' });
  smoothIn.value = String(smoothing);
  smoothIn.addEventListener('change', () => {
    smoothing = Number(smoothIn.value);
    store.set('smoothing', String(smoothing));
    liveRefresh?.();
  });
  const themeBtn = h('button', { title: 'light / dark' }, '◐');
  themeBtn.addEventListener('click', () => {
    theme = theme === 'dark' ? 'light' : 'dark';
    document.documentElement.dataset.theme = theme;
    store.set('theme', theme);
    liveRefresh?.();
  });
  return h(
    'nav',
    {},
    h('a', { href: '#/jobs', class: 'brand' }, 'rlvr'),
    h('a', { href: '#/jobs' }, 'Jobs'),
    inline ? h('span', { class: 'sub' }, ' report (exported; no server)') : '',
    h('span', { class: 'spacer' }),
    axisSel,
    h('label', {}, 'smoothing ', smoothIn),
    themeBtn,
  );
}

async function route(): Promise<void> {
  liveRefresh = undefined;
  destroyCharts();
  probe.readyMs = NaN;
  probe.startedMs = performance.now();
  const hash = location.hash.replace(/^#\/?/, '') || (inline ? String(inline.__start ?? 'jobs') : 'jobs');
  try {
    if (hash.startsWith('run/')) await runView(decodeURIComponent(hash.slice(4)));
    else if (hash.startsWith('compare/')) await compareView(hash.slice(8));
    else await jobsView();
  } catch (e) {
    app.replaceChildren(h('div', { class: 'error' }, (e as Error).message));
    probe.readyMs = performance.now() - probe.startedMs;
  }
}

document.body.prepend(toolbar());
window.addEventListener('hashchange', () => void route());
void route();

if (!inline && typeof EventSource !== 'undefined') {
  const events = new EventSource(`/api/events${token ? `?token=${encodeURIComponent(token)}` : ''}`);
  events.addEventListener('run', (ev) => {
    const id = (JSON.parse((ev as MessageEvent).data) as { id: string | null }).id;
    const hash = decodeURIComponent(location.hash);
    if (liveRefresh && id && (hash === `#/run/${id}` || (hash.startsWith('#/compare/') && hash.includes(id))))
      liveRefresh();
  });
  events.addEventListener('jobs', () => {
    if (probe.view === 'jobs') void route();
  });
  setInterval(() => {
    if (probe.view === 'jobs' && document.visibilityState === 'visible') void route();
  }, 60_000);
}
