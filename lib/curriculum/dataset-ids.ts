import * as path from 'node:path';
import type { DataType, Dictionary, RecordBatch, Type, Vector } from 'apache-arrow';
import type { IS3, S3ObjectInfo } from '../aws';
import { mapLimited } from '../util';
import type { CopyColumns } from './id-rules';

/*
 * Reading the columns an id rule needs from a dataset copy that `Dataset.save_to_disk` wrote to S3:
 * `state.json` names the data files in order (`_data_files`), `dataset_info.json` the features; each
 * data file is an Arrow IPC *stream* (`data-0000N-of-0000M.arrow`). Only those files are fetched, each
 * with one GET pinned to the ETag the listing gave (If-Match), so what is read is the listed copy.
 */

/** The copy's top-level files Dataset.load_from_disk reads. */
export const STATE_FILE = 'state.json';
export const INFO_FILE = 'dataset_info.json';
const DICT_FILE = 'dataset_dict.json';

export interface DatasetCopy {
  readonly bucket: string;
  /** The folder's prefix, ending in `/`. */
  readonly prefix: string;
}

export interface ReadCounters {
  /** Response bytes read (JSON files and Arrow streams). */
  bytes: number;
  /** Object GETs made. */
  gets: number;
}

export type CopyRead =
  | { readonly ok: true; readonly copy: CopyColumns; readonly files: readonly string[] }
  | { readonly ok: false; readonly reason: string };

/** Every object under the copy's prefix (the cache key is made from all of them). */
export async function listCopy(s3: IS3, copy: DatasetCopy): Promise<S3ObjectInfo[]> {
  return s3.listObjects(copy.bucket, copy.prefix);
}

async function readWhole(
  s3: IS3,
  bucket: string,
  object: S3ObjectInfo,
  counters: ReadCounters,
  signal?: AbortSignal,
): Promise<AsyncIterable<Uint8Array>> {
  signal?.throwIfAborted();
  counters.gets++;
  const stream = await s3.getObjectStream(bucket, object.key, { ifMatch: object.etag });
  return (async function* counted() {
    const chunks = (stream as AsyncIterable<Uint8Array | string>)[Symbol.asyncIterator]();
    for (;;) {
      let next: IteratorResult<Uint8Array | string>;
      try {
        signal?.throwIfAborted();
        next = await chunks.next();
      } catch (err) {
        throw new TransportError(err);
      }
      if (next.done) return;
      const bytes = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      counters.bytes += bytes.length;
      yield bytes;
    }
  })();
}

/** A failure of the transfer (or an abort) while the Arrow reader pulls bytes: not the copy's fault. */
class TransportError extends Error {
  constructor(readonly original: unknown) {
    super('transfer failed');
  }
}

async function readJson(
  s3: IS3,
  bucket: string,
  object: S3ObjectInfo,
  counters: ReadCounters,
  signal?: AbortSignal,
): Promise<unknown> {
  const chunks: Uint8Array[] = [];
  for await (const c of await readWhole(s3, bucket, object, counters, signal)) chunks.push(c);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new CopyError(`${path.posix.basename(object.key)} is not JSON`);
  }
}

type Arrow = typeof import('apache-arrow');
let arrowModule: Arrow | undefined;

/**
 * apache-arrow, loaded when a copy is first read: it costs ~50 ms, which every command that loads
 * lib/training (status, logs, download, …) would otherwise pay at start.
 */
function arrow(): Arrow {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy, synchronous load (see above)
  return (arrowModule ??= require('apache-arrow') as Arrow);
}

/** A value as Python's `str()` prints it, for the scalar types a `save_to_disk` column holds. */
function pythonStr(value: unknown, type: DataType): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') {
    const { Type: T } = arrow();
    const valueType = type.typeId === T.Dictionary ? (type as Dictionary).dictionary : type;
    if (valueType.typeId === T.Int) return String(value);
    if (Number.isNaN(value)) return 'nan';
    if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
    return Number.isInteger(value) && Math.abs(value) < 1e16 ? `${value}.0` : String(value);
  }
  throw new Error(`unsupported value ${String(value)}`);
}

/** The column types a rule can read (a `save_to_disk` copy's scalar columns). */
function isScalarType(type: Type): boolean {
  const { Type: T } = arrow();
  return [T.Utf8, T.LargeUtf8, T.Int, T.Float, T.Bool, T.Dictionary, T.Null].includes(type);
}

interface StateFile {
  _data_files?: { filename?: unknown }[];
  _format_columns?: unknown;
  _indices_data_files?: unknown;
}

/** The data files state.json lists, or why the copy cannot be read as the loader reads it. */
function dataFiles(state: StateFile, columns: readonly string[]): { files?: string[]; reason?: string } {
  const listed = state._data_files;
  if (!Array.isArray(listed) || listed.some((f) => typeof f?.filename !== 'string')) {
    return { reason: `${STATE_FILE} lists no data files (_data_files)` };
  }
  if (Array.isArray(state._indices_data_files) && state._indices_data_files.length > 0) {
    return {
      reason: `${STATE_FILE} names an indices mapping (an older datasets version): rows are not in file order`,
    };
  }
  const shown = state._format_columns;
  if (Array.isArray(shown)) {
    const hidden = columns.filter((c) => !shown.includes(c));
    if (hidden.length)
      return { reason: `its format hides the column(s) ${hidden.join(', ')} from the loader` };
  }
  return { files: listed.map((f) => f.filename as string) };
}

