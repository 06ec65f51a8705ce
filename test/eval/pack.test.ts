import { estimateSeconds, packUnits, type EvalUnit } from '../../lib/eval/pack';

const TASKS: [string, number][] = [
  ['gsm8k_cot', 8],
  ['minerva_math', 4],
  ['ifeval', 0],
  ['mbpp', 3],
  ['hendrycks_math', 4],
];

function units(checkpoints: readonly string[], tasks = TASKS): EvalUnit[] {
  return checkpoints.flatMap((checkpoint) =>
    tasks.map(([task, numFewshot]) => ({ checkpoint, task, numFewshot, estimateS: estimateSeconds(task) })),
  );
}

const key = (u: EvalUnit) => `${u.checkpoint}/${u.task}`;

describe('batch evaluation: packing units onto GPUs', () => {
  it('6 checkpoints × 5 tasks on 2 × 8 GPUs: every unit exactly once, one unit at a time per GPU, near the bound', () => {
    const all = units(['step100', 'step200', 'step300', 'step400', 'step500', 'final']);
    const p = packUnits(all, 2, 8);
    expect(p.gpus).toHaveLength(16);
    const placed = p.gpus.flatMap((g) => g.units.map(key)).sort();
    expect(placed).toEqual(all.map(key).sort());
    expect(new Set(placed).size).toBe(30);
    // A GPU runs its units in turn: its load is their sum, and the wall time is the busiest GPU's.
    for (const g of p.gpus) expect(g.loadS).toBe(g.units.reduce((s, u) => s + u.estimateS, 0));
    expect(p.wallS).toBe(Math.max(...p.gpus.map((g) => g.loadS)));
    // Graham: longest-first is within 4/3 of the best possible, and never below the lower bound.
    expect(p.wallS).toBeGreaterThanOrEqual(p.lowerBoundS);
    expect(p.wallS).toBeLessThanOrEqual((4 / 3) * p.lowerBoundS);
    expect(new Set(p.gpus.map((g) => `${g.host}:${g.gpu}`)).size).toBe(16);
    expect(p.idle).toBe(0);
  });

  it('3 units on 8 GPUs: 3 busy, 5 idle', () => {
    const p = packUnits(units(['final'], TASKS.slice(0, 3)), 1, 8);
    expect(p.gpus.filter((g) => g.units.length > 0)).toHaveLength(3);
    expect(p.idle).toBe(5);
    expect(p.wallS).toBe(estimateSeconds('minerva_math'));
  });

  it('puts the longest units first, each on the least loaded GPU', () => {
    const u = (task: string, s: number): EvalUnit => ({ checkpoint: 'c', task, numFewshot: 0, estimateS: s });
    const p = packUnits([u('a', 3), u('b', 3), u('c', 2), u('d', 2), u('e', 2)], 1, 2);
    // LPT: 3|3, then 2 → GPU 0, 2 → GPU 1, 2 → GPU 0: loads 7 and 5 (the best possible is 6: 3+3 | 2+2+2).
    expect(p.gpus.map((g) => g.units.map((x) => x.task))).toEqual([
      ['a', 'c', 'e'],
      ['b', 'd'],
    ]);
    expect(p.wallS).toBe(7);
    expect(p.lowerBoundS).toBe(6);
  });

  it('estimates from learned durations (their median) before the built-in table', () => {
    expect(estimateSeconds('ifeval')).toBe(300);
    expect(estimateSeconds('ifeval', { ifeval: [100, 900, 200] })).toBe(200);
    expect(estimateSeconds('gsm8k_cot_zeroshot')).toBe(estimateSeconds('gsm8k'));
    expect(estimateSeconds('some_new_task')).toBe(600);
  });

  it('refuses a cluster without GPUs', () => {
    expect(() => packUnits([], 0, 8)).toThrow(RangeError);
  });
});
