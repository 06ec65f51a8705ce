/**
 * The pass@k estimators. Their script reports "a correct completion among the first k" (one sample of
 * the event per prompt, so its figure depends on the order completions came in); the unbiased estimator
 * uses all n: the chance that k drawn without replacement from n, c of them correct, hold one.
 */
import type { PassAtK, PromptResult, UnequalN } from './merged';

/**
 * The most completions per prompt a results line may claim. Their script asks vLLM for all n of a prompt
 * at once and writes each completion's text into the line: the campaigns run are n = 128 to 512, and at
 * 65,536 one prompt is already some 67M generated tokens (at 1,024 each) and a line of tens of megabytes.
 * A count beyond it is no campaign's, and is read as a bad line rather than worked through: the work of
 * a line must not depend on what the line says.
 */
export const MAX_COMPLETIONS_PER_PROMPT = 65_536;

/**
 * The largest k of the table. An estimate costs min(c, k) multiplications, so 1,024 bounds a prompt's
 * whole table to about 2,000 (no more than reading its line costs) whatever its n; a row of k > 1,024
 * would need a campaign of 2,048 completions per prompt, four times the largest run.
 */
export const MAX_K = 1024;

function assertCount(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 0)
    throw new RangeError(`pass@k: ${name} must be a whole number ≥ 0 (got ${v})`);
}

/**
 * 1 − C(n−c, k)/C(n, k) as a product of ratios: the binomials of n = 512 overflow a double long before
 * their ratio does, and each factor loses at most an ulp. The ratio is ∏_{i=n−c+1}^{n} (1 − k/i) (c
 * factors) and also ∏_{j=0}^{k−1} (n−c−j)/(n−j) (k factors): the shorter is taken, so an estimate costs
 * min(c, k) steps.
 */
export function unbiasedPassAtK(n: number, c: number, k: number): number {
  assertCount('n', n);
  assertCount('c', c);
  assertCount('k', k);
  if (n > MAX_COMPLETIONS_PER_PROMPT)
    throw new RangeError(`pass@k: n (${n}) is over ${MAX_COMPLETIONS_PER_PROMPT} completions per prompt`);
  if (k < 1) throw new RangeError(`pass@k: k must be ≥ 1 (got ${k})`);
  if (c > n) throw new RangeError(`pass@k: c (${c}) exceeds n (${n})`);
  if (k > n) throw new RangeError(`pass@k: k (${k}) exceeds n (${n}): fewer completions than drawn`);
  // Fewer wrong completions than k: every draw of k holds a correct one.
  if (n - c < k) return 1;
  let allWrong = 1;
  if (c <= k) for (let i = n - c + 1; i <= n; i++) allWrong *= 1 - k / i;
  else for (let j = 0; j < k; j++) allWrong *= (n - c - j) / (n - j);
  return 1 - allWrong;
}

/** k = 1, 2, 4, … up to maxN and at most MAX_K (none when maxN < 1). */
export function kValues(maxN: number): number[] {
  const ks: number[] = [];
  for (let k = 1; k <= Math.min(maxN, MAX_K); k *= 2) ks.push(k);
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

/** How n differs across the prompts, and which rows of the table that leaves with fewer prompts; undefined when it does not. */
export function unequalNOf(
  prompts: readonly PromptResult[],
  table: readonly PassAtK[],
): UnequalN | undefined {
  if (prompts.length === 0) return undefined;
  let minN = Infinity;
  let maxN = -Infinity;
  for (const p of prompts) {
    minN = Math.min(minN, p.n);
    maxN = Math.max(maxN, p.n);
  }
  if (minN === maxN) return undefined;
  const fewerPromptsAtK = table.filter((row) => row.prompts < prompts.length).map((row) => row.k);
  return { minN, maxN, prompts: prompts.length, fewerPromptsAtK };
}
