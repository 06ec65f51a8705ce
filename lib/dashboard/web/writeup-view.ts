/// <reference lib="dom" />
/*
 * The writeup view (#/writeup): the page `rlvr report --spec` writes, like the team's writeup pages —
 * training curves, eval accuracy over steps, pass@k curves per benchmark, and a summary table against
 * the base model, for the runs the spec names (colours and labels as the spec gives them). Presets
 * (the spec's `presets`) pick which runs are shown. Its data is one answer (writeup.ts) inlined in
 * the page; the dashboard server has no spec, so it does not serve this view.
 */
import type { PasskCurve, WriteupAnswer } from '../writeup';
import { PALETTE, smooth } from './charts';
import { urls } from '../urls';
import { api, probe } from './client';
import { chart, destroyPlots, type Line } from './curve-chart';
import { app, h, panelBox } from './dom';
import { settings } from './settings';

const BASE_COLOR = '#7f7f7f';

const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;

function passkLine(label: string, color: string, c: PasskCurve, base: boolean): Line | undefined {
  // the unbiased estimate; a source with only their first-k figure is drawn dotted, and said so
  const unbiased = c.unbiased.some((v) => v !== null);
  const y = unbiased ? c.unbiased : c.firstK;
  if (!y.some((v) => v !== null)) return undefined;
  return {
    label: `${label}${unbiased ? '' : ' (first-k figure)'}`,
    color,
    x: c.k,
    y,
    dash: unbiased ? (base ? [6, 4] : undefined) : [2, 3],
    points: true,
  };
}

function fmtDelta(d: number): string {
  const pp = d * 100;
  return `${pp >= 0 ? '+' : '−'}${Math.abs(pp).toFixed(1)} pp`;
}

function summaryTable(w: WriteupAnswer, shown: ReadonlySet<string>): HTMLElement {
  const s = w.summary;
  if (s.columns.length === 0) return h('div', { class: 'empty' }, 'no eval or pass@k results to summarise');
  const head = h(
    'tr',
    {},
    h('th', {}, 'run'),
    ...s.columns.map((c) => h('th', { class: 'num', title: c.title, 'data-column': c.id }, c.label)),
  );
  const rows: HTMLElement[] = [];
  if (s.base)
    rows.push(
      h(
        'tr',
        { class: 'base', 'data-base': 'true' },
        h('td', {}, `${s.base.label} (base)`),
        ...s.base.cells.map((v) => h('td', { class: 'num' }, v === null ? '–' : pct(v))),
      ),
    );
  for (const r of s.rows) {
    if (!shown.has(r.id)) continue;
    rows.push(
      h(
        'tr',
        { 'data-run': r.id },
        h('td', {}, r.label),
        ...r.cells.map((c) =>
          c === null
            ? h('td', { class: 'num' }, '–')
            : h(
                'td',
                {
                  class: 'num',
                  title: c.step !== undefined ? `step ${c.step}` : undefined,
                  'data-delta': c.delta !== undefined ? c.delta : undefined,
                },
                pct(c.value),
                c.delta !== undefined
                  ? h('span', { class: `delta ${c.delta >= 0 ? 'up' : 'down'}` }, ` ${fmtDelta(c.delta)}`)
                  : '',
              ),
        ),
      ),
    );
  }
  return h('table', { class: 'writeup-summary' }, h('thead', {}, head), h('tbody', {}, ...rows));
}

type Run = WriteupAnswer['runs'][number];
type ChartOptions = Parameters<typeof chart>[3];

/** The writeup as shown: its answer, each run's colour, and the runs the chosen preset shows. */
interface Shown {
  readonly w: WriteupAnswer;
  readonly colorOf: ReadonlyMap<string, string>;
  shown: Set<string>;
}

/**
 * Chart panels whose charts are drawn after the panels are in the document (a chart takes its width
 * from its box): box() makes a panel, drawAll() draws their charts in the order they were made.
 */
function chartBoxes(): {
  box(id: string, title: string, subtitle: string, lines: () => Line[], o: ChartOptions): HTMLElement;
  drawAll(): void;
} {
  const todo: (() => void)[] = [];
  return {
    box(id, title, subtitle, lines, o) {
      const el = h('div', { class: 'chart', 'data-chart': id });
      todo.push(() => chart(el, id, lines(), o));
      return panelBox(`wu-${id}`, title, subtitle, el);
    },
    drawAll() {
      for (const t of todo) t();
    },
  };
}

type Box = ReturnType<typeof chartBoxes>['box'];

function group(title: string, sub: string, boxes: HTMLElement[], id: string): HTMLElement | string {
  return boxes.length
    ? h(
        'section',
        { class: 'writeup-group', 'data-group': id },
        h('h2', {}, title),
        h('div', { class: 'sub' }, sub),
        h('div', { class: 'two' }, ...boxes),
      )
    : '';
}

/** The buttons that pick a preset's runs (none without presets); pick() shows its runs and text. */
function presetControls(
  w: WriteupAnswer,
  pick: (p: { runs: readonly string[]; text?: string }) => void,
): HTMLElement | string {
  if (!w.presets.length) return '';
  const all = { id: '', label: 'all runs', runs: w.runs.map((r) => r.id), text: undefined };
  return h(
    'div',
    { class: 'controls presets' },
    ...[all, ...w.presets].map((p) => {
      const b = h('button', { 'data-preset': p.id || 'all' }, p.label);
      b.addEventListener('click', () => pick(p));
      return b;
    }),
  );
}

