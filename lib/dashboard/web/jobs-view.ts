/// <reference lib="dom" />
/* The jobs view (#/jobs): every job, favourites first, flagged ones marked; pick some to compare. */
import type { JobView } from '../jobs';
import { urls } from '../urls';
import { api, probe, type JobsAnswer } from './client';
import { app, h } from './dom';
import { fmt, fmtSeconds } from './format';
import { favouriteRuns, store } from './settings';

const COLUMNS = [
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
];

/** The step column: a running job's step of its steps, rate and ETA; else the trace's latest step. */
function stepCell(j: JobView): (string | HTMLElement)[] {
  const p = j.progress;
  if (!p || p.step === undefined) return [fmt(j.latestStep)];
  const rate = p.secondsPerStep !== undefined ? `${p.secondsPerStep.toFixed(1)} s/step` : '';
  const eta = p.etaSeconds !== undefined ? `ETA ${fmtSeconds(p.etaSeconds)}` : '';
  return [
    `${p.step}${p.maxSteps !== undefined ? ` / ${p.maxSteps}` : ''}`,
    h(
      'div',
      { class: `sub${p.pastMaxRuntime ? ' late' : ''}`, 'data-eta': String(p.etaSeconds ?? '') },
      [rate, eta].filter(Boolean).join(', '),
    ),
  ];
}

/** A job's row; `selected` collects the runs ticked to compare, `changed` redraws the view. */
function jobRow(
  j: JobView,
  o: { selected: Set<string>; onSelect: () => void; changed: () => void },
): HTMLElement {
  const star = h(
    'button',
    { class: 'star', title: 'favourite run: listed first' },
    favouriteRuns.has(j.name) ? '★' : '☆',
  );
  star.addEventListener('click', () => {
    if (favouriteRuns.has(j.name)) favouriteRuns.delete(j.name);
    else favouriteRuns.add(j.name);
    store.set('favouriteRuns', JSON.stringify([...favouriteRuns]));
    o.changed();
  });
  const box = h('input', { type: 'checkbox', disabled: !j.hasTrace, 'aria-label': `select ${j.name}` });
  box.addEventListener('change', () => {
    if (box.checked) o.selected.add(j.name);
    else o.selected.delete(j.name);
    o.onSelect();
  });
  const name = j.hasTrace ? h('a', { href: `#/run/${encodeURIComponent(j.name)}` }, j.name) : j.name;
  return h(
    'tr',
    {
      class: `${j.flags.length ? 'flagged' : ''}${favouriteRuns.has(j.name) ? ' fav' : ''}`,
      'data-job': j.name,
    },
    h('td', {}, star, box),
    h('td', {}, name, ...j.flags.map((f) => h('div', { class: 'flag' }, `⚠ ${f}`))),
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
      j.cost === undefined || j.cost === null ? '–' : `$${j.cost.toFixed(2)}${j.costFinal ? '' : ' so far'}`,
      j.progress?.costAtFinish !== undefined
        ? h('div', { class: 'sub' }, `$${j.progress.costAtFinish.toFixed(2)} at finish`)
        : '',
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
    h('td', { class: 'num' }, ...stepCell(j)),
    h('td', { class: 'num' }, fmt(j.latestReward, 3)),
  );
}

/** Shows the jobs; `changed` is called when a favourite changed the order (to show it again). */
export async function jobsView(changed: () => void): Promise<void> {
  probe.view = 'jobs';
  const data = await api<JobsAnswer>(urls.jobs());
  const jobs = data.jobs;
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
  const onSelect = (): void => {
    compareBtn.disabled = selected.size < 1;
  };
  const rows = ordered.map((j) => jobRow(j, { selected, onSelect, changed }));
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
        h('thead', {}, h('tr', {}, ...COLUMNS.map((t) => h('th', {}, t)))),
        h('tbody', {}, ...rows),
      ),
    ),
  );
  probe.readyMs = performance.now() - probe.startedMs;
}
