import * as fs from 'node:fs';
import * as path from 'node:path';
import { isAwsError, type IS3, type S3ObjectInfo } from '../aws';
import { RlvrError, RuntimeFailure } from '../errors';
import { isObject, mapLimited, NOFOLLOW, readRegularText, writeFileAtomic } from '../util';
import { sha256OfFile } from './hash';
import { RangeSockets, RangeSocketFailure } from './range-socket';

/*
 * One object to one local file: byte ranges in parallel, written in place into `<file>.rlvr-partial`,
 * with the finished blocks (16 MiB) recorded beside it so an interrupted download resumes where it
 * stopped (every range asks If-Match the ETag it started with, so a changed object restarts instead of
 * mixing versions). A GET asks for several consecutive blocks (up to 64 MiB) and each block goes on
 * record as its last byte is written. Renamed into place only after the size — and S3's full-object
 * SHA-256, when the object has one — is verified. Nothing in the SDK (lib-storage included) does
 * ranged, resumable downloads, hence this file.
 */

export const PARTIAL_SUFFIX = '.rlvr-partial';
const STATE_SUFFIX = '.rlvr-partial.json';

export interface FetchOptions {
  /** The unit the resume record counts in: a block of the object, finished or not. */
  readonly partSize?: number;
  /** GETs in flight for this object. */
  readonly concurrency?: number;
  /** The most one GET asks for: consecutive blocks up to this many bytes. */
  readonly maxGetBytes?: number;
  /** Called with bytes written so far (this run). */
  readonly onBytes?: (bytes: number) => void;
  /**
   * Flush the file to disk before it gets its name (against a power loss, not only an interruption).
   * Off by default, as in `aws s3 cp`: measured 5–18% slower on large downloads (bench/results.md).
   */
  readonly fsync?: boolean;
}

interface PartialState {
  readonly etag: string;
  readonly size: number;
  readonly partSize: number;
  readonly done: number[];
}

/**
 * The finished ranges an earlier attempt recorded, or undefined. The file sits in a folder others may
 * write: read only as a regular file of bounded size, and every number in it checked against the object.
 */
function readState(file: string, size: number, partSize: number): PartialState | undefined {
  const text = readRegularText(file, 4 * 1024 * 1024);
  let v: unknown;
  try {
    v = text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(v) || typeof v.etag !== 'string' || v.size !== size || v.partSize !== partSize)
    return undefined;
  if (!Array.isArray(v.done)) return undefined;
  const parts = Math.ceil(size / partSize);
  const done = v.done.filter((i): i is number => Number.isInteger(i) && i >= 0 && i < parts);
  return { etag: v.etag, size, partSize, done };
}

const NONBLOCK = fs.constants.O_NONBLOCK ?? 0;

/**
 * The partial file, opened for writing without following a link or blocking on a FIFO: the earlier
 * attempt's (a regular file of the object's size) when resuming, else a new one created exclusively
 * after whatever stood at its name (a planted link, a stale file) is removed.
 */
async function openPartial(plan: RangePlan): Promise<fs.promises.FileHandle> {
  if (plan.resumable) {
    const fd = await fs.promises.open(plan.partial, fs.constants.O_RDWR | NOFOLLOW | NONBLOCK);
    const st = await fd.stat();
    if (st.isFile() && st.size === plan.size) return fd;
    await fd.close();
    throw new RuntimeFailure(`${plan.partial} changed while the download resumed; run it again`);
  }
  fs.rmSync(plan.partial, { force: true });
  return fs.promises.open(
    plan.partial,
    fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | NOFOLLOW,
    0o644,
  );
}

