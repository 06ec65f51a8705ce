import type { IS3 } from '../aws';
import { cacheKey, defaultCacheDir, readCached, writeCached } from './cache';
import { listCopy, readCopyColumns, type DatasetCopy, type ReadCounters } from './dataset-ids';
import type { ResolvedIdRule } from './id-rules';

/* A dataset copy's prompt ids as a loader numbers them: from the cache when the copy is unchanged, else read. */

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
