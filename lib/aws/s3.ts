import type { S3Client } from '@aws-sdk/client-s3';
import { isAwsError, mapAwsErrors } from './errors';
import { loadSdk, loadStorage, type Sdk } from './load-sdk';
import type { CompletedPart, IS3, S3ObjectInfo, UploadPartInput } from './types';

/** IS3 on the SDK's S3 client: one request per call (or the pages of one listing). */
export class SdkS3 implements IS3 {
  constructor(private readonly client: () => Promise<S3Client>) {}

  /** Runs `run` with the SDK module and the client; a failure of a kind in errors.ts as AwsError. */
  private async call<T>(operation: string, run: (sdk: Sdk, client: S3Client) => Promise<T>): Promise<T> {
    const sdk = loadSdk();
    const client = await this.client();
    return mapAwsErrors({ operation: `S3 ${operation}` }, () => run(sdk, client));
  }

  async headObject(bucket: string, key: string): Promise<S3ObjectInfo | undefined> {
    try {
      return await this.call('HeadObject', async (sdk, client) => {
        const out = await client.send(
          new sdk.HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }),
        );
        return {
          key,
          size: out.ContentLength ?? 0,
          etag: out.ETag,
          checksumSha256:
            out.ChecksumSHA256 && out.ChecksumType !== 'COMPOSITE' && !out.ChecksumSHA256.includes('-')
              ? out.ChecksumSHA256
              : undefined,
        };
      });
    } catch (err) {
      if (isAwsError(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  async listObjects(bucket: string, prefix: string, limit?: number): Promise<S3ObjectInfo[]> {
    return this.call('ListObjectsV2', async (sdk, client) => {
      const out: S3ObjectInfo[] = [];
      const pages = sdk.paginateListObjectsV2(
        { client, pageSize: limit ? Math.min(1000, limit) : undefined },
        { Bucket: bucket, Prefix: prefix },
      );
      for await (const page of pages) {
        for (const o of page.Contents ?? []) out.push({ key: o.Key!, size: o.Size ?? 0, etag: o.ETag });
        if (limit && out.length >= limit) return out.slice(0, limit);
      }
      return out;
    });
  }

  async getObjectText(bucket: string, key: string): Promise<string> {
    return this.call('GetObject', async (sdk, client) => {
      const out = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }));
      return out.Body!.transformToString('utf8');
    });
  }

  async getObjectRange(
    bucket: string,
    key: string,
    start: number,
    end?: number,
    ifMatch?: string,
  ): Promise<Buffer> {
    const range = start < 0 ? `bytes=${start}` : `bytes=${start}-${end ?? ''}`;
    return this.call('GetObject', async (sdk, client) => {
      const out = await client.send(
        new sdk.GetObjectCommand({ Bucket: bucket, Key: key, Range: range, IfMatch: ifMatch }),
      );
      return Buffer.from(await out.Body!.transformToByteArray());
    });
  }

  async getObjectStream(
    bucket: string,
    key: string,
    options: { start?: number; end?: number; ifMatch?: string },
  ): Promise<NodeJS.ReadableStream> {
    const range = options.start !== undefined ? `bytes=${options.start}-${options.end ?? ''}` : undefined;
    return this.call('GetObject', async (sdk, client) => {
      const out = await client.send(
        new sdk.GetObjectCommand({ Bucket: bucket, Key: key, Range: range, IfMatch: options.ifMatch }),
      );
      return out.Body as NodeJS.ReadableStream;
    });
  }

  async signedGet(bucket: string, key: string): Promise<{ readonly url: string }> {
    return this.call('GetObject', async (sdk, client) => ({
      url: await sdk.getSignedUrl(client, new sdk.GetObjectCommand({ Bucket: bucket, Key: key }), {
        expiresIn: 900,
      }),
    }));
  }

  async getObjectTags(bucket: string, key: string): Promise<Record<string, string>> {
    return this.call('GetObjectTagging', async (sdk, client) => {
      const out = await client.send(new sdk.GetObjectTaggingCommand({ Bucket: bucket, Key: key }));
      return Object.fromEntries((out.TagSet ?? []).map((t) => [t.Key!, t.Value ?? '']));
    });
  }

  async putObjectTags(bucket: string, key: string, tags: Record<string, string>): Promise<void> {
    await this.call('PutObjectTagging', (sdk, client) =>
      client.send(
        new sdk.PutObjectTaggingCommand({
          Bucket: bucket,
          Key: key,
          Tagging: { TagSet: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) },
        }),
      ),
    );
  }

  async putObjectTagged(
    bucket: string,
    key: string,
    body: Uint8Array,
    tags: Record<string, string>,
  ): Promise<void> {
    await this.call('PutObject', (sdk, client) =>
      client.send(
        new sdk.PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: body,
          Tagging: new URLSearchParams(tags).toString(),
        }),
      ),
    );
  }

  async putObjectIfAbsent(
    bucket: string,
    key: string,
    body: string | Uint8Array,
    contentType?: string,
  ): Promise<boolean> {
    try {
      await this.call('PutObject', (sdk, client) =>
        client.send(
          new sdk.PutObjectCommand({
            Bucket: bucket,
            Key: key,
            Body: typeof body === 'string' ? Buffer.from(body) : body,
            ContentType: contentType,
            IfNoneMatch: '*',
          }),
        ),
      );
      return true;
    } catch (err) {
      if (isAwsError(err, 'PreconditionFailed')) return false;
      throw err;
    }
  }

  async putObject(bucket: string, key: string, body: string | Uint8Array, contentType?: string) {
    // Bytes, not strings: the SDK then knows the length (and an empty body needs no stream).
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    await this.call('PutObject', (sdk, client) =>
      client.send(
        new sdk.PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ContentType: contentType }),
      ),
    );
  }

  async uploadObject(bucket: string, key: string, body: Uint8Array, contentType?: string) {
    const { Upload } = loadStorage();
    await this.call('Upload', (_sdk, client) =>
      new Upload({
        client,
        params: {
          Bucket: bucket,
          Key: key,
          Body: body,
          ContentType: contentType,
          ChecksumAlgorithm: 'SHA256',
        },
        queueSize: 4,
        partSize: 16 * 1024 * 1024,
        leavePartsOnError: false,
      }).done(),
    );
  }

  async deleteObjects(bucket: string, keys: readonly string[]) {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      await this.call('DeleteObjects', (sdk, client) =>
        client.send(
          new sdk.DeleteObjectsCommand({
            Bucket: bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
        ),
      );
    }
  }

  async createMultipartUpload(bucket: string, key: string): Promise<string> {
    return this.call('CreateMultipartUpload', async (sdk, client) => {
      const out = await client.send(new sdk.CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
      return out.UploadId!;
    });
  }

  async uploadPart(part: UploadPartInput): Promise<string> {
    return this.call('UploadPart', async (sdk, client) => {
      const command = new sdk.UploadPartCommand({
        Bucket: part.bucket,
        Key: part.key,
        UploadId: part.uploadId,
        PartNumber: part.partNumber,
        Body: part.body,
        ContentLength: part.body.length,
      });
      // SigV4 takes a payload hash already in the request instead of hashing the body again.
      const sha256 = part.sha256.toString('hex');
      command.middlewareStack.add(
        (handler) => (args) => {
          (args.request as { headers: Record<string, string> }).headers['x-amz-content-sha256'] = sha256;
          return handler(args);
        },
        { step: 'build', name: 'rlvrPartSha256' },
      );
      const out = await client.send(command);
      return out.ETag!;
    });
  }

  async completeMultipartUpload(
    bucket: string,
    key: string,
    uploadId: string,
    parts: readonly CompletedPart[],
  ): Promise<void> {
    await this.call('CompleteMultipartUpload', (sdk, client) =>
      client.send(
        new sdk.CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts.map((p) => ({ ETag: p.etag, PartNumber: p.partNumber })) },
        }),
      ),
    );
  }

  async abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    await this.call('AbortMultipartUpload', (sdk, client) =>
      client.send(new sdk.AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId })),
    );
  }
}
