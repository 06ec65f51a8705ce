/// <reference lib="dom" />
/*
 * The pass@k view (#/passk): the results folder's pass@k campaigns (passk.ts), one chart per benchmark
 * (dataset/split) with a line per campaign (its model) over k on a log-2 axis — the unbiased estimate
 * solid, their script's first-k figure dashed when the toggle asks for it — and under each chart a table:
 * model, n, prompts, pass@1, pass@k at the campaign's largest k, shards and what is amiss. The charts
 * are the writeup page's (curve-chart.ts), so the two pages draw pass@k alike.
 */
import type { PasskAnswer, PasskCampaignAnswer } from '../passk';
import { urls } from '../urls';
import { PALETTE } from './charts';
import { api, probe } from './client';
import { chart, destroyPlots, type Line } from './curve-chart';
import { app, h, panelBox } from './dom';
import { store } from './settings';

const pct = (v: number | undefined): string => (v === undefined ? '–' : `${(v * 100).toFixed(1)}%`);

/** Campaigns by benchmark, benchmarks in name order, each one's campaigns by model then folder. */
function byBenchmark(cs: readonly PasskCampaignAnswer[]): Map<string, PasskCampaignAnswer[]> {
  const out = new Map<string, PasskCampaignAnswer[]>();
  for (const c of [...cs].sort(
    (a, b) =>
      a.benchmark.localeCompare(b.benchmark) || a.model.localeCompare(b.model) || a.id.localeCompare(b.id),
  ))
    out.set(c.benchmark, [...(out.get(c.benchmark) ?? []), c]);
  return out;
}

/** A campaign's name in its chart: its model, with its folder when another campaign there has that model. */
function labelsOf(cs: readonly PasskCampaignAnswer[]): Map<string, string> {
  const count = new Map<string, number>();
  for (const c of cs) count.set(c.model, (count.get(c.model) ?? 0) + 1);
  return new Map(cs.map((c) => [c.id, count.get(c.model)! > 1 ? `${c.model} (${c.id})` : c.model]));
}

function shardsText(c: PasskCampaignAnswer): string {
  return c.shardsExpected !== null
    ? `${c.shardsRead.length} / ${c.shardsExpected}`
    : String(c.shardsRead.length);
}

function table(
  cs: readonly PasskCampaignAnswer[],
  labels: Map<string, string>,
  colorOf: Map<string, string>,
) {
  const head = [
    'model',
    'n',
    'prompts',
    'pass@1',
    'pass@k (largest k)',
    'shards read',
    'missing shards',
    'notes',
  ];
  return h(
    'table',
    { class: 'passk-table' },
    h(
      'thead',
      {},
      h('tr', {}, ...head.map((t, i) => h('th', { class: i > 0 && i < 7 ? 'num' : undefined }, t))),
    ),
    h(
      'tbody',
      {},
      ...cs.map((c) => {
        const first = c.passAtK.find((p) => p.k === 1);
        const last = c.passAtK[c.passAtK.length - 1];
        return h(
          'tr',
          { 'data-campaign': c.id, class: c.problems.length ? 'flagged' : undefined },
          h(
            'td',
            { title: c.modelId ?? c.id },
            h('span', { style: `color:${colorOf.get(c.id)}` }, '■ '),
            labels.get(c.id)!,
          ),
          h('td', { class: 'num' }, c.n === null ? '–' : String(c.n)),
          h('td', { class: 'num' }, String(c.prompts)),
          h('td', { class: 'num', 'data-k': 1 }, pct(first?.unbiased)),
          h('td', { class: 'num', 'data-k': last?.k }, last ? `${pct(last.unbiased)} @ k=${last.k}` : '–'),
          h('td', { class: 'num' }, shardsText(c)),
          h('td', { class: 'num' }, c.missingShards.length ? c.missingShards.join(', ') : '–'),
          h('td', { class: 'sub' }, c.problems.join('; ')),
        );
      }),
    ),
  );
}

/** Shows the campaigns; resolves to what redraws the charts (the theme). */
export async function passkView(): Promise<() => void> {
  probe.view = 'passk';
  destroyPlots();
  const answer = await api<PasskAnswer>(urls.passk());
  const benches = byBenchmark(answer.campaigns);
  // one colour per model across benchmarks: the same model is the same colour in every chart
  const modelColor = new Map<string, string>();
  for (const c of answer.campaigns)
    if (!modelColor.has(c.model)) modelColor.set(c.model, PALETTE[modelColor.size % PALETTE.length]);
  const colorOf = new Map(answer.campaigns.map((c) => [c.id, modelColor.get(c.model)!]));

  let firstK = store.get('passkFirstK', '0') === '1';
  const toggle = h('input', { type: 'checkbox', 'data-toggle': 'first-k' });
  toggle.checked = firstK;
  const charts: { el: HTMLElement; id: string; cs: PasskCampaignAnswer[]; labels: Map<string, string> }[] =
    [];
  const panels = [...benches].map(([bench, cs]) => {
    const labels = labelsOf(cs);
    const el = h('div', { class: 'chart', 'data-chart': `passk-${bench}` });
    charts.push({ el, id: `passk-${bench}`, cs, labels });
    return panelBox(
      `pk-${bench}`,
      `${bench}: pass@k`,
      `${cs.length} campaign(s); unbiased pass@k (1 − C(n−c, k)/C(n, k), mean over the prompts with n ≥ k), k on a log-2 axis; their first-k figure dashed when shown`,
      el,
      table(cs, labels, colorOf),
    );
  });
  app.replaceChildren(
    h('h1', {}, 'Pass@k campaigns'),
    h(
      'div',
      { class: 'controls' },
      h('span', { class: 'sub' }, `${answer.campaigns.length} campaign(s) in the results folder`),
      h('label', {}, toggle, ' their first-k figure (dashed)'),
    ),
    ...(panels.length
      ? panels
      : [
          h(
            'div',
            { class: 'empty' },
            'No pass@k campaigns in the results folder: a run folder with passk-plan.json, or a folder of their script’s shard_<i>/ output.',
          ),
        ]),
  );

  const draw = (): void => {
    destroyPlots();
    probe.charts = [];
    for (const c of charts) {
      const lines: Line[] = c.cs.flatMap((x) => {
        const ks = x.passAtK.map((p) => p.k);
        const solid: Line = {
          label: c.labels.get(x.id)!,
          color: colorOf.get(x.id)!,
          x: ks,
          y: x.passAtK.map((p) => p.unbiased),
          points: true,
        };
        if (!firstK) return [solid];
        return [
          solid,
          {
            label: `${c.labels.get(x.id)} first-k`,
            color: colorOf.get(x.id)!,
            x: ks,
            y: x.passAtK.map((p) => p.firstK),
            dash: [5, 4],
          },
        ];
      });
      chart(c.el, c.id, lines, { xLabel: 'k', yLabel: 'pass@k %', logX: true, percent: true });
    }
    probe.readyMs = performance.now() - probe.startedMs;
  };
  toggle.addEventListener('change', () => {
    firstK = toggle.checked;
    store.set('passkFirstK', firstK ? '1' : '0');
    probe.updates++;
    draw();
  });
  // drawn once in the document: a chart takes its width from its box
  draw();
  return () => {
    probe.updates++;
    draw();
  };
}
