import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { IS3, S3ObjectInfo } from '../../lib/aws';
import { fetchObject, groupBlocks, PARTIAL_SUFFIX } from '../../lib/transfers/fetch-object';
import { tempDir } from '../helpers/fixtures';

/*
 * fetchObject's steps (plan the ranges, fetch them, check the size, verify the content, rename) on an
 * in-memory object with faults injected; results.integration.test.ts runs the same code against a real
 * S3 server, a connection reset included.
 */

const MiB = 1024 * 1024;
const STATE_SUFFIX = '.rlvr-partial.json';

interface Stub {
  readonly s3: IS3;
  /** Ranges asked for, as `start-end`. */
  readonly ranges: string[];
  heads: number;
}

/**
 * One object `k`. `failAt`: a range holding that offset breaks there (its bytes before it arrive, then
 * the connection resets); `shortAt`: a range starting there ends early;
 * `head`: what HEAD says (defaults to the object itself); `headError`: HEAD rejects.
 */
function objectS3(
  body: Buffer,
  faults: {
    failAt?: number;
    shortAt?: number;
    head?: Partial<S3ObjectInfo>;
    headError?: Error;
  } = {},
): Stub {
  const stub: Stub = { ranges: [], heads: 0, s3: undefined as unknown as IS3 };
  const s3 = {
    headObject: async () => {
      stub.heads++;
      if (faults.headError) throw faults.headError;
      return { key: 'k', size: body.length, etag: '"e1"', ...faults.head };
    },
    getObjectStream: async (
      _b: string,
      _k: string,
      o: { start?: number; end?: number; ifMatch?: string },
    ) => {
      const start = o.start ?? 0;
      const end = o.end ?? body.length - 1;
      stub.ranges.push(`${start}-${end}`);
      const failAt = faults.failAt;
      if (failAt === start) throw new Error('connection reset');
      const slice = body.subarray(start, end + 1);
      if (failAt !== undefined && failAt > start && failAt <= end) {
        return Readable.from(
          (async function* () {
            yield body.subarray(start, failAt);
            throw new Error('connection reset');
          })(),
        );
      }
      return Readable.from([faults.shortAt === start ? slice.subarray(0, slice.length - 1) : slice]);
    },
  } as unknown as IS3;
  return Object.assign(stub, { s3 });
}

const listed = (body: Buffer, etag = '"e1"'): S3ObjectInfo => ({ key: 'k', size: body.length, etag });
const sha256b64 = (b: Buffer) => createHash('sha256').update(b).digest('base64');

