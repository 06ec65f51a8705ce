/** One row of bench/results.md: our figure against the baseline's, and whether it met its target. */
export interface Row {
  readonly name: string;
  readonly ours: string;
  readonly baseline: string;
  readonly ratio: number;
  readonly target: string;
  readonly pass: boolean;
}

/** A timed row: ours against the baseline in seconds, met when the ratio is at most `target`. */
export function row(name: string, ours: number, baseline: number, target: number): Row {
  const ratio = ours / baseline;
  return {
    name,
    ours: `${ours.toFixed(2)} s`,
    baseline: `${baseline.toFixed(2)} s`,
    ratio,
    target: `≤ ${target.toFixed(1)}×`,
    pass: ratio <= target,
  };
}

/** What every row function is handed: its scratch folder and the notes under the table. */
export interface BenchContext {
  /** A scratch folder, removed when the bench ends. */
  readonly work: string;
  /** Lines for the notes under the table (spreads, bytes moved, requests seen). */
  readonly log: string[];
}
