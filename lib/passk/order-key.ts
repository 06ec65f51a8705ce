import { UserError } from '../errors';

/*
 * What `rlvr curriculum build` sorts the prompts by: the pooled pass rate (Σc/Σn, the default), or a
 * prompt's unbiased pass@K as their curriculum builder saw it. Their scripts/generate_curriculum.py (as it
 * stood before 489ffc2 deleted it) sorted the rows of a `<dataset>_pass_at_k.csv` on `float(row["pass@K"])`
 * with Python's stable sort, and their only maker of that CSV (scripts/ifeval_to_csv.py) wrote each value
 * as `f"{1 - comb(n - c, k) / comb(n, k):.6f}"`. Two prompts whose pass@K agree to 6 decimals were therefore
 * a tie, left in the CSV's row order: the key reproduces that value exactly (the same double, rounded as
 * Python's `:.6f` rounds it), not an approximation of it, so the order is theirs.
 */

export type OrderKey = { readonly kind: 'rate' } | { readonly kind: 'pass@k'; readonly k: number };

export const RATE_KEY: OrderKey = { kind: 'rate' };

/** `rate` or `pass@K` (K a positive whole number); anything else is a UserError naming the forms. */
export function parseOrderKey(text: string): OrderKey {
  if (text === 'rate') return RATE_KEY;
  const m = /^pass@(\d+)$/.exec(text);
  const k = m ? Number(m[1]) : NaN;
  if (!m || !Number.isSafeInteger(k) || k < 1)
    throw new UserError(
      `--key ${text}: rate (the pooled pass rate) or pass@K with K a whole number ≥ 1, e.g. pass@16`,
      'BadFlag',
    );
  return { kind: 'pass@k', k };
}

export function orderKeyLabel(key: OrderKey): string {
  return key.kind === 'rate' ? 'rate' : `pass@${key.k}`;
}

function bitLength(x: bigint): number {
  return x === 0n ? 0 : x.toString(2).length;
}

/**
 * a / b for 0 < a < b, as Python's int true division gives it: the exact quotient rounded once to the
 * nearest double, ties to even (the quotient of big binomials must not be rounded twice on the way).
 */
function quotientToDouble(a: bigint, b: bigint): number {
  // Enough bits that the quotient carries 53 significant bits, a rounding bit and more.
  const shift = bitLength(b) - bitLength(a) + 56;
  const scaled = a << BigInt(shift);
  let q = scaled / b;
  const sticky = scaled % b !== 0n;
  const extra = bitLength(q) - 53;
  let mant = q >> BigInt(extra);
  const rest = q & ((1n << BigInt(extra)) - 1n);
  const half = 1n << BigInt(extra - 1);
  if (rest > half || (rest === half && (sticky || (mant & 1n) === 1n))) mant += 1n;
  q = mant;
  // mant ≤ 2^53 is exact as a Number; scaling by a power of two is exact while the result is normal, and a
  // quotient small enough to lose bits there leaves 1 − a/b at 1.0 either way.
  return Number(q) * 2 ** (extra - shift);
}

/**
 * 1 − C(n−c, k)/C(n, k) as their ifeval_to_csv.py's pass_at_k_prob computes it: 0.0 when c = 0, 1.0 when
 * k ≥ n or fewer than k are wrong, else 1.0 minus the correctly rounded quotient of the binomials. The
 * quotient is taken from the shorter product (min(c, k) factors each side): the same rational, so the same
 * double.
 */
export function passAtKAsTheirCsv(n: number, c: number, k: number): number {
  if (![n, c, k].every((v) => Number.isSafeInteger(v) && v >= 0) || k < 1 || c > n)
    throw new RangeError(`pass@k: n ${n}, c ${c}, k ${k}`);
  if (c === 0) return 0;
  if (k >= n || n - c < k) return 1;
  let num = 1n;
  let den = 1n;
  if (c <= k) {
    // C(n−c,k)/C(n,k) = ∏_{i=n−c+1}^{n} (i−k)/i
    for (let i = n - c + 1; i <= n; i++) {
      num *= BigInt(i - k);
      den *= BigInt(i);
    }
  } else {
    // = ∏_{j=0}^{k−1} (n−c−j)/(n−j)
    for (let j = 0; j < k; j++) {
      num *= BigInt(n - c - j);
      den *= BigInt(n - j);
    }
  }
  return 1 - quotientToDouble(num, den);
}

/**
 * round(x · 10^6) as Python's `f"{x:.6f}"` rounds it: on the double's exact binary value, an exact half to
 * even. JavaScript's toFixed(6) rounds an exact half up (0.0078125 → 0.007813; Python writes 0.007812), so
 * it is not used. For finite x ≥ 0.
 */
export function pyFixed6Micros(x: number): number {
  if (!Number.isFinite(x) || x < 0) throw new RangeError(`:.6f of ${x}`);
  if (x === 0) return 0;
  // x = mant · 2^exp exactly, from the double's bits.
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp: number;
  if (biased === 0) exp = -1074;
  else {
    mant |= 1n << 52n;
    exp = biased - 1075;
  }
  const scaled = mant * 1_000_000n;
  if (exp >= 0) return Number(scaled << BigInt(exp));
  const div = 1n << BigInt(-exp);
  let q = scaled / div;
  const twice = (scaled % div) * 2n;
  if (twice > div || (twice === div && (q & 1n) === 1n)) q += 1n;
  return Number(q);
}

/** The text Python's `:.6f` writes for x ≥ 0 (what their CSV holds). */
export function pyFixed6(x: number): string {
  const micros = pyFixed6Micros(x);
  return `${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, '0')}`;
}
