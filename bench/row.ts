/** One row of bench/results.md: our figure against the baseline's, and whether it met its target. */
export interface Row {
  readonly name: string;
  readonly ours: string;
  readonly baseline: string;
  readonly ratio: number;
  readonly target: string;
  readonly pass: boolean;
}
