/// <reference lib="dom" />
/*
 * The dashboard page: plain DOM and uPlot, no framework. Views by the URL's hash: #/jobs, #/run/<id>,
 * #/compare/<id>,<id>… It asks the server for JSON (urls.ts, client.ts), or, in an exported report,
 * reads the same answers from the page itself. Charts get data downsampled to their width; a live run
 * redraws when the server says its trace grew (server-sent events). This module: the toolbar, the
 * router and the live updates; the views are jobs-view.ts, run-view.ts and compare-view.ts, and
 * writeup-view.ts (#/writeup: the page `rlvr report --spec` writes) and passk-view.ts (#/passk: the
 * results folder's pass@k campaigns).
 */
import { destroyCharts } from './charts';
import { inline, probe, token } from './client';
import { compareView } from './compare-view';
import { app, h } from './dom';
import { destroyPlots } from './curve-chart';
import { jobsView } from './jobs-view';
import { passkView } from './passk-view';
import { runView } from './run-view';
import { settings, store } from './settings';
import { writeupView } from './writeup-view';

/** Redraws the current view's charts (a run or a comparison; set once it is drawn). */
let liveRefresh: (() => void) | undefined;

function toolbar(): HTMLElement {
  const axisSel = h(
    'select',
    { 'aria-label': 'x axis' },
    h('option', { value: 'step' }, 'x: step'),
    h('option', { value: 'time' }, 'x: wall time'),
  );
  axisSel.value = settings.axis;
  axisSel.addEventListener('change', () => {
    settings.axis = axisSel.value as 'step' | 'time';
    store.set('axis', settings.axis);
    void route();
  });
  const smoothIn = h('input', { type: 'range', min: 0, max: 0.99, step: 0.01, 'aria-label': 'smoothing' });
  smoothIn.value = String(settings.smoothing);
  smoothIn.addEventListener('change', () => {
    settings.smoothing = Number(smoothIn.value);
    store.set('smoothing', String(settings.smoothing));
    liveRefresh?.();
  });
  const themeBtn = h('button', { title: 'light / dark' }, '◐');
  themeBtn.addEventListener('click', () => {
    settings.theme = settings.theme === 'dark' ? 'light' : 'dark';
    document.documentElement.dataset.theme = settings.theme;
    store.set('theme', settings.theme);
    liveRefresh?.();
  });
  return h(
    'nav',
    {},
    h('a', { href: '#/jobs', class: 'brand' }, 'rlvr'),
    h('a', { href: '#/jobs' }, 'Jobs'),
    // the campaigns are the server's answer: an exported report does not hold them
    inline ? '' : h('a', { href: '#/passk' }, 'Pass@k'),
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
  destroyPlots();
  probe.readyMs = NaN;
  probe.startedMs = performance.now();
  const hash = location.hash.replace(/^#\/?/, '') || (inline ? String(inline.__start ?? 'jobs') : 'jobs');
  try {
    if (hash.startsWith('run/')) liveRefresh = await runView(decodeURIComponent(hash.slice(4)));
    else if (hash.startsWith('compare/')) liveRefresh = await compareView(hash.slice(8));
    else if (hash === 'writeup') liveRefresh = await writeupView();
    else if (hash === 'passk') liveRefresh = await passkView();
    else await jobsView(() => void route());
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
  // a campaign's shards grow without a trace event; the server reads only files that changed
  setInterval(() => {
    if ((probe.view === 'jobs' || probe.view === 'passk') && document.visibilityState === 'visible')
      void route();
  }, 60_000);
}
