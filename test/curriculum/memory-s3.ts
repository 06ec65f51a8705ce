import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { type IS3, type S3ObjectInfo } from '../../lib/aws';
import { AwsError } from '../../lib/aws/errors';

/** The few S3 calls the curriculum check makes, over objects in memory, counting GETs. */
export class MemoryS3 {
  readonly objects = new Map<string, Uint8Array>();
  gets: string[] = [];
  lists = 0;

  put(key: string, body: Uint8Array | string): void {
    this.objects.set(key, typeof body === 'string' ? Buffer.from(body) : body);
  }

  putFolder(prefix: string, files: Record<string, Uint8Array>): void {
    for (const [name, body] of Object.entries(files)) this.put(`${prefix}${name}`, body);
  }

  private etag(key: string): string {
    return `"${createHash('md5').update(this.objects.get(key)!).digest('hex')}"`;
  }

  get s3(): IS3 {
    return this.client();
  }

  private client(): IS3 {
    const objects = this.objects;
    const etag = (key: string) => this.etag(key);
    const count = { get: (key: string) => this.gets.push(key), list: () => this.lists++ };
    const unused = () => {
      throw new Error('not used by the curriculum check');
    };
    return {
      async listObjects(_bucket: string, prefix: string): Promise<S3ObjectInfo[]> {
        count.list();
        return [...objects.keys()]
          .filter((k) => k.startsWith(prefix))
          .sort()
          .map((key) => ({ key, size: objects.get(key)!.length, etag: etag(key) }));
      },
      async getObjectText(_bucket: string, key: string): Promise<string> {
        count.get(key);
        const body = objects.get(key);
        if (!body)
          throw new AwsError('NotFound', `no ${key}`, 'NoSuchKey', 'S3 GetObject', { cause: undefined });
        return Buffer.from(body).toString('utf8');
      },
      async getObjectStream(_bucket: string, key: string, options: { ifMatch?: string }) {
        count.get(key);
        const body = objects.get(key);
        if (!body)
          throw new AwsError('NotFound', `no ${key}`, 'NoSuchKey', 'S3 GetObject', { cause: undefined });
        if (options.ifMatch && options.ifMatch !== etag(key)) {
          throw new AwsError('PreconditionFailed', `${key} changed`, 'PreconditionFailed', 'S3 GetObject', {
            cause: undefined,
          });
        }
        // Small chunks, as a socket delivers them.
        const chunks: Buffer[] = [];
        for (let i = 0; i < body.length; i += 4096) chunks.push(Buffer.from(body.subarray(i, i + 4096)));
        return Readable.from(chunks);
      },
      headObject: unused,
      async getObjectRange(_bucket: string, key: string, start: number, end?: number): Promise<Buffer> {
        count.get(key);
        const body = objects.get(key);
        if (!body)
          throw new AwsError('NotFound', `no ${key}`, 'NoSuchKey', 'S3 GetObject', { cause: undefined });
        return Buffer.from(body.subarray(start, end === undefined ? undefined : end + 1));
      },
      getObjectTags: unused,
      putObjectTags: unused,
      putObjectTagged: unused,
      putObjectIfAbsent: unused,
      putObject: unused,
      uploadObject: unused,
      deleteObjects: unused,
      createMultipartUpload: unused,
      uploadPart: unused,
      completeMultipartUpload: unused,
      abortMultipartUpload: unused,
    };
  }
}