/** The wanted columns of one Arrow stream, appended to `out`; its row count. */
async function readStream(
  source: AsyncIterable<Uint8Array>,
  columns: readonly string[],
  out: Record<string, (string | null)[]>,
  file: string,
): Promise<number> {
  let rows = 0;
  try {
    for await (const batch of await arrow().RecordBatchReader.from(source)) {
      rows += appendColumns(batch, columns, out, file);
    }
  } catch (err) {
    if (err instanceof TransportError) throw err.original;
    if (err instanceof CopyError) throw err;
    // The Arrow library's own errors: a truncated or foreign file.
    throw new CopyError(`${file} is not an Arrow stream the loader could read (${(err as Error).message})`);
  }
  return rows;
}

function appendColumns(
  batch: RecordBatch,
  columns: readonly string[],
  out: Record<string, (string | null)[]>,
  file: string,
): number {
  for (const name of columns) {
    const vector = batch.getChild(name) as Vector | null;
    if (!vector) throw new CopyError(`${file} has no column \`${name}\``);
    if (!isScalarType(vector.type.typeId)) {
      throw new CopyError(`${file}: column \`${name}\` is ${String(vector.type)}, not a scalar`);
    }
    const values = out[name];
    for (let i = 0; i < batch.numRows; i++) values.push(pythonStr(vector.get(i), vector.type));
  }
  return batch.numRows;
}

/** The copy is not one the check can read (missing files, columns the rule needs, an unreadable stream). */
class CopyError extends Error {}

/**
 * The listed copy's wanted columns, in row order across its data files (as `load_from_disk`
 * concatenates them). `counters` receives the bytes and GETs spent.
 */
export async function readCopyColumns(
  s3: IS3,
  copy: DatasetCopy,
  listing: readonly S3ObjectInfo[],
  columns: readonly string[],
  counters: ReadCounters,
  signal?: AbortSignal,
): Promise<CopyRead> {
  const byName = new Map(listing.map((o) => [o.key.slice(copy.prefix.length), o]));
  const uri = `s3://${copy.bucket}/${copy.prefix}`;
  if (byName.size === 0) return { ok: false, reason: `there is no dataset at ${uri}` };
  if (byName.has(DICT_FILE) && !byName.has(STATE_FILE)) {
    return {
      ok: false,
      reason: `${uri} is a DatasetDict (${DICT_FILE}), not the split's folder the loader reads`,
    };
  }
  const stateObject = byName.get(STATE_FILE);
  if (!stateObject) {
    return { ok: false, reason: `${uri} has no ${STATE_FILE}: Dataset.load_from_disk cannot load it` };
  }
  try {
    return await readListedCopy(s3, copy, byName, stateObject, columns, counters, signal);
  } catch (err) {
    if (err instanceof CopyError) return { ok: false, reason: `${uri}: ${err.message}` };
    throw err;
  }
}

async function readListedCopy(
  s3: IS3,
  copy: DatasetCopy,
  byName: ReadonlyMap<string, S3ObjectInfo>,
  stateObject: S3ObjectInfo,
  columns: readonly string[],
  counters: ReadCounters,
  signal?: AbortSignal,
): Promise<CopyRead> {
  const infoObject = byName.get(INFO_FILE);
  const [state, info] = await Promise.all([
    readJson(s3, copy.bucket, stateObject, counters, signal) as Promise<StateFile>,
    infoObject
      ? (readJson(s3, copy.bucket, infoObject, counters, signal) as Promise<{ features?: unknown }>)
      : undefined,
  ]);
  const { files, reason } = dataFiles(state ?? {}, columns);
  if (!files) throw new CopyError(reason!);
  // The features say early whether the columns are there (the stream's schema says it again).
  const features = info?.features;
  if (features && typeof features === 'object' && !Array.isArray(features)) {
    const absent = columns.filter((c) => !(c in features));
    if (absent.length) throw new CopyError(`${INFO_FILE} has no column(s) ${absent.join(', ')}`);
  }
  const absentFiles = files.filter((f) => !byName.has(f));
  if (absentFiles.length) {
    throw new CopyError(`${STATE_FILE} names ${absentFiles.join(', ')}, which is not there`);
  }
  const parts = await mapLimited(files, 4, async (file) => {
    const out: Record<string, (string | null)[]> = Object.fromEntries(columns.map((c) => [c, []]));
    const source = await readWhole(s3, copy.bucket, byName.get(file)!, counters, signal);
    const rows = await readStream(source, columns, out, file);
    return { rows, out };
  });
  const merged: Record<string, (string | null)[]> = Object.fromEntries(columns.map((c) => [c, []]));
  let rows = 0;
  for (const part of parts) {
    rows += part.rows;
    for (const c of columns) for (const v of part.out[c]) merged[c].push(v);
  }
  return { ok: true, copy: { rows, columns: merged }, files };
}

/** A short name for the copy in messages: its folder (`gsm8k_train`). */
export function copyName(copy: DatasetCopy): string {
  return path.posix.basename(copy.prefix.replace(/\/+$/, ''));
}
