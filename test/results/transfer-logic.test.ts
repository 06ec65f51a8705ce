import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { IS3 } from '../../lib/aws';
import { fetchObject } from '../../lib/results';
import { matchesTag, partsTag } from '../../lib/results/hash';
import { tempDir } from '../helpers/fixtures';

/*
 * Pure logic of the transfer code: how bytes are laid down and how content tags are compared. The
 * same code is tested against a real S3 server in results.integration.test.ts.
 */

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** An object in memory whose ranged bodies arrive in chunks of `chunk` bytes (not aligned to anything). */
function memoryS3(body: Buffer, chunk: number): IS3 {
  const etag = '"e"';
  return {
    headObject: async () => ({ key: 'k', size: body.length, etag }),
    getObjectStream: async (_b: string, _k: string, o: { start?: number; end?: number }) => {
      const range = body.subarray(o.start ?? 0, (o.end ?? body.length - 1) + 1);
      const pieces: Buffer[] = [];
      for (let at = 0; at < range.length; at += chunk) pieces.push(range.subarray(at, at + chunk));
      return Readable.from(pieces);
    },
  } as unknown as IS3;
}

describe('fetchObject lays every range down intact', () => {
  it.each([1_000_003, 65_536, 4 * 1024 * 1024 + 1])(
    'with body chunks of %i bytes crossing the 4 MiB write buffers and the 16 MiB ranges',
    async (chunk) => {
      const body = randomBytes(37 * 1024 * 1024 + 5);
      const dest = path.join(tempDir(), 'out.bin');
      const result = await fetchObject(memoryS3(body, chunk), 'b', { key: 'k', size: body.length }, dest, {
        concurrency: 3,
      });
      expect(result.bytesDownloaded).toBe(body.length);
      expect(sha256(fs.readFileSync(dest))).toBe(sha256(body));
      expect(fs.readdirSync(path.dirname(dest))).toEqual(['out.bin']);
    },
  );
});

describe('content tags', () => {
  const MiB = 1024 * 1024;
  const body = randomBytes(5 * MiB + 7);
  const file = path.join(tempDir(), 'weights.bin');
  fs.writeFileSync(file, body);
  const digestsOf = (partSize: number) => {
    const out: Buffer[] = [];
    for (let at = 0; at < body.length; at += partSize)
      out.push(
        createHash('sha256')
          .update(body.subarray(at, at + partSize))
          .digest(),
      );
    return out;
  };

  it('a parts tag is the SHA-256 of the parts’ digests and the part size', () => {
    const digests = digestsOf(2 * MiB);
    expect(partsTag(digests, 2 * MiB)).toBe(`${sha256(Buffer.concat(digests))}/${2 * MiB}`);
  });

  it('a file matches its parts tag at any part size, and its whole-file SHA-256', async () => {
    for (const partSize of [MiB, 2 * MiB, 5 * MiB + 7, 8 * MiB])
      expect(await matchesTag(file, partsTag(digestsOf(partSize), partSize))).toBe(true);
    expect(await matchesTag(file, sha256(body))).toBe(true);
  });

  it('a changed file, a tag for other parts and malformed tags do not match', async () => {
    const tag = partsTag(digestsOf(2 * MiB), 2 * MiB);
    expect(await matchesTag(file, tag.replace(/\/.*/, `/${MiB}`))).toBe(false);
    expect(await matchesTag(file, `${tag}0`)).toBe(false);
    expect(await matchesTag(file, 'not-a-hash')).toBe(false);
    expect(await matchesTag(file, sha256(body).toUpperCase())).toBe(false);
    const changed = path.join(tempDir(), 'changed.bin');
    const other = Buffer.from(body);
    other[3 * MiB] ^= 1;
    fs.writeFileSync(changed, other);
    expect(await matchesTag(changed, tag)).toBe(false);
    expect(await matchesTag(changed, sha256(body))).toBe(false);
  });

  it('an empty file has one empty part', async () => {
    const empty = path.join(tempDir(), 'empty.bin');
    fs.writeFileSync(empty, '');
    const tag = partsTag([createHash('sha256').digest()], 8 * MiB);
    expect(await matchesTag(empty, tag)).toBe(true);
  });
});
