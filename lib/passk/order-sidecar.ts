import { createHash } from 'node:crypto';
import type { MergedPasskResults } from '../passk-records';
import type { CurriculumOrder } from './curriculum';

/*
 * The build record written beside an order file (`<order file>.json`): how it was made, so a team member
 * holding only the file in curricula/ can tell which campaigns, key and band gave it, and what was left
 * out. The trainer never reads it: its loader opens the order file the config names, line by line, and
 * nothing lists curricula/ to find order files. A job's order channel is the order file's own key as an
 * S3 prefix, so SageMaker copies the record into the channel beside the file, where nothing opens it.
 *
 * Deterministic (no time, no host): building the same order again gives the same record.
 */

export const SIDECAR_SUFFIX = '.json';

/** The record's name for an order file's name or path. */
export function sidecarOf(orderFile: string): string {
  return `${orderFile}${SIDECAR_SUFFIX}`;
}

/** How many ids a record names of a list it counts: enough to recognise, few enough to read. */
const FIRST = 10;

const counted = (ids: readonly string[]) => ({ count: ids.length, first: ids.slice(0, FIRST) });

export interface OrderSidecar {
  readonly version: 1;
  readonly made: 'rlvr curriculum build';
  /** The order file's name under curricula/. */
  readonly orderFile: string;
  /** Of the order file's bytes: which file this record is of. */
  readonly sha256: string;
  readonly prompts: number;
  readonly dataset: string;
  readonly split: string | null;
  readonly level: string | null;
  readonly order: string;
  readonly key: string;
  readonly band: CurriculumOrder['band'];
  readonly outsideBand: number;
  readonly missing: {
    readonly placement: string | null;
    readonly placed: { readonly count: number; readonly first: readonly string[] };
    /** Dataset prompts without a result left out of the file (known only with the copy's ids). */
    readonly dropped: { readonly count: number; readonly first: readonly string[] };
  };
  readonly gaps: CurriculumOrder['gaps'];
  /** Prompts measured by more than one source, their counts summed. */
  readonly pooled: number;
  readonly conflicts: CurriculumOrder['conflicts'];
  /** Where ties were broken: the dataset copy's row order, or why its ids were not read. */
  readonly datasetIds: { readonly from: string; readonly prompts: number } | { readonly why: string };
  readonly sources: readonly {
    readonly source: string;
    readonly prompts: number;
    readonly shardsRead: readonly number[];
    readonly shardsExpected: number | null;
    readonly campaign: MergedPasskResults['campaign'] | null;
  }[];
}

export function sha256Of(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function orderSidecar(
  orderFile: string,
  order: CurriculumOrder,
  results: readonly MergedPasskResults[],
  options: { readonly orderKind: string; readonly datasetIds: OrderSidecar['datasetIds'] },
): OrderSidecar {
  return {
    version: 1,
    made: 'rlvr curriculum build',
    orderFile,
    sha256: sha256Of(order.text),
    prompts: order.ids.length,
    dataset: order.dataset,
    split: order.split ?? null,
    level: order.level ?? null,
    order: options.orderKind,
    key: order.key,
    band: order.band,
    outsideBand: order.excluded.outsideBand,
    missing: {
      placement: order.missing ?? null,
      placed: counted(order.placed),
      dropped: counted(order.excluded.noResult),
    },
    gaps: order.gaps,
    pooled: order.pooled,
    conflicts: order.conflicts,
    datasetIds: options.datasetIds,
    sources: results.map((r) => ({
      source: r.source,
      prompts: r.prompts.length,
      shardsRead: r.shardsRead,
      shardsExpected: r.shardsExpected ?? null,
      campaign: r.campaign ?? null,
    })),
  };
}

export function sidecarText(sidecar: OrderSidecar): string {
  return `${JSON.stringify(sidecar, null, 2)}\n`;
}

/** Whether `text` is a record of the order file with these bytes. */
export function recordsOrder(text: string, sha256: string): boolean {
  try {
    return (JSON.parse(text) as { sha256?: unknown }).sha256 === sha256;
  } catch {
    return false;
  }
}
