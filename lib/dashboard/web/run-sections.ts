/// <reference lib="dom" />
/* The run view's fixed sections: its configuration and overview, and its notes. */
import type { NotesAnswer, RunAnswer } from '../data';
import type { Overview } from '../overview';
import { urls } from '../urls';
import { api, inline } from './client';
import { h, panelBox } from './dom';
import { fmt, fmtSeconds } from './format';

function metaTable(meta: Record<string, unknown>): HTMLElement {
  return h(
    'table',
    { class: 'kv' },
    ...Object.entries(meta).map(([k, v]) =>
      h('tr', {}, h('th', {}, k), h('td', {}, typeof v === 'object' ? JSON.stringify(v) : fmt(v))),
    ),
  );
}

/** Utilization, what became of the samples, and the advice that follows (overview.ts). */
function overviewEl(o: Overview): HTMLElement {
  const pct = (v: number | undefined): string => (v === undefined || v === null ? '–' : `${v.toFixed(0)}%`);
  const s = o.samples;
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
    ...o.advice.map((a) =>
      h(
        'div',
        { class: `advice ${a.level}` },
        a.text,
        a.suggestion ? h('span', { class: 'sub' }, ` — ${a.suggestion}`) : '',
      ),
    ),
  );
}

/** The run's configuration beside its overview. */
export function runHeader(run: RunAnswer): HTMLElement {
  const steps = run.steps;
  const last = (key: 'reward' | 'loss'): string => {
    const s = run.lastValues?.[key];
    return s === undefined ? '–' : fmt(s, 4);
  };
  return h(
    'div',
    { class: 'two' },
    panelBox(
      'config',
      'Run configuration',
      run.trace,
      metaTable(run.meta),
      run.docs.config ? h('details', {}, h('summary', {}, 'config.yaml'), h('pre', {}, run.docs.config)) : '',
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
        spans: run.spans.map((s) => `${s.name} ×${s.n}`).join(', '),
        'latest reward': last('reward'),
        'latest loss': last('loss'),
      }),
    ),
  );
}

/** NOTES.md to edit (saved to the local run folder), RESULTS.md and run.json to read. */
export function notesPanel(id: string, run: RunAnswer): HTMLElement {
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
      const r = await api<NotesAnswer>(urls.notes(id), {
        method: 'PUT',
        body: notes.value,
        headers: { 'content-type': 'text/plain' },
      });
      saved.textContent = ` saved (${r.bytes} bytes, NOTES.md in the local run folder)`;
    } catch (e) {
      saved.textContent = ` ${(e as Error).message}`;
    }
  });
  return panelBox(
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
  );
}
