import { kValues, passAtKTable, unbiasedPassAtK } from '../../lib/passk-records/estimator';
import { type PromptResult } from '../../lib/passk-records/merged';

/** C(n, k) exactly. */
function binomial(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let r = 1n;
  for (let i = 1; i <= k; i++) r = (r * BigInt(n - k + i)) / BigInt(i);
  return r;
}

/** 1 − C(n−c, k)/C(n, k) from exact binomials, the ratio rounded at 1e-30 (far below what is compared). */
function exactPassAtK(n: number, c: number, k: number): number {
  const scale = 10n ** 30n;
  const ratio = (binomial(n - c, k) * scale) / binomial(n, k);
  return 1 - Number(ratio) / 1e30;
}

function prompt(promptId: string, n: number, c: number, firstCorrect: number): PromptResult {
  return { promptId, n, c, passRate: n ? c / n : 0, firstCorrect, shard: 0 };
}

describe('unbiasedPassAtK', () => {
  it.each([
    // C(3,2)/C(4,2) = 3/6
    [4, 1, 2, 0.5],
    // 1 − C(3,2)/C(5,2) = 1 − 3/10
    [5, 2, 2, 0.7],
    // pass@1 is the pass rate
    [10, 3, 1, 0.3],
    [128, 0, 1, 0],
    [128, 0, 128, 0],
    // n − c < k: every draw of k holds a correct one
    [4, 3, 2, 1],
    [128, 1, 128, 1],
    // 1 − C(6,3)/C(8,3) = 1 − 20/56
    [8, 2, 3, 1 - 20 / 56],
  ])('n=%i c=%i k=%i → %f', (n, c, k, expected) => {
    expect(unbiasedPassAtK(n, c, k)).toBeCloseTo(expected, 14);
  });

  it('agrees with exact binomials for n up to 512, every c and k = 1, 2, 4, …', () => {
    let compared = 0;
    const off: string[] = [];
    for (const n of [1, 2, 3, 7, 16, 100, 128, 255, 512]) {
      for (let c = 0; c <= n; c++) {
        for (const k of kValues(n)) {
          const got = unbiasedPassAtK(n, c, k);
          const want = exactPassAtK(n, c, k);
          // toBeCloseTo(want, 12): |got − want| < 5e-13, checked by hand since expect() per pair is slow.
          if (!(Math.abs(got - want) < 5e-13 && got >= 0 && got <= 1))
            off.push(`n=${n} c=${c} k=${k}: ${got} ≠ ${want}`);
          compared++;
        }
      }
    }
    expect(off).toEqual([]);
    expect(compared).toBeGreaterThan(5000);
    // The hardest corner, spelled out: a rare correct completion in 512 at small k.
    expect(unbiasedPassAtK(512, 1, 2)).toBeCloseTo(exactPassAtK(512, 1, 2), 12);
    expect(unbiasedPassAtK(512, 1, 2)).toBeCloseTo(2 / 512, 12);
    expect(unbiasedPassAtK(512, 37, 64)).toBeCloseTo(exactPassAtK(512, 37, 64), 12);
  });

  it('refuses k > n, k < 1, c > n and counts that are not whole', () => {
    expect(() => unbiasedPassAtK(4, 1, 8)).toThrow(/k \(8\) exceeds n \(4\)/);
    expect(() => unbiasedPassAtK(4, 1, 0)).toThrow(/k must be ≥ 1/);
    expect(() => unbiasedPassAtK(4, 5, 1)).toThrow(/c \(5\) exceeds n/);
    expect(() => unbiasedPassAtK(4.5, 1, 1)).toThrow(/n must be a whole number/);
    expect(() => unbiasedPassAtK(4, -1, 1)).toThrow(/c must be a whole number/);
  });
});

describe('kValues', () => {
  it('is the powers of two up to maxN', () => {
    expect(kValues(128)).toEqual([1, 2, 4, 8, 16, 32, 64, 128]);
    expect(kValues(100)).toEqual([1, 2, 4, 8, 16, 32, 64]);
    expect(kValues(512)).toHaveLength(10);
    expect(kValues(1)).toEqual([1]);
    expect(kValues(0)).toEqual([]);
  });
});

describe('passAtKTable', () => {
  it('averages the unbiased estimate and counts their first-k figure over prompts with n ≥ k', () => {
    const table = passAtKTable([
      prompt('a', 4, 1, 3), // correct only at index 3
      prompt('b', 4, 0, -1),
      prompt('c', 4, 4, 0),
      prompt('d', 2, 1, 1), // counts for k = 1, 2 only
    ]);
    expect(table.map((r) => r.k)).toEqual([1, 2, 4]);
    expect(table.map((r) => r.prompts)).toEqual([4, 4, 3]);
    // k=1: mean of 1/4, 0, 1, 1/2
    expect(table[0].unbiased).toBeCloseTo((0.25 + 0 + 1 + 0.5) / 4, 14);
    // k=2: a: 1 − C(3,2)/C(4,2) = 1/2; d: n − c < k → 1
    expect(table[1].unbiased).toBeCloseTo((0.5 + 0 + 1 + 1) / 4, 14);
    // k=4 over a, b, c
    expect(table[2].unbiased).toBeCloseTo((1 + 0 + 1) / 3, 14);
    // first-k: k=1 only c; k=2 c and d; k=4 a and c (d not counted)
    expect(table.map((r) => r.firstK)).toEqual([1 / 4, 2 / 4, 2 / 3]);
  });

  it('is empty without prompts or completions', () => {
    expect(passAtKTable([])).toEqual([]);
    expect(passAtKTable([prompt('a', 0, 0, -1)])).toEqual([]);
  });
});
