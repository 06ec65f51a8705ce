/*
 * The run view's chart panels: the team's viewer's panels (viz/index.html) by the series they draw, and
 * one panel per counter no default panel covers — a trainer's new counter becomes a panel with no code
 * change. Shared by the server (report) and the page (web/main.ts bundles it).
 *
 * A series key is `<counter name>|<field>`: a number field as written, a number array as its quantiles
 * (`completion_lens:p50`), a string array as counts (`datasets=gsm8k`), dicts dotted (scan.ts).
 */

export interface PanelDef {
  readonly id: string;
  readonly title: string;
  readonly subtitle: string;
  /** Series keys or globs (`*` within a key). */
  readonly series: readonly string[];
  /** Keys matched by `series` but left to another panel. */
  readonly exclude?: readonly string[];
  readonly stacked?: boolean;
  /** Drawn as bars (one per step) instead of lines. */
  readonly bars?: boolean;
}

export const DEFAULT_PANELS: readonly PanelDef[] = [
  {
    id: 'rewards',
    title: 'Reward statistics',
    subtitle: 'overall rewards including filtered samples',
    series: [
      'reward_stats|reward_overall',
      'reward_stats|reward_used',
      'reward_stats|frac_all_correct',
      'reward_stats|frac_all_wrong',
      'metrics|avg_reward',
      'rewards|mean',
    ],
  },
  {
    id: 'training',
    title: 'Training dynamics',
    subtitle: 'loss, gradient norm, KL, entropy',
    series: ['metrics|loss', 'metrics|loss_*', 'metrics|grad_norm', '*debug|kl_mean', '*debug|entropy_mean'],
  },
  {
    id: 'trainer-profiling',
    title: 'Trainer profiling',
    subtitle: 'TorchTitan MFU, throughput, memory',
    series: ['titan.metrics|*'],
  },
  {
    id: 'generation-profiling',
    title: 'Generation profiling',
    subtitle: 'vLLM throughput and tokens, requests per step and their mean latency (s), rollout metrics',
    series: [
      'vllm.metrics|*',
      'span:vllm.generate_single|count',
      'span:vllm.generate_single|mean_dur',
      'span:generate|*',
      'rollout.metrics|*',
    ],
  },
  {
    id: 'padding',
    title: 'Padding efficiency',
    subtitle: 'padding % and wasted tokens per sample (p50/p90/p99)',
    series: [
      'batch.padding|seq_padding_pct',
      'batch.padding|completion_padding_pct',
      'batch.padding|completion_padding_tokens:p50',
      'batch.padding|completion_padding_tokens:p90',
      'batch.padding|completion_padding_tokens:p99',
    ],
  },
  {
    id: 'debug',
    title: 'Debug',
    subtitle: 'KL divergence, ratio clipping diagnostics',
    series: ['grpo.debug|*', 'grpo_debug|*', 'gkd.debug|*'],
  },
  {
    id: 'completion-length',
    title: 'Completion length by correctness',
    subtitle: 'completion tokens p50/p90 of correct (reward > 0) and wrong samples',
    series: [
      'batch.reward_vs_len|len_correct:p50',
      'batch.reward_vs_len|len_correct:p90',
      'batch.reward_vs_len|len_wrong:p50',
      'batch.reward_vs_len|len_wrong:p90',
    ],
  },
  {
    id: 'finish-reasons',
    title: 'Finish reasons',
    subtitle: 'completions per step by why generation stopped',
    series: ['batch.finish_reasons|*'],
    stacked: true,
    bars: true,
  },
  {
    id: 'lag',
    title: 'Lag breakdown',
    subtitle: 'sample staleness per optimizer step',
    series: ['batch.lag|*'],
    stacked: true,
    bars: true,
  },
  {
    id: 'datasets',
    title: 'Dataset breakdown',
    subtitle: 'samples per dataset per step',
    series: ['batch.reward_vs_len|dataset=*:samples', 'batch.datasets|*'],
    exclude: ['batch.datasets|*_tokens'],
    stacked: true,
    bars: true,
  },
  {
    id: 'tokens',
    title: 'Token breakdown',
    subtitle: 'completion tokens per dataset per step',
    series: ['batch.reward_vs_len|dataset=*:tokens', 'batch.datasets|*_tokens'],
    stacked: true,
    bars: true,
  },
  {
    id: 'buffer',
    title: 'Buffer dynamics',
    subtitle: 'samples waiting, by how many versions behind the newest they were generated (≤ 1 per second)',
    series: ['buffer|age=0', 'buffer|age=1', 'buffer|age=2', 'buffer|age>=3'],
    stacked: true,
  },
  {
    id: 'buffer-size',
    title: 'Buffer size',
    subtitle: 'samples in the buffer at every put and pop, and versions held',
    series: ['buffer|size', 'buffer|versions'],
  },
  {
    id: 'events',
    title: 'Skips, retries, deadlocks, epochs',
    subtitle: 'counts per step',
    series: ['skipped|*', 'retry|*', 'deadlock|*', 'epoch|*'],
  },
];

function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
}

/** Quantile fields other than these are left out of automatic panels (they are in the data). */
const AUTO_FIELD_SKIP = /:(n|max|p99)$/;
const MAX_SERIES = 16;
/** A counter's own step (query.ts places its records by it): the x axis, not a series. */
const OWN_STEP = /\|(step|trained_at_step)$/;

export interface ResolvedPanel extends PanelDef {
  readonly keys: string[];
}

/** The panels a run's series fill: default panels with their matching keys, then one per uncovered counter. */
export function resolvePanels(keys: readonly string[]): ResolvedPanel[] {
  const covered = new Set<string>();
  const panels: ResolvedPanel[] = [];
  for (const p of DEFAULT_PANELS) {
    const res = p.series.map(globToRegExp);
    const ex = (p.exclude ?? []).map(globToRegExp);
    const matched = keys.filter(
      (k) => res.some((r) => r.test(k)) && !ex.some((r) => r.test(k)) && !OWN_STEP.test(k),
    );
    for (const k of matched) covered.add(k);
    if (matched.length) panels.push({ ...p, keys: matched.slice(0, MAX_SERIES) });
  }
  const byName = new Map<string, string[]>();
  for (const k of keys) {
    if (covered.has(k) || k.startsWith('span:') || OWN_STEP.test(k)) continue;
    const name = k.split('|')[0];
    if (AUTO_FIELD_SKIP.test(k)) continue;
    byName.set(name, [...(byName.get(name) ?? []), k]);
  }
  for (const [name, ks] of [...byName].sort((a, b) => a[0].localeCompare(b[0])))
    panels.push({
      id: `counter-${name}`,
      title: name,
      subtitle: 'counter',
      series: ks,
      keys: ks.slice(0, MAX_SERIES),
    });
  return panels;
}
