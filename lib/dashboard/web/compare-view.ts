/// <reference lib="dom" />
/*
 * The compare view (#/compare/<id>,<id>… or #/compare/sweep/<name>): one chart per panel with the
 * runs' chosen series over each other, and their evaluations side by side (deltas to a baseline).
 */
import type { CompareAnswer } from '../data';
import { compareSeriesUrl, REPORT_WIDTH, urls } from '../urls';
import { destroyCharts, drawChart, PALETTE } from './charts';
import { api, inline, probe, type JobsAnswer } from './client';
import { app, h, panelBox } from './dom';
import { evalTableEl } from './evals';
import { shortKey } from './format';
import { settings } from './settings';

/** The runs a compare URL names: listed, or a sweep's runs with traces. */
async function runsOf(spec: string): Promise<string[]> {
  if (!spec.startsWith('sweep/')) return spec.split(',').map(decodeURIComponent).filter(Boolean);
  const sweep = decodeURIComponent(spec.slice(6));
  const jobs = (await api<JobsAnswer>(urls.jobs())).jobs;
  return jobs.filter((j) => j.sweep === sweep && j.hasTrace).map((j) => j.name);
}

/** Shows the comparison; resolves to what redraws its charts. */
export async function compareView(spec: string): Promise<() => void> {
  probe.view = 'compare';
  const ids = await runsOf(spec);
  if (ids.length === 0) throw new Error('nothing to compare: no runs with traces');
  const width = inline ? REPORT_WIDTH : Math.max(400, Math.min(2000, Math.floor(app.clientWidth / 2)));
  const head = await api<CompareAnswer>(urls.compare(ids, [], settings.axis, width));
  const panels = head.panels;
  const chosen = new Map(panels.map((p) => [p.id, p.keys[0]]));
  const baselineSelect = h('select', { 'aria-label': 'baseline' }, h('option', { value: '' }, 'no baseline'));
  for (const r of head.evalTable?.rows ?? []) baselineSelect.append(h('option', { value: r.label }, r.label));
  const evalBox = h('div', {}, evalTableEl(head.evalTable));
  baselineSelect.addEventListener('change', async () => {
    const t = await api<CompareAnswer>(
      urls.compare(ids, [], settings.axis, width, baselineSelect.value || undefined),
    );
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
    const data = await api<CompareAnswer>(compareSeriesUrl(ids, panels, chosen, settings.axis, width));
    for (const { p, el } of boxes) {
      const key = chosen.get(p.id)!;
      drawChart(
        el,
        `cmp-${p.id}`,
        ids.map((id, i) => ({
          label: String(head.labels[id]),
          color: PALETTE[i % PALETTE.length],
          xy: data.series[key]?.[id] ?? { x: [], y: [], n: 0 },
        })),
        { bars: p.bars },
      );
    }
    probe.readyMs = performance.now() - probe.startedMs;
  };
  await draw();
  return () => {
    probe.updates++;
    void draw();
  };
}
