/**
 * On-demand prices of SageMaker training instances, USD per instance-hour, used for estimates.
 *
 * Source: AWS's public SageMaker pricing page (Training, on-demand), as the team last read it for
 * us-west-2 and us-east-1 (the same list price in both); NOT re-verified by machine — this repository
 * cannot reach AWS's price list. Refresh with
 *   aws pricing get-products --region us-east-1 --service-code AmazonSageMaker \
 *     --filters Type=TERM_MATCH,Field=instanceName,Value=ml.p4de.24xlarge Type=TERM_MATCH,Field=regionCode,Value=us-west-2
 * and update PRICES_AS_OF. Regions not listed use the us-west-2 column, flagged in the output.
 */
export const PRICES_AS_OF = '2026-11-22';
export const PRICES_SOURCE = 'AWS SageMaker pricing page (training, on-demand), not machine-verified';

const US_WEST_2: Readonly<Record<string, number>> = {
  'ml.p4d.24xlarge': 37.688,
  'ml.p4de.24xlarge': 47.11,
  'ml.p5.48xlarge': 113.07,
  'ml.p5e.48xlarge': 124.37,
  'ml.p5en.48xlarge': 126.57,
  'ml.g5.xlarge': 1.408,
  'ml.g5.2xlarge': 1.515,
  'ml.g5.4xlarge': 2.03,
  'ml.g5.8xlarge': 3.06,
  'ml.g5.12xlarge': 7.09,
  'ml.g5.16xlarge': 5.12,
  'ml.g5.24xlarge': 10.18,
  'ml.g5.48xlarge': 20.36,
  'ml.g6.xlarge': 1.006,
  'ml.g6.2xlarge': 1.222,
  'ml.g6.12xlarge': 5.752,
  'ml.g6.48xlarge': 16.108,
  'ml.g6e.xlarge': 2.335,
  'ml.g6e.2xlarge': 2.812,
  'ml.g6e.12xlarge': 12.98,
  'ml.g6e.48xlarge': 37.591,
};

const TABLES: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  'us-west-2': US_WEST_2,
  'us-east-1': US_WEST_2,
};

export interface Price {
  readonly perHour: number;
  /** True when the region has no table of its own and us-west-2's is used. */
  readonly approximateRegion: boolean;
}

export function hourlyPrice(instanceType: string, region: string): Price | undefined {
  const table = TABLES[region];
  const perHour = (table ?? US_WEST_2)[instanceType];
  return perHour === undefined ? undefined : { perHour, approximateRegion: table === undefined };
}

/** Cost of `seconds` on `count` instances. */
export function costOf(
  instanceType: string,
  region: string,
  count: number,
  seconds: number,
): number | undefined {
  const price = hourlyPrice(instanceType, region);
  return price === undefined ? undefined : (price.perHour * count * seconds) / 3600;
}

export function formatUsd(amount: number | undefined): string {
  if (amount === undefined) return 'n/a';
  return amount >= 100 ? `$${amount.toFixed(0)}` : `$${amount.toFixed(2)}`;
}