/**
 * Writes a ranged body at its offset, each socket chunk with one synchronous positioned write as it
 * arrives. Measured here on a 1 GiB download (bench/results.md has the figures), against:
 * - holding chunks for one writev per ~4 MiB: the held 64 KiB buffers lived into old space, and
 *   freeing them took a mark-compact per ~32 MiB (0.45 s of GC per GiB);
 * - copying chunks into a 4 MiB buffer written through the thread pool: 0.3–0.6 s more system time
 *   per GiB (thread hand-offs, the page-cache copy on the other core) than writing in place;
 * - a 'data' listener instead of the iterator: the stream then flows and reads whatever has arrived,
 *   many more and smaller reads (the HTTP parser's share went from 0.35 to 4.6 s per GiB).
 * This is the SDK path, taken by a range the direct sockets (range-socket.ts) could not read.
 * A write of one chunk into the page cache takes microseconds; when the disk cannot keep up, a
 * blocked write holds back the sockets, which is the backpressure a download needs anyway.
 */
async function writeAt(
  fd: number,
  stream: NodeJS.ReadableStream,
  offset: number,
  onBytes: (n: number) => void,
): Promise<number> {
  let position = offset;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    for (let written = 0; written < chunk.length;)
      written += fs.writeSync(fd, chunk, written, chunk.length - written, position + written);
    position += chunk.length;
    onBytes(chunk.length);
  }
  return position - offset;
}

/** One object's direct reader: its sockets, until a connection fails before any answer. */
interface Direct {
  sockets?: RangeSockets;
  /** The object's presigned GET, shared by its ranges (Range and If-Match go unsigned beside it). */
  signed?: Promise<{ readonly url: string } | undefined>;
  signedAt?: number;
}

/*
 * Ranges share one presigned URL: signing one costs about 5 ms of CPU here (the SDK's endpoint rules
 * and SigV4), a quarter of a second over a GiB in 16 MiB ranges. It is signed for 15 minutes and
 * replaced after 10, so no range starts on a URL about to expire.
 */
const RESIGN_AFTER_MS = 10 * 60 * 1000;

function signedUrl(s3: IS3, bucket: string, key: string, direct: Direct) {
  const now = Date.now();
  if (!direct.signed || now - direct.signedAt! > RESIGN_AFTER_MS) {
    direct.signedAt = now;
    direct.signed = s3.signedGet!(bucket, key).catch(() => undefined);
  }
  return direct.signed;
}

/**
 * The range read on a direct socket (range-socket.ts: a quarter of the SDK's CPU); false when it was
 * not, and the caller reads it through the SDK: no presigner (a fake client) or no presigned URL, the
 * server unreachable that way (then no later range of the object tries), or a failed answer (an error
 * status, a reset), whose meaning or retry the SDK gives. A failure of the file itself (a full disk)
 * is thrown as it is.
 */
async function readDirect(
  s3: IS3,
  bucket: string,
  plan: RangePlan,
  direct: Direct,
  range: { readonly start: number; readonly end: number },
  fd: number,
  onBytes: (n: number) => void,
): Promise<boolean> {
  const sockets = direct.sockets;
  if (!sockets || !s3.signedGet) return false;
  const signed = await signedUrl(s3, bucket, plan.key, direct);
  if (!signed) return false;
  try {
    const headers: Record<string, string> = plan.etag ? { 'If-Match': plan.etag } : {};
    await sockets.read({ url: new URL(signed.url), headers }, range, fd, onBytes);
    return true;
  } catch (err) {
    if (!(err instanceof RangeSocketFailure)) throw err;
    // A refusal may be the URL's (credentials that expired before it): the next range signs anew.
    direct.signed = undefined;
    if (err.unreachable && direct.sockets === sockets) {
      direct.sockets = undefined;
      sockets.close();
    }
    return false;
  }
}

const SYNC_EVERY_BYTES = 128 * 1024 * 1024;
const STATE_EVERY_MS = 500;
const DEFAULT_PART_SIZE = 16 * 1024 * 1024;
/*
 * Each GET costs the server a request and the connection a round trip before its first byte. Measured
 * on a 1 GiB object from the local S3 server, 8 connections: 64 GETs of 16 MiB took 2.2–2.55 s against
 * curl's 1.7–1.9 s for 8 ranges; 16 GETs of 64 MiB 2.0–2.2 s, and 5% less CPU.
 */
