/// <reference lib="dom" />
/*
 * The charts: uPlot, one per panel, of series each with its own x (joined), smoothed as the toolbar
 * says; and the run view's fixed charts (sample fates, the length histogram, the step breakdown).
 */
import uPlot from 'uplot';
import type { BreakdownAnswer } from '../data';
import type { XY } from '../query';
import { probe } from './client';
import { cssVar, h } from './dom';
import { settings } from './settings';

export const PALETTE = [
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
export const EVAL_COLORS = PALETTE.slice(6);
export const PHASE_COLORS: Record<string, string> = {
  generation: '#2f7ed8',
  verify: '#9c6ade',
  reference: '#f2a541',
  training: '#29a36a',
  sync: '#e4572e',
  other: '#7f7f7f',
};

/** Exponential moving average, as TensorBoard's smoothing slider (gaps kept). */
export function smooth(y: (number | null)[], w: number): (number | null)[] {
  if (w <= 0) return y;
  let last: number | undefined;
  return y.map((v) => {
    if (v === null || !Number.isFinite(v)) return v;
    last = last === undefined ? v : last * w + v * (1 - w);
    return last;
  });
}

let charts: uPlot[] = [];

export function destroyCharts(): void {
  for (const c of charts) c.destroy();
  charts = [];
  probe.charts = [];
}

export interface LineSpec {
  label: string;
  xy: XY;
  color: string;
  points?: boolean;
}

function chartWidth(el: HTMLElement): number {
  return Math.max(300, Math.floor(el.clientWidth || 600));
}

/** A uPlot chart of several series (each with its own x, joined), into `el`. */
export function drawChart(
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
  } else if (settings.smoothing > 0)
    ys = ys.map((y, i) => (usable[i].points ? y : smooth(y, settings.smoothing)));
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
      scales: { x: { time: settings.axis === 'time' && o.xLabel === undefined ? false : false } },
      axes: [{ ...axisOpts, label: o.xLabel ?? (settings.axis === 'step' ? 'step' : 'seconds') }, axisOpts],
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

export function fatesChart(el: HTMLElement, fates: Record<string, Record<string, number>>): void {
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
export function histogramChart(el: HTMLElement, hist: Record<string, Record<string, number>>): void {
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

/** Where each step's time went (per phase), how long the trainer and the rollout lanes sat idle. */
export function breakdownChart(el: HTMLElement, b: BreakdownAnswer, onClickX?: (x: number) => void): void {
  const phases = Object.entries(b.phases).filter(([, v]) => v.some((x) => x > 0));
  drawChart(
    el,
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
}
