import type { StepBreakdown } from './query';

/*
 * The run view's Overview: how busy the rollout lanes and the trainer were over the whole trace (from
 * the step breakdown), what became of the samples (the buffer's fates), and what that suggests — the
 * same reading the team's viewer gives, on the same thresholds.
 */

export interface Advice {
  readonly level: 'ok' | 'info' | 'caution' | 'warning';
  readonly text: string;
  readonly suggestion?: string;
}

export interface Overview {
  /** Percent of the traced step time: rollout lanes busy (mean over lanes), trainer busy. */
  readonly utilization: { readonly rollout: number | undefined; readonly trainer: number | undefined };
  readonly samples:
    | {
        readonly total: number;
        readonly usedPct: number;
        readonly wastedPct: number;
        readonly filteredPct: number;
        readonly failedPct: number;
      }
    | undefined;
  readonly advice: Advice[];
}

function sum(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) if (Number.isFinite(x)) s += x;
  return s;
}

export function overview(
  b: StepBreakdown,
  fates: Record<string, Record<string, number>> | undefined,
): Overview {
  const total = sum(b.duration);
  const hasRollout = b.phases.generation.some((x) => x > 0);
  const utilization = {
    rollout: total > 0 && hasRollout ? 100 * (1 - sum(b.rolloutIdle) / total) : undefined,
    trainer: total > 0 ? 100 * (1 - sum(b.trainerIdle) / total) : undefined,
  };
  const of = (fate: string): number => sum(Object.values(fates?.[fate] ?? {}));
  const counts = { used: of('used'), wasted: of('wasted'), filtered: of('filtered'), failed: of('failed') };
  const n = counts.used + counts.wasted + counts.filtered + counts.failed;
  const pct = (x: number): number => (n ? (100 * x) / n : 0);
  const samples = fates
    ? {
        total: n,
        usedPct: pct(counts.used),
        wastedPct: pct(counts.wasted),
        filteredPct: pct(counts.filtered),
        failedPct: pct(counts.failed),
      }
    : undefined;
  const advice: Advice[] = [];
  const r = utilization.rollout ?? 0;
  const t = utilization.trainer ?? 0;
  if (!samples || samples.total < 10) {
    advice.push({ level: 'info', text: 'Too few buffer events for advice yet' });
    return { utilization, samples, advice };
  }
  const w = samples.wastedPct;
  if (w > 30)
    advice.push({
      level: 'warning',
      text: `${w.toFixed(0)}% of samples wasted: generating too fast`,
      suggestion: 'increase the batch size, use fewer vLLM replicas, or allow more staleness',
    });
  else if (w > 15)
    advice.push({
      level: 'caution',
      text: `${w.toFixed(0)}% of samples wasted`,
      suggestion: 'consider a larger batch or sync interval',
    });
  if (utilization.rollout !== undefined && r < 50 && w < 10)
    advice.push({
      level: 'info',
      text: `rollout lanes ${r.toFixed(0)}% busy with little waste`,
      suggestion: 'more vLLM replicas would raise throughput',
    });
  if (t > 80 && w > 20)
    advice.push({
      level: 'caution',
      text: `trainer busy (${t.toFixed(0)}%) while samples are wasted`,
      suggestion: 'training is the bottleneck: consider TP or a larger batch',
    });
  if (t < 40 && w < 5 && r > 70)
    advice.push({
      level: 'caution',
      text: `trainer ${t.toFixed(0)}% busy, waiting for samples`,
      suggestion: 'add vLLM capacity',
    });
  if (samples.usedPct > 80 && t > 50 && r > 50)
    advice.push({ level: 'ok', text: `well balanced: ${samples.usedPct.toFixed(0)}% of samples used` });
  if (advice.length === 0)
    advice.push({
      level: 'info',
      text: `${samples.usedPct.toFixed(0)}% of samples used, rollout ${r.toFixed(0)}% busy, trainer ${t.toFixed(0)}% busy`,
    });
  return { utilization, samples, advice };
}