const DEFAULT_MAX_GET_BYTES = 64 * 1024 * 1024;

/**
 * The blocks to fetch as GETs of consecutive blocks: as many blocks to a GET as keep every one of the
 * `concurrency` connections busy, and no more than `maxGetBytes` (at least one block).
 */
export function groupBlocks(
  blocks: readonly number[],
  concurrency: number,
  partSize: number,
  maxGetBytes: number,
): number[][] {
  const perGet = Math.max(
    1,
    Math.min(Math.ceil(blocks.length / Math.max(1, concurrency)), Math.floor(maxGetBytes / partSize)),
  );
  const gets: number[][] = [];
  for (const block of blocks) {
    const last = gets[gets.length - 1];
    if (last && last.length < perGet && last[last.length - 1] === block - 1) last.push(block);
    else gets.push([block]);
  }
  return gets;
}

export interface FetchResult {
  readonly bytesDownloaded: number;
  readonly resumed: boolean;
  readonly checksumVerified: boolean;
}

/** The ranges of one download: where they go, what they must match, and which are already done. */
interface RangePlan {
  readonly key: string;
  readonly etag: string;
  readonly size: number;
  readonly partSize: number;
  /** `<dest>.rlvr-partial`: written in place, renamed to `dest` once verified. */
  readonly partial: string;
  /** `<dest>.rlvr-partial.json`: the finished ranges, for the next attempt. */
  readonly stateFile: string;
  /** Whether the partial file and its state are carried on from an earlier attempt. */
  readonly resumable: boolean;
  /** Indices of the finished ranges (grows as ranges finish). */
  readonly done: Set<number>;
}

/** The ranges to fetch: those an earlier attempt at the same object (ETag, size, part size) finished are kept. */
function planRanges(
  key: string,
  head: { readonly etag?: string; readonly size: number },
  dest: string,
  partSize: number,
): RangePlan {
  const etag = head.etag ?? '';
  const size = head.size;
  const partial = dest + PARTIAL_SUFFIX;
  const stateFile = dest + STATE_SUFFIX;
  const previous = readState(stateFile, size, partSize);
  const existing = fs.lstatSync(partial, { throwIfNoEntry: false });
  const resumable =
    previous !== undefined && previous.etag === etag && existing?.isFile() === true && existing.size === size;
  const done = new Set<number>(resumable ? previous!.done : []);
  return { key, etag, size, partSize, partial, stateFile, resumable, done };
}

/**
 * Fetches the ranges not yet done into the partial file, recording each finished one; with fsync the
 * file is on disk when this returns. Resolves to the bytes written by this attempt.
 */
