import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { S3ObjectInfo } from '../aws';
import type { CopyColumns } from './id-rules';
import { rlvrCacheDir, writeFileAtomic } from '../util';

/*
 * The columns an id rule read from a dataset copy, kept on this machine under a key made of every
 * object of the copy's folder (key, size, ETag) and the columns: a repeated submit, or a sweep over
 * one dataset, lists the folder and reads nothing else. A copy that changed has other ETags, hence
 * another key. Files are written whole (temporary name, then rename), so a reader never sees half.
 */

const VERSION = 2;

/** A column as stored: its distinct values and each row's index into them (few subjects, many rows). */
interface StoredColumn {
  readonly dict: (string | null)[];
  readonly codes: number[];
}

function encode(values: readonly (string | null)[]): StoredColumn {
  const index = new Map<string | null, number>();
  const dict: (string | null)[] = [];
  const codes = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) {
    let code = index.get(values[i]);
    if (code === undefined) {
      code = dict.length;
      index.set(values[i], code);
      dict.push(values[i]);
    }
    codes[i] = code;
  }
  return { dict, codes };
}

function decode(stored: StoredColumn, rows: number): (string | null)[] | undefined {
  if (!Array.isArray(stored?.dict) || !Array.isArray(stored.codes) || stored.codes.length !== rows)
    return undefined;
  const out = new Array<string | null>(rows);
  for (let i = 0; i < rows; i++) {
    const v = stored.dict[stored.codes[i]];
    if (v === undefined) return undefined;
    out[i] = v;
  }
  return out;
}

/** `$XDG_CACHE_HOME/rlvr/curriculum` (default ~/.cache), beside the local runs' S3 cache (rlvr/s3). */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return rlvrCacheDir('curriculum', env);
}

/** The key for these columns of this listed copy; undefined when an object has no ETag (not cacheable). */
export function cacheKey(
  bucket: string,
  prefix: string,
  listing: readonly S3ObjectInfo[],
  columns: readonly string[],
): string | undefined {
  if (listing.length === 0 || listing.some((o) => !o.etag)) return undefined;
  const files = listing
    .map((o) => [o.key.slice(prefix.length), o.size, o.etag] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const material = JSON.stringify({ v: VERSION, bucket, prefix, columns: [...columns].sort(), files });
  return createHash('sha256').update(material).digest('hex');
}

interface Entry {
  readonly v: number;
  readonly source: string;
  readonly rows: number;
  readonly columns: Record<string, StoredColumn>;
}

function entryPath(dir: string, key: string): string {
  return path.join(dir, `${key}.json`);
}

/** The cached columns, or undefined (absent, unreadable, or of another version: read again). */
export function readCached(dir: string, key: string, columns: readonly string[]): CopyColumns | undefined {
  let entry: Entry;
  try {
    entry = JSON.parse(fs.readFileSync(entryPath(dir, key), 'utf8')) as Entry;
  } catch {
    return undefined;
  }
  if (entry?.v !== VERSION || !Number.isInteger(entry.rows) || typeof entry.columns !== 'object')
    return undefined;
  const out: Record<string, (string | null)[]> = {};
  for (const c of columns) {
    const values = decode(entry.columns[c], entry.rows);
    if (!values) return undefined;
    out[c] = values;
  }
  return { rows: entry.rows, columns: out };
}

/** Stores the columns atomically; a failure to write (read-only home, full disk) only costs a re-read later. */
export function writeCached(dir: string, key: string, source: string, copy: CopyColumns): boolean {
  const file = entryPath(dir, key);
  const entry: Entry = {
    v: VERSION,
    source,
    rows: copy.rows,
    columns: Object.fromEntries(Object.entries(copy.columns).map(([c, values]) => [c, encode(values)])),
  };
  try {
    fs.mkdirSync(dir, { recursive: true });
    writeFileAtomic(file, JSON.stringify(entry));
    return true;
  } catch {
    return false;
  }
}
