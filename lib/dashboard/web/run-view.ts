/// <reference lib="dom" />
/*
 * The run view (#/run/<id>): configuration and overview, the pipeline timeline, a chart per panel
 * (favourites first), sample fates, evaluations, samples and notes. Redrawn when the trace grows.
 */
import type { BreakdownAnswer, RunAnswer, SeriesAnswer, TimelineAnswer } from '../data';
import type { ResolvedPanel } from '../panels';
import { REPORT_WIDTH, runSeriesUrl, urls } from '../urls';
import { breakdownChart, destroyCharts, drawChart, fatesChart, histogramChart, PALETTE } from './charts';
import { api, inline, probe } from './client';
import { app, h, panelBox } from './dom';
import { evalLines, evalsOnRewards, evalTableEl } from './evals';
import { shortKey } from './format';
import { notesPanel, runHeader } from './run-sections';
import { samplesPanel } from './run-samples';
import { favourites, settings } from './settings';
import { drawTimeline, timelinePanel } from './timeline';

/** Shows the run; resolves to what redraws its charts (when its trace grew, or a setting changed). */
export async function runView(id: string): Promise<() => void> {
  probe.view = 'run';
  const run = await api<RunAnswer>(urls.run(id));
  const width = inline ? REPORT_WIDTH : Math.max(400, Math.min(2000, Math.floor(app.clientWidth / 2)));
  const panels = run.panels;
  const sections: HTMLElement[] = [runHeader(run)];

  const timeline = timelinePanel(id);
  sections.push(timeline.panel);

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
  const samples = samplesPanel(id, run.hasSamples);
  sections.push(samples.panel, notesPanel(id, run));

  app.replaceChildren(h('h1', {}, id), ...sections);

  const draw = async (): Promise<void> => {
    destroyCharts();
    // In the panels' own order (not favourites first): an exported report answers exactly this URL.
    const seriesUrl = runSeriesUrl(id, panels, settings.axis, width);
    const [series, tl, bd] = await Promise.all([
      panels.length
        ? api<SeriesAnswer>(seriesUrl)
        : Promise.resolve<Pick<SeriesAnswer, 'series'>>({ series: {} }),
      api<TimelineAnswer>(timeline.url()),
      api<BreakdownAnswer>(urls.breakdown(id)),
    ]);
    const onClickX =
      run.hasSamples && settings.axis === 'step'
        ? (x: number) => void samples.show({ step: Math.round(x) })
        : undefined;
    const evals = evalLines(run.evals);
    const onRewards = settings.axis === 'step' ? evalsOnRewards(evals) : [];
    for (const { panel, el } of chartBoxes) {
      drawChart(
        el,
        panel.id,
        [
          ...panel.keys.map((k, i) => ({
            label: shortKey(k),
            xy: series.series[k],
            color: PALETTE[i % PALETTE.length],
          })),
          ...(panel.id === 'rewards' ? onRewards : []),
        ],
        { stacked: panel.stacked, bars: panel.bars, onClickX },
      );
    }
    if (settings.axis === 'step') drawChart(evalBox, 'eval-points', evals, { onClickX });
    else evalBox.replaceChildren(h('div', { class: 'empty' }, 'eval points are drawn on the step axis'));
    drawTimeline(timeline.canvas, tl);
    breakdownChart(timeline.breakdownBox, bd, onClickX);
    if (run.fates) fatesChart(fatesBox, run.fates);
    if (run.histograms?.len_correct) histogramChart(histogramBox, run.histograms);
    probe.readyMs = performance.now() - probe.startedMs;
  };
  await draw();
  return () => {
    probe.updates++;
    void draw();
  };
}