async function fetchRanges(s3: IS3, bucket: string, plan: RangePlan, options: FetchOptions): Promise<number> {
  const { key, etag, size, partSize, done } = plan;
  const fd = await openPartial(plan);
  const direct: Direct = { sockets: s3.signedGet ? new RangeSockets() : undefined };
  let downloaded = 0;
  let saving = Promise.resolve();
  // With fsync, written data goes to disk while the download runs (one datasync per 128 MiB, in the
  // background), so the fsync that makes the file durable before it is renamed has little left to do.
  let unsynced = 0;
  let flushing: Promise<void> = Promise.resolve();
  // The finished ranges go on record at most twice a second while the ranges run (a write and a rename
  // each: 64 of them a GiB cost 0.1 s of CPU here), and at once when the download stops; a killed
  // process loses at most the last half second's record, and fetches those ranges again.
  let lastSaved = 0;
  const saveState = (now = false) => {
    if (!now && Date.now() - lastSaved < STATE_EVERY_MS) return saving;
    lastSaved = Date.now();
    const state: PartialState = { etag, size, partSize, done: [...done] };
    saving = saving.then(() => writeFileAtomic(plan.stateFile, JSON.stringify(state)));
    return saving;
  };
  const onBytes = (b: number) => {
    downloaded += b;
    unsynced += b;
    options.onBytes?.(downloaded);
    if (options.fsync && unsynced >= SYNC_EVERY_BYTES) {
      unsynced = 0;
      flushing = flushing.then(() => fd.datasync()).catch(() => undefined);
    }
  };
  const blockEnd = (i: number) => Math.min(size, (i + 1) * partSize);
  /**
   * One GET of consecutive blocks: on a direct socket, else (or for what a failed direct read left)
   * through the SDK. Each block goes on record as its last byte is written.
   */
  const fetchGet = async (blocks: readonly number[]) => {
    const end = blockEnd(blocks[blocks.length - 1]) - 1;
    let next = 0;
    let position = blocks[0] * partSize;
    const onGetBytes = (n: number) => {
      position += n;
      onBytes(n);
      while (next < blocks.length && position >= blockEnd(blocks[next])) {
        done.add(blocks[next++]);
        void saveState();
      }
    };
    if (await readDirect(s3, bucket, plan, direct, { start: position, end }, fd.fd, onGetBytes)) return;
    // The whole blocks a failed direct read wrote stay; the rest of the GET is read again.
    const start = next < blocks.length ? blocks[next] * partSize : end + 1;
    if (position > start) onBytes(start - position);
    position = start;
    if (start > end) return;
    const body = await s3.getObjectStream(bucket, key, { start, end, ifMatch: etag || undefined });
    const n = await writeAt(fd.fd, body, start, onGetBytes);
    if (n !== end - start + 1)
      throw new RuntimeFailure(`short read of ${key} at ${start}: ${n} bytes`, 'ShortRead');
  };
  let finished = false;
  try {
    if (!plan.resumable) await fd.truncate(size);
    await saveState(true);
    const parts = Math.max(1, Math.ceil(size / partSize));
    const queue = Array.from({ length: parts }, (_, i) => i).filter((i) => !done.has(i));
    const concurrency = options.concurrency ?? 8;
    const gets = groupBlocks(queue, concurrency, partSize, options.maxGetBytes ?? DEFAULT_MAX_GET_BYTES);
    // On the first failure the other GETs in flight finish and no new one starts; nothing runs after
    // this returns. An empty object has no range to fetch.
    await mapLimited(size > 0 ? gets : [], concurrency, fetchGet);
    if (options.fsync) {
      await flushing;
      await fd.sync();
    }
    finished = true;
  } finally {
    // Whatever happened, the finished ranges are on record for the next attempt.
    if (!finished) void saveState(true);
    await saving.catch(() => undefined);
    await flushing;
    direct.sockets?.close();
    await fd.close();
  }
  return downloaded;
}

/** The partial file has the object's size. */
function checkSize(plan: RangePlan): void {
  const actual = fs.statSync(plan.partial).size;
  if (actual !== plan.size)
    throw new RuntimeFailure(`${plan.key}: got ${actual} bytes, expected ${plan.size}`, 'SizeMismatch');
}

/**
 * The object is unchanged since the ranges began, and the partial file matches S3's full-object
 * SHA-256 when the HEAD gives one (a mismatch discards the partial file and its state). Resolves to
 * whether the checksum was verified.
 */
async function verifyContent(
  plan: RangePlan,
  full: { readonly etag?: string; readonly checksumSha256?: string } | undefined,
): Promise<boolean> {
  const { key, etag, partial } = plan;
  if (full?.etag && etag && full.etag !== etag) {
    throw new RuntimeFailure(`${key} changed while it was downloaded; run again`, 'ObjectChanged');
  }
  const checksum = full?.checksumSha256;
  if (!checksum) return false;
  const local = await sha256OfFile(partial, 'base64');
  if (local !== checksum) {
    fs.rmSync(partial, { force: true });
    fs.rmSync(plan.stateFile, { force: true });
    throw new RuntimeFailure(
      `${key}: SHA-256 mismatch after download; run again to fetch it anew`,
      'ChecksumMismatch',
    );
  }
  return true;
}

