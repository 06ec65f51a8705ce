/// <reference lib="dom" />
/* Evaluations: the table of a run's (or several runs') checkpoints, and eval scores as chart points. */
import type { RunAnswer } from '../data';
import type { ResultsTable } from '../../eval-records';
import { EVAL_COLORS, PALETTE, type LineSpec } from './charts';
import { h } from './dom';
import { fmt } from './format';

type Cell = ResultsTable['rows'][number]['cells'][number];

function cellText(c: Cell): string {
  if (!c) return '–';
  if ('failed' in c) return 'failed';
  const stderr = c.stderr !== undefined ? ` ±${fmt(c.stderr, 2)}` : '';
  const delta = c.delta !== undefined ? ` (${c.delta >= 0 ? '+' : ''}${fmt(c.delta, 3)})` : '';
  return `${fmt(c.value, 4)}${stderr}${delta}`;
}

export function evalTableEl(table: ResultsTable | undefined): HTMLElement {
  if (!table || table.rows.length === 0)
    return h('div', { class: 'empty' }, 'no eval results for these checkpoints');
  // Unit records that could not be read: each a failed cell, named here so the page says why.
  const warnings = table.warnings ?? [];
  const el = evalTableOnly(table);
  if (warnings.length === 0) return el;
  return h(
    'div',
    {},
    el,
    h('ul', { class: 'eval-warnings' }, ...warnings.map((w) => h('li', {}, `warning: ${w}`))),
  );
}

function evalTableOnly(table: ResultsTable): HTMLElement {
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
        ...table.columns.map((c) => h('th', {}, `${c.task} ${c.numFewshot}-shot ${c.metric}`)),
      ),
    ),
    h(
      'tbody',
      {},
      ...table.rows.map((r) =>
        h(
          'tr',
          {},
          h('td', {}, r.label),
          ...r.cells.map((c) =>
            h('td', { class: 'num', ...(c && 'failed' in c ? { title: c.failed } : {}) }, cellText(c)),
          ),
        ),
      ),
    ),
  );
}

/** Each task's first metric at its checkpoints' steps, as points (an eval chart of its own). */
export function evalLines(evals: RunAnswer['evals']): LineSpec[] {
  const evalPoints = new Map<string, { x: number[]; y: number[]; n: number }>();
  for (const e of evals) {
    if (e.step === undefined || e.step === null || !e.metrics?.length) continue;
    const key = `${e.task} ${e.metrics[0].metric}`;
    const p = evalPoints.get(key) ?? { x: [], y: [], n: 0 };
    p.x.push(e.step);
    p.y.push(e.metrics[0].value);
    evalPoints.set(key, p);
  }
  return [...evalPoints].map(([k, xy], i) => {
    const order = xy.x.map((_, j) => j).sort((a, b) => xy.x[a] - xy.x[b]);
    return {
      label: k,
      color: PALETTE[i % PALETTE.length],
      points: true,
      xy: { x: order.map((j) => xy.x[j]), y: order.map((j) => xy.y[j]), n: xy.x.length },
    };
  });
}

/**
 * Eval scores that are fractions (accuracy, pass@1), to draw on the reward curves too, as points at
 * their checkpoints' steps; every eval is also in its own chart.
 */
export function evalsOnRewards(lines: LineSpec[]): LineSpec[] {
  return lines
    .filter((l) => l.xy.y.every((v) => v >= 0 && v <= 1))
    .map((l, i) => ({ ...l, label: `eval ${l.label}`, color: EVAL_COLORS[i % EVAL_COLORS.length] }));
}