function legendNames(s: Shown, runs: readonly Run[]): (HTMLElement | string)[] {
  return [
    ...runs.map((r) =>
      h(
        'span',
        { style: `color:${s.colorOf.get(r.id)}`, title: r.source, 'data-legend': r.id },
        `■ ${r.label}${r.family ? ` [${r.family}]` : ''} `,
      ),
    ),
    s.w.base ? h('span', { style: `color:${BASE_COLOR}` }, `┅ ${s.w.base.label} (base)`) : '',
  ];
}

function curveBoxes(s: Shown, runs: readonly Run[], box: Box): HTMLElement[] {
  return s.w.curves.map((c) =>
    box(
      `curve-${c.id}`,
      c.title,
      c.subtitle,
      () =>
        runs
          .filter((r) => c.runs[r.id])
          .map((r) => ({
            label: r.label,
            color: s.colorOf.get(r.id)!,
            x: c.runs[r.id].x,
            y: smooth(c.runs[r.id].y, settings.smoothing),
          })),
      { xLabel: 'step', yLabel: c.title },
    ),
  );
}

function evalBoxes(s: Shown, runs: readonly Run[], box: Box): HTMLElement[] {
  const w = s.w;
  return w.evals.map((e) =>
    box(
      `eval-${e.benchmark}`,
      e.benchmark,
      `${e.metric} by checkpoint step${e.base !== undefined ? `; the base model dashed (${pct(e.base)})` : ''}`,
      () => {
        const lines: Line[] = runs
          .filter((r) => e.runs[r.id])
          .map((r) => ({
            label: r.label,
            color: s.colorOf.get(r.id)!,
            x: e.runs[r.id].x,
            y: e.runs[r.id].y,
            points: true,
          }));
        if (e.base !== undefined && w.base) {
          const xs = lines.flatMap((l) => l.x);
          const hi = xs.length ? Math.max(...xs) : 1;
          lines.push({
            label: `${w.base.label} (base)`,
            color: BASE_COLOR,
            x: [0, hi],
            y: [e.base, e.base],
            dash: [6, 4],
          });
        }
        return lines;
      },
      { xLabel: 'step', yLabel: 'accuracy %', percent: true },
    ),
  );
}

function passkBoxes(s: Shown, runs: readonly Run[], box: Box): HTMLElement[] {
  const w = s.w;
  return w.passk.map((p) =>
    box(
      `passk-${p.benchmark}`,
      `${p.benchmark}: pass@k`,
      'unbiased pass@k (1 − C(n−c, k)/C(n, k), mean over prompts); the base model dashed. Their first-k figure is not drawn, except dotted for a source that has only it.',
      () => {
        const lines = runs.flatMap((r) => {
          const c = p.runs[r.id];
          const l = c && passkLine(r.label, s.colorOf.get(r.id)!, c, false);
          return l ? [l] : [];
        });
        const b = p.base && w.base && passkLine(`${w.base.label} (base)`, BASE_COLOR, p.base, true);
        return b ? [...lines, b] : lines;
      },
      { xLabel: 'k', yLabel: 'pass@k %', logX: true, percent: true },
    ),
  );
}

/** The sections under the legend: training, evaluations, pass@k, the summary and the reader's notes. */
function writeupSections(s: Shown, runs: readonly Run[], box: Box): (HTMLElement | string)[] {
  const w = s.w;
  const curves = curveBoxes(s, runs, box);
  const evals = evalBoxes(s, runs, box);
  const passk = passkBoxes(s, runs, box);
  return [
    group(
      'Training',
      'per step, as the trainers’ traces have it (the toolbar’s smoothing applies)',
      curves,
      'curves',
    ),
    group('Evaluations', 'accuracy at each evaluated checkpoint', evals, 'evals'),
    group('Pass@k', 'per benchmark, over k (log scale)', passk, 'passk'),
    panelBox(
      'wu-summary',
      'Summary',
      `latest evaluated accuracy and pass@k per run${w.base ? `, with the difference to ${w.base.label} in percentage points` : ''}`,
      summaryTable(w, s.shown),
    ),
    w.notes.length
      ? panelBox(
          'wu-notes',
          'Notes',
          'what the spec’s reader ignored or did not find',
          h('ul', { class: 'notes' }, ...w.notes.map((n) => h('li', {}, n))),
        )
      : '',
  ];
}

/** Shows the writeup; resolves to what redraws it (the toolbar's smoothing and theme). */
export async function writeupView(): Promise<() => void> {
  probe.view = 'writeup';
  destroyPlots();
  const w = await api<WriteupAnswer>(urls.writeup());
  const s: Shown = {
    w,
    colorOf: new Map(w.runs.map((r, i) => [r.id, r.color ?? PALETTE[i % PALETTE.length]])),
    shown: new Set(w.runs.map((r) => r.id)),
  };

  const presetText = h('div', { class: 'sub preset-text' });
  const presetButtons = presetControls(w, (p) => {
    s.shown = new Set(p.runs);
    presetText.textContent = p.text ?? '';
    draw();
  });
  const legend = h('div', { class: 'legend-names' });
  const sections = h('div', {});
  app.replaceChildren(
    h('h1', {}, w.title),
    h(
      'div',
      { class: 'sub' },
      `${w.runs.length} run(s)${w.base ? ` against ${w.base.label}` : ''} · from ${w.spec} · exported: no server needed`,
    ),
    presetButtons,
    presetText,
    legend,
    sections,
  );

  const draw = (): void => {
    destroyPlots();
    probe.charts = [];
    const runs = w.runs.filter((r) => s.shown.has(r.id));
    legend.replaceChildren(...legendNames(s, runs));
    const boxes = chartBoxes();
    sections.replaceChildren(...writeupSections(s, runs, boxes.box));
    // drawn once in the document: a chart takes its width from its box
    boxes.drawAll();
    probe.readyMs = performance.now() - probe.startedMs;
  };
  draw();
  return () => {
    probe.updates++;
    draw();
  };
}
