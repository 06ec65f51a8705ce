/**
 * The pass@k estimators. Their script reports "a correct completion among the first k" (one sample of
 * the event per prompt, so its figure depends on the order completions came in); the unbiased estimator
 * uses all n: the chance that k drawn without replacement from n, c of them correct, hold one.
 */
import type { PassAtK, PromptResult } from './merged';

function assertCount(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 0)
    throw new RangeError(`pass@k: ${name} must be a whole number ≥ 0 (got ${v})`);
}

/**
 * 1 − C(n−c, k)/C(n, k), computed as 1 − ∏_{i=n−c+1}^{n} (1 − k/i): the binomials of n = 512 overflow a
 * double long before their ratio does, and the product's c factors each lose at most an ulp.
 */
export function unbiasedPassAtK(n: number, c: number, k: number): number {
  assertCount('n', n);
  assertCount('c', c);
  assertCount('k', k);
  if (k < 1) throw new RangeError(`pass@k: k must be ≥ 1 (got ${k})`);
  if (c > n) throw new RangeError(`pass@k: c (${c}) exceeds n (${n})`);
  if (k > n) throw new RangeError(`pass@k: k (${k}) exceeds n (${n}): fewer completions than drawn`);
  // Fewer wrong completions than k: every draw of k holds a correct one.
  if (n - c < k) return 1;
  let allWrong = 1;
  for (let i = n - c + 1; i <= n; i++) allWrong *= 1 - k / i;
  return 1 - allWrong;
}

/** k = 1, 2, 4, … up to maxN (none when maxN < 1). */
export function kValues(maxN: number): number[] {
  const ks: number[] = [];
  for (let k = 1; k <= maxN; k *= 2) ks.push(k);
  return ks;
}

/**
 * pass@k for each k of kValues(the largest n), each over the prompts with at least k completions (a
 * prompt with fewer cannot be drawn from k times, and counting it as failed would bias the figure down).
 */
export function passAtKTable(prompts: readonly PromptResult[]): PassAtK[] {
  const maxN = prompts.reduce((m, p) => Math.max(m, p.n), 0);
  return kValues(maxN).map((k) => {
    let counted = 0;
    let unbiased = 0;
    let firstK = 0;
    for (const p of prompts) {
      if (p.n < k) continue;
      counted++;
      unbiased += unbiasedPassAtK(p.n, p.c, k);
      if (p.firstCorrect >= 0 && p.firstCorrect < k) firstK++;
    }
    // The prompt with the largest n counts for every k listed, so counted ≥ 1.
    return { k, unbiased: unbiased / counted, firstK: firstK / counted, prompts: counted };
  });
}
