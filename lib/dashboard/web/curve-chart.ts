/// <reference lib="dom" />
/*
 * Curves over a shared x of their own (k, checkpoint steps), each line with its colour, dash and points,
 * the y in percent when asked; the x on a log-2 scale for pass@k. Drawn by the writeup view
 * (writeup-view.ts) and the pass@k view (passk-view.ts), so both pages' pass@k charts are one chart.
 */
import uPlot from 'uplot';
import { probe } from './client';
import { cssVar, h } from './dom';

export interface Line {
  label: string;
  color: string;
  x: number[];
  y: (number | null)[];
  /** Canvas dash pattern: the base model's lines, and curves of a different figure. */
  dash?: number[];
  points?: boolean;
}

/** What tests read of each drawn chart: its series' labels and how many values uPlot holds for each. */
export const drawn: Record<string, { label: string; values: number }[]> = {};
// read as __rlvrWriteup by the writeup page's tests, which came first; __rlvrCurves names it for any view
const exposed = window as unknown as Record<'__rlvrWriteup' | '__rlvrCurves', typeof drawn>;
exposed.__rlvrWriteup = exposed.__rlvrCurves = drawn;

let plots: uPlot[] = [];

export function destroyPlots(): void {
  for (const p of plots) p.destroy();
  plots = [];
  for (const k of Object.keys(drawn)) delete drawn[k];
}

export function chart(
  el: HTMLElement,
  id: string,
  lines: Line[],
  o: { xLabel: string; yLabel: string; logX?: boolean; percent?: boolean },
): void {
  el.textContent = '';
  const usable = lines.filter((l) => l.x.length > 0);
  if (usable.length === 0) {
    el.append(h('div', { class: 'empty' }, 'no data'));
    probe.charts.push({ id, series: 0, points: 0 });
    drawn[id] = [];
    return;
  }
  const joined = uPlot.join(
    usable.map((l) => [l.x, l.y.map((v) => (v === null || !o.percent ? v : v * 100))] as uPlot.AlignedData),
  );
  const text = cssVar('--fg');
  const grid = cssVar('--grid');
  const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
  const plot = new uPlot(
    {
      width: Math.max(300, Math.floor(el.clientWidth || 560)),
      height: 240,
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      scales: { x: o.logX ? { time: false, distr: 3, log: 2 } : { time: false } },
      axes: [
        { ...axis, label: o.xLabel },
        { ...axis, label: o.yLabel },
      ],
      series: [
        {},
        ...usable.map((l) => ({
          label: l.label,
          stroke: l.color,
          width: l.dash ? 1.5 : 2,
          dash: l.dash,
          spanGaps: true,
          value: (_: uPlot, v: number | null) =>
            v === null ? '–' : o.percent ? `${v.toFixed(1)}%` : v.toPrecision(4),
          points: l.points ? { show: true, size: 6, fill: l.color } : { show: false },
        })),
      ],
    },
    joined,
    el,
  );
  plots.push(plot);
  const series = usable.map((l, i) => ({
    label: l.label,
    values: (plot.data[i + 1] as (number | null | undefined)[]).filter((v) => v !== null && v !== undefined)
      .length,
  }));
  drawn[id] = series;
  el.dataset.series = String(usable.length);
  probe.charts.push({ id, series: usable.length, points: joined[0].length });
}
