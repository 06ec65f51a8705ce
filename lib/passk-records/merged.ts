/**
 * A pass@k campaign's results once its shards are merged: per prompt n (completions), c (correct) and the
 * pass rate, and pass@k over the prompts. The merge and the estimators live in merge.ts and estimator.ts.
 */
import type { PasskCampaign } from './job-plan';

export interface PromptResult {
  readonly promptId: string;
  /** Completions scored. */
  readonly n: number;
  /** Completions with a score > 0 (their script's `num_correct`). */
  readonly c: number;
  /** c / n */
  readonly passRate: number;
  /** Index of the first correct completion in the script's order (-1: none): their "first k" figure. */
  readonly firstCorrect: number;
  readonly shard: number;
}

export interface PassAtK {
  readonly k: number;
  /** Mean over prompts of 1 − C(n−c, k)/C(n, k) (prompts with n ≥ k only). */
  readonly unbiased: number;
  /** Their script's figure: the share of prompts with a correct completion among the first k. */
  readonly firstK: number;
  /** Prompts counted (n ≥ k). */
  readonly prompts: number;
}

/**
 * n differs across prompts (a shard stopped mid-prompt on resume, campaigns pooled, a hand-edited file):
 * a row of k averages over the prompts with n ≥ k only, so rows of different k are of different prompts
 * and pass@k may fall as k grows. Said beside the table so the rows are not read as one curve.
 */
export interface UnequalN {
  readonly minN: number;
  readonly maxN: number;
  /** Prompts read: what each row of `fewerPromptsAtK` has fewer of. */
  readonly prompts: number;
  /** The k whose row averages over fewer prompts than were read (the prompts with n < k left out). */
  readonly fewerPromptsAtK: readonly number[];
}

export interface MergedPasskResults {
  /** What was read: a job name or a run folder. */
  readonly source: string;
  /** Undefined when the source has no plan (a bare folder of their script's shards). */
  readonly campaign?: PasskCampaign;
  /** The shard count the plan gave (undefined without a plan). */
  readonly shardsExpected?: number;
  /** Shard indices read. */
  readonly shardsRead: readonly number[];
  /**
   * Shard indices the plan has but whose results file is absent; without a plan, the gaps below the
   * highest shard read (their script records no shard count, so shards past the highest are not seen).
   */
  readonly missingShards: readonly number[];
  /** In the order read: shard order, then line order; a prompt id once (its first record). */
  readonly prompts: readonly PromptResult[];
  /** Records of a prompt id already read, dropped. */
  readonly duplicates: number;
  /** Lines that are not a result record (a cut-off last line, say), with where. */
  readonly badLines: readonly { readonly shard: number; readonly line: number; readonly why: string }[];
  /** k = 1, 2, 4, … up to the largest n (at most MAX_K). */
  readonly passAtK: readonly PassAtK[];
  /** Present only when n differs across prompts. */
  readonly unequalN?: UnequalN;
}