describe('fetchObject, step by step', () => {
  it('an interrupted download leaves only the partial file and its state; the next run resumes the missing ranges', async () => {
    const body = randomBytes(5 * MiB + 3);
    const dest = path.join(tempDir(), 'sub', 'w.bin');
    // One GET for all six blocks, broken half a block into the third: the two whole blocks are on record.
    const failing = objectS3(body, { failAt: 2 * MiB + MiB / 2 });
    await expect(
      fetchObject(failing.s3, 'b', listed(body), dest, { partSize: MiB, concurrency: 1 }),
    ).rejects.toThrow('connection reset');
    expect(failing.ranges).toEqual([`0-${body.length - 1}`]);
    expect(fs.existsSync(dest)).toBe(false);
    expect(fs.statSync(dest + PARTIAL_SUFFIX).size).toBe(body.length);
    const state = JSON.parse(fs.readFileSync(dest + STATE_SUFFIX, 'utf8'));
    expect(state).toMatchObject({ etag: '"e1"', size: body.length, partSize: MiB });
    expect([...state.done].sort()).toEqual([0, 1]);

    const working = objectS3(body);
    const events: number[] = [];
    const result = await fetchObject(working.s3, 'b', listed(body), dest, {
      partSize: MiB,
      concurrency: 2,
      onBytes: (n) => events.push(n),
    });
    expect(result).toEqual({
      bytesDownloaded: body.length - 2 * MiB,
      resumed: true,
      checksumVerified: false,
    });
    // The four blocks left, two to a GET for the two connections.
    expect(working.ranges.sort()).toEqual([`${2 * MiB}-${4 * MiB - 1}`, `${4 * MiB}-${body.length - 1}`]);
    expect(events[events.length - 1]).toBe(body.length - 2 * MiB);
    expect(fs.readFileSync(dest).equals(body)).toBe(true);
    expect(fs.readdirSync(path.dirname(dest))).toEqual(['w.bin']);
  });

  it('a partial file of another version (ETag) or another part size starts over', async () => {
    const body = randomBytes(3 * MiB);
    const dest = path.join(tempDir(), 'w.bin');
    await expect(
      fetchObject(objectS3(body, { failAt: MiB }).s3, 'b', listed(body), dest, {
        partSize: MiB,
        concurrency: 1,
      }),
    ).rejects.toThrow();
    const changed = objectS3(body, { head: { etag: '"e2"' } });
    const again = await fetchObject(changed.s3, 'b', listed(body, '"e2"'), dest, { partSize: MiB });
    expect(again).toMatchObject({ resumed: false, bytesDownloaded: body.length });
    expect(changed.ranges).toHaveLength(3);

    await expect(
      fetchObject(objectS3(body, { failAt: MiB }).s3, 'b', listed(body), dest, {
        partSize: MiB,
        concurrency: 1,
      }),
    ).rejects.toThrow();
    const otherParts = objectS3(body);
    const third = await fetchObject(otherParts.s3, 'b', listed(body), dest, { partSize: 2 * MiB });
    expect(third).toMatchObject({ resumed: false, bytesDownloaded: body.length });
    expect(fs.readFileSync(dest).equals(body)).toBe(true);
  });

  it('groups the blocks left into GETs of consecutive blocks: every connection busy, none over the limit', () => {
    expect(groupBlocks([0, 1, 2, 3, 4, 5, 6, 7], 2, MiB, 64 * MiB)).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
    ]);
    expect(groupBlocks([0, 1, 2, 3, 4, 5, 6, 7], 2, MiB, 3 * MiB)).toEqual([
      [0, 1, 2],
      [3, 4, 5],
      [6, 7],
    ]);
    // A gap (a block done earlier) ends a GET; one block to a GET when there are more connections.
    expect(groupBlocks([0, 1, 3, 4, 5], 2, MiB, 64 * MiB)).toEqual([
      [0, 1],
      [3, 4, 5],
    ]);
    expect(groupBlocks([0, 1, 2], 8, MiB, 64 * MiB)).toEqual([[0], [1], [2]]);
    // A limit below one block still makes GETs of one block.
    expect(groupBlocks([0, 1], 1, 16 * MiB, MiB)).toEqual([[0], [1]]);
    // 1 GiB in 16 MiB blocks over 8 connections: 16 GETs of 64 MiB.
    const gib = groupBlocks(
      Array.from({ length: 64 }, (_, i) => i),
      8,
      16 * MiB,
      64 * MiB,
    );
    expect(gib).toHaveLength(16);
    expect(gib.every((g) => g.length === 4)).toBe(true);
  });

  it('a GET broken mid-body through the SDK keeps its whole blocks on record and rereads from the first unfinished one', async () => {
    const body = randomBytes(4 * MiB);
    const dest = path.join(tempDir(), 'w.bin');
    const failing = objectS3(body, { failAt: 3 * MiB + 5 });
    await expect(
      fetchObject(failing.s3, 'b', listed(body), dest, { partSize: MiB, concurrency: 1 }),
    ).rejects.toThrow('connection reset');
    const state = JSON.parse(fs.readFileSync(dest + STATE_SUFFIX, 'utf8'));
    expect([...state.done].sort()).toEqual([0, 1, 2]);
    const working = objectS3(body);
    const again = await fetchObject(working.s3, 'b', listed(body), dest, { partSize: MiB });
    expect(working.ranges).toEqual([`${3 * MiB}-${4 * MiB - 1}`]);
    expect(again).toMatchObject({ resumed: true, bytesDownloaded: MiB });
    expect(fs.readFileSync(dest).equals(body)).toBe(true);
  });

  it('verifies S3’s full-object SHA-256; a mismatch discards the partial file and its state', async () => {
    const body = randomBytes(MiB + 11);
    const dir = tempDir();
    const good = await fetchObject(
      objectS3(body, { head: { checksumSha256: sha256b64(body) } }).s3,
      'b',
      listed(body),
      path.join(dir, 'good.bin'),
    );
    expect(good.checksumVerified).toBe(true);

    const dest = path.join(dir, 'bad.bin');
    const wrong = objectS3(body, { head: { checksumSha256: sha256b64(Buffer.from('other')) } });
    await expect(fetchObject(wrong.s3, 'b', listed(body), dest)).rejects.toMatchObject({
      code: 'ChecksumMismatch',
    });
    expect(fs.readdirSync(dir)).toEqual(['good.bin']);
  });

  it('an object changed since it was listed, or a short range, fails without a file at dest', async () => {
    const body = randomBytes(2 * MiB);
    const dir = tempDir();
    await expect(
      fetchObject(objectS3(body, { head: { etag: '"e2"' } }).s3, 'b', listed(body), path.join(dir, 'a.bin')),
    ).rejects.toMatchObject({ code: 'ObjectChanged' });
    await expect(
      fetchObject(objectS3(body, { shortAt: MiB }).s3, 'b', listed(body), path.join(dir, 'b.bin'), {
        partSize: MiB,
      }),
    ).rejects.toMatchObject({ code: 'ShortRead' });
    expect(fs.readdirSync(dir).filter((f) => !f.includes('.rlvr-partial'))).toEqual([]);
  });

  it('without a listed ETag the HEAD comes first, and its failure stops the download before any file', async () => {
    const body = randomBytes(1000);
    const dir = tempDir();
    const headed = objectS3(body);
    const result = await fetchObject(headed.s3, 'b', { key: 'k', size: 0 }, path.join(dir, 'a.bin'));
    expect(result.bytesDownloaded).toBe(1000);
    expect(headed.heads).toBe(1);
    expect(headed.ranges).toEqual(['0-999']);

    const failing = objectS3(body, { headError: new Error('forbidden') });
    await expect(
      fetchObject(failing.s3, 'b', { key: 'k', size: 1000 }, path.join(dir, 'sub', 'b.bin')),
    ).rejects.toThrow('forbidden');
    expect(failing.ranges).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'sub'))).toBe(false);
  });

  it('a listed object whose HEAD fails after the ranges still fails (nothing renamed)', async () => {
    const body = randomBytes(1000);
    const dest = path.join(tempDir(), 'a.bin');
    const failing = objectS3(body, { headError: new Error('forbidden') });
    await expect(fetchObject(failing.s3, 'b', listed(body), dest)).rejects.toThrow('forbidden');
    expect(failing.ranges).toEqual(['0-999']);
    expect(fs.existsSync(dest)).toBe(false);
  });

  it('an empty object asks for no range; with fsync a large one still ends whole', async () => {
    const dir = tempDir();
    const empty = objectS3(Buffer.alloc(0));
    const none = await fetchObject(empty.s3, 'b', listed(Buffer.alloc(0)), path.join(dir, 'empty'));
    expect(none.bytesDownloaded).toBe(0);
    expect(empty.ranges).toEqual([]);
    expect(fs.statSync(path.join(dir, 'empty')).size).toBe(0);

    const body = randomBytes(3 * MiB + 1);
    await fetchObject(objectS3(body).s3, 'b', listed(body), path.join(dir, 'synced'), {
      partSize: MiB,
      fsync: true,
    });
    expect(fs.readFileSync(path.join(dir, 'synced')).equals(body)).toBe(true);
    expect(fs.readdirSync(dir).sort()).toEqual(['empty', 'synced']);
  });
});
