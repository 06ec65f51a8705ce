import { createHash } from 'node:crypto';
import * as fs from 'node:fs';

/** SHA-256 of a file, read in 4 MiB chunks (hex for tags, base64 as S3 reports checksums). */
export async function sha256OfFile(file: string, encoding: 'hex' | 'base64'): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 4 * 1024 * 1024 }))
    hash.update(chunk as Buffer);
  return hash.digest(encoding);
}
