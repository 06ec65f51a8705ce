import { overview } from '../../lib/dashboard/overview';
import type { StepBreakdown } from '../../lib/dashboard/query';

function breakdown(
  steps: number,
  o: { duration: number; trainerIdle: number; rolloutIdle: number },
): StepBreakdown {
  const fill = (v: number): number[] => Array.from({ length: steps }, () => v);
  return {
    steps: Array.from({ length: steps }, (_, i) => i + 1),
    duration: fill(o.duration),
    phases: {
      generation: fill(5),
      verify: fill(0),
      reference: fill(0),
      training: fill(1),
      sync: fill(0),
      other: fill(0),
    },
    trainerIdle: fill(o.trainerIdle),
    rolloutIdle: fill(o.rolloutIdle),
  };
}

describe('the run overview', () => {
  it('gives utilization from the step breakdown and the samples’ fates in percent', () => {
    const o = overview(breakdown(10, { duration: 10, trainerIdle: 7, rolloutIdle: 2 }), {
      used: { '0': 60, '1': 10 },
      wasted: { '0': 20 },
      filtered: { '1': 10 },
      failed: {},
    });
    expect(o.utilization.trainer).toBeCloseTo(30, 6);
    expect(o.utilization.rollout).toBeCloseTo(80, 6);
    expect(o.samples).toEqual({ total: 100, usedPct: 70, wastedPct: 20, filteredPct: 10, failedPct: 0 });
    expect(o.advice.map((a) => a.text)).toEqual(['20% of samples wasted']);
  });

  it('says when the trainer waits for samples, and when the run is balanced', () => {
    const starved = overview(breakdown(4, { duration: 10, trainerIdle: 7, rolloutIdle: 1 }), {
      used: { '0': 100 },
      wasted: { '0': 2 },
    });
    expect(starved.advice).toEqual([
      expect.objectContaining({ level: 'caution', text: 'trainer 30% busy, waiting for samples' }),
    ]);
    const balanced = overview(breakdown(4, { duration: 10, trainerIdle: 2, rolloutIdle: 2 }), {
      used: { '0': 90 },
      wasted: { '0': 5 },
    });
    expect(balanced.advice).toEqual([{ level: 'ok', text: 'well balanced: 95% of samples used' }]);
    expect(
      overview(breakdown(4, { duration: 10, trainerIdle: 2, rolloutIdle: 2 }), undefined).advice[0].level,
    ).toBe('info');
  });
});