const MIB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

/** Free bytes for an unprivileged writer on the file system of `dir`, when it can be read. */
export function freeBytes(dir: string): number | undefined {
  try {
    const st = fs.statfsSync(dir);
    return st.bavail * st.bsize;
  } catch {
    return undefined;
  }
}

/** Whether `err` is a full disk (or a used-up quota). */
export function isNoSpace(err: unknown): err is NodeJS.ErrnoException {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * A failed download said as the user needs it. The object changed since it was listed (412 on the
 * If-Match of its ETag): the partial file of the old version is removed (it can never be finished)
 * and a rerun fetches the new version. A full disk: the partial file and its finished ranges are kept,
 * so the rerun after freeing space resumes. Anything else passes through.
 */
function explainFetchFailure(err: unknown, bucket: string, plan: RangePlan, dest: string): unknown {
  if (err instanceof RlvrError) return err;
  if (isAwsError(err, 'PreconditionFailed')) {
    fs.rmSync(plan.partial, { force: true });
    fs.rmSync(plan.stateFile, { force: true });
    return new RuntimeFailure(
      `s3://${bucket}/${plan.key} changed in S3 since it was listed: the download asked for the version ` +
        `with ETag ${plan.etag} (If-Match) and S3 answered 412 Precondition Failed. Run again to fetch the ` +
        `new version (the partial copy of the old one, ${plan.partial}, was removed).`,
      'ObjectChanged',
      { cause: err },
    );
  }
  if (isNoSpace(err)) {
    const written = [...plan.done].reduce(
      (n, i) => n + Math.min(plan.partSize, plan.size - i * plan.partSize),
      0,
    );
    const free = freeBytes(path.dirname(dest));
    return new RuntimeFailure(
      `No space left on the device writing ${dest}: the file needs ${mib(plan.size)} (${plan.size} bytes), ` +
        `${mib(plan.size - written)} of it not yet written` +
        `${free === undefined ? '' : `; ${mib(free)} free in ${path.dirname(dest)}`}. Free space (or choose ` +
        `another --results-dir) and run again: the download resumes from ${plan.partial}, keeping the ` +
        `${mib(written)} already written.`,
      'NoSpace',
      { cause: err },
    );
  }
  return err;
}

/** Downloads `object` to `dest` (never leaving a partial file at `dest`). */
export async function fetchObject(
  s3: IS3,
  bucket: string,
  object: S3ObjectInfo,
  dest: string,
  options: FetchOptions = {},
): Promise<FetchResult> {
  // When a listing gave the size and ETag, the ranges start at once (each If-Match on that ETag), and the
  // HEAD, which adds S3's full-object checksum, runs beside them.
  const headed = s3.headObject(bucket, object.key).catch((err: unknown) => err as Error);
  const listed = object.etag !== undefined;
  const first = listed ? object : await headed;
  if (first instanceof Error) throw first;
  const head = first ?? object;
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  const plan = planRanges(object.key, head, dest, options.partSize ?? DEFAULT_PART_SIZE);
  let downloaded: number;
  try {
    downloaded = await fetchRanges(s3, bucket, plan, options);
  } catch (err) {
    throw explainFetchFailure(err, bucket, plan, dest);
  }
  checkSize(plan);
  const full = listed ? await headed : head;
  if (full instanceof Error) throw full;
  const checksumVerified = await verifyContent(plan, full);
  fs.renameSync(plan.partial, dest);
  fs.rmSync(plan.stateFile, { force: true });
  return { bytesDownloaded: downloaded, resumed: plan.resumable, checksumVerified };
}
