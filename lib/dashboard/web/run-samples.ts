/// <reference lib="dom" />
/* The run view's samples: a step's (clicked on a chart) or a prompt's rollouts and buffer events. */
import type { SamplesAnswer } from '../data';
import { urls } from '../urls';
import { api } from './client';
import { h, panelBox } from './dom';
import { fmt } from './format';

/** One rollout record (open-ended: what the trainer wrote), folded: its prompt and completions. */
function rolloutEl(r: Record<string, unknown>): HTMLElement {
  const rewards = Array.isArray(r.rewards) ? (r.rewards as unknown[]) : undefined;
  const completions = Array.isArray(r.completions) ? (r.completions as unknown[]) : [];
  return h(
    'details',
    { class: 'rollout' },
    h(
      'summary',
      {},
      `${r.prompt_id} · v${fmt(r.generated_at_version)} · rewards ${JSON.stringify(r.rewards)}`,
    ),
    h('pre', {}, String(r.prompt ?? '')),
    ...completions.map((c, i) =>
      h('pre', { class: Number(rewards?.[i] ?? 0) > 0 ? 'good' : 'bad' }, String(c)),
    ),
  );
}

export interface SamplesPanel {
  readonly panel: HTMLElement;
  /** Shows a step's or a prompt's samples. */
  readonly show: (by: { step?: number; prompt?: string }) => Promise<void>;
}

export function samplesPanel(id: string, hasSamples: boolean): SamplesPanel {
  const samplesOut = h(
    'div',
    { class: 'samples' },
    hasSamples
      ? 'click a step on any chart, or look up a prompt id'
      : 'no samples.jsonl / rollouts.jsonl beside this trace',
  );
  const promptInput = h('input', { type: 'search', placeholder: 'prompt id', 'aria-label': 'prompt id' });
  const show = async (by: { step?: number; prompt?: string }): Promise<void> => {
    samplesOut.textContent = 'loading…';
    try {
      const s = await api<SamplesAnswer>(urls.samples(id, by));
      samplesOut.replaceChildren(
        h(
          'div',
          { class: 'sub' },
          by.step !== undefined ? `step ${by.step}` : `prompt ${by.prompt}`,
          `: ${s.rollouts.length} rollouts, ${s.events.length} events${s.more ? ` (${s.more} more)` : ''}`,
        ),
        ...s.rollouts.map(rolloutEl),
        ...(s.events.length
          ? [h('pre', { class: 'events' }, s.events.map((e) => JSON.stringify(e)).join('\n'))]
          : []),
      );
    } catch (e) {
      samplesOut.textContent = (e as Error).message;
    }
  };
  promptInput.addEventListener('change', () => void show({ prompt: promptInput.value.trim() }));
  const panel = panelBox(
    'samples',
    'Samples and rollouts',
    'by step (click a chart) or by prompt id',
    promptInput,
    samplesOut,
  );
  return { panel, show };
}
