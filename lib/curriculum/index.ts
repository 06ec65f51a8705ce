import type { IS3 } from '../aws';
import { cacheKey, defaultCacheDir, readCached, writeCached } from './cache';
import { copyName, listCopy, readCopyColumns, type DatasetCopy, type ReadCounters } from './dataset-ids';
import type { ResolvedIdRule } from './id-rules';
import { checkCurriculum, type CurriculumCheck, type CurriculumCheckOptions } from './order-check';

/*
 * The curriculum pre-flight: every id of an order file exists in the dataset copy the job
 * will receive. id-rules.ts says how each loader names its prompts, dataset-ids.ts reads the columns
 * that takes from the copy's Arrow streams, cache.ts keeps them by the copy's ETags, order-check.ts
 * compares and words the result.
 */

export { ID_RULES, resolveIdRule, type IdRule, type LoaderParams, type ResolvedIdRule } from './id-rules';
export type { CopyColumns } from './id-rules';
export { copyName, type DatasetCopy, type ReadCounters } from './dataset-ids';
export { defaultCacheDir } from './cache';
export {
  checkCurriculum,
  curriculumWarnings,
  formatCurriculumLine,
  missingIdsProblem,
  parseOrderFile,
  uncheckedWarning,
  type CurriculumCheck,
  type CurriculumCheckOptions,
  type CurriculumMessage,
  type OrderLine,
} from './order-check';

export interface DatasetIdsOptions {
  /** Where the id columns are cached (default `defaultCacheDir()`); `false`: no cache. */
  readonly cacheDir?: string | false;
  readonly signal?: AbortSignal;
}

export type DatasetIds =
  | {
      readonly ok: true;
      /** The prompt ids in row order. */
      readonly ids: readonly string[];
      readonly rows: number;
      readonly fromCache: boolean;
      /** What it cost beyond the listing. */
      readonly bytesRead: number;
      readonly gets: number;
    }
  | { readonly ok: false; readonly reason: string; readonly bytesRead: number; readonly gets: number };

/**
 * The ids `rule` gives for the copy at `copy`: one listing, then the cache (same ETags: nothing
 * else is read) or the copy's state.json, dataset_info.json and Arrow streams.
 */
export async function readDatasetIds(
  s3: IS3,
  copy: DatasetCopy,
  rule: Extract<ResolvedIdRule, { checkable: true }>,
  options: DatasetIdsOptions = {},
): Promise<DatasetIds> {
  const counters: ReadCounters = { bytes: 0, gets: 0 };
  const listing = await listCopy(s3, copy);
  const dir = options.cacheDir === false ? undefined : (options.cacheDir ?? defaultCacheDir());
  const key = dir ? cacheKey(copy.bucket, copy.prefix, listing, rule.columns) : undefined;
  let columns = dir && key ? readCached(dir, key, rule.columns) : undefined;
  const fromCache = columns !== undefined;
  if (!columns) {
    const read = await readCopyColumns(s3, copy, listing, rule.columns, counters, options.signal);
    if (!read.ok) return { ok: false, reason: read.reason, bytesRead: counters.bytes, gets: counters.gets };
    columns = read.copy;
    if (dir && key) writeCached(dir, key, `s3://${copy.bucket}/${copy.prefix}`, columns);
  }
  const made = rule.ids(columns);
  const base = { bytesRead: counters.bytes, gets: counters.gets };
  if ('reason' in made) return { ok: false, reason: made.reason, ...base };
  return { ok: true, ids: made.ids, rows: columns.rows, fromCache, ...base };
}

/** One `order` reference: where the order file is, and the dataset entry it orders. */
export interface OrderReference {
  readonly order: { readonly bucket: string; readonly key: string };
  /** The copy the loader reads (`datasets/<folder>/` under the job's prefix). */
  readonly copy: DatasetCopy;
  readonly rule: ResolvedIdRule;
  readonly count?: number;
  readonly mode?: string;
}

export type OrderCheckResult =
  | {
      readonly kind: 'checked';
      readonly check: CurriculumCheck;
      /** The copy's name for messages (`gsm8k_train`). */
      readonly copy: string;
      readonly dataset: Extract<DatasetIds, { ok: true }>;
    }
  | {
      /** Not checked: warn "could not be checked" with `reason`, never pass silently. */
      readonly kind: 'unchecked';
      readonly loader: string;
      readonly reason: string;
    };

/**
 * Reads the order file and the copy's ids (cached) and compares them. The caller has already
 * checked that the order file exists (the pre-flight's presence check).
 */
export async function checkOrderReference(
  s3: IS3,
  ref: OrderReference,
  options: DatasetIdsOptions & Pick<CurriculumCheckOptions, 'firstN'> = {},
): Promise<OrderCheckResult> {
  const { rule } = ref;
  if (!rule.checkable) return { kind: 'unchecked', loader: rule.loader, reason: rule.reason };
  const [orderText, dataset] = await Promise.all([
    // The bytes as the trainer's open() reads them: a byte-order mark stays (getObjectText drops it).
    s3
      .getObjectRange(ref.order.bucket, ref.order.key, 0)
      .then((bytes) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes)),
    readDatasetIds(s3, ref.copy, rule, options),
  ]);
  if (!dataset.ok) return { kind: 'unchecked', loader: rule.loader, reason: dataset.reason };
  const check = checkCurriculum(orderText, dataset.ids, {
    count: ref.count,
    mode: ref.mode,
    firstN: options.firstN,
  });
  return { kind: 'checked', check, copy: copyName(ref.copy), dataset };
}
