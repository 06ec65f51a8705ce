import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import type { S3Client } from '@aws-sdk/client-s3';
import type {
  CreateTrainingJobRequest,
  DescribeTrainingJobResponse,
  SageMakerClient,
  TrainingJobStatus,
  TrainingJobSummary,
} from '@aws-sdk/client-sagemaker';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { mapLimited } from '../util/pool';

/*
 * AWS through one narrow factory: an interface per service listing only the calls we use, one real
 * implementation from the SDK v3 clients. Region, endpoint and retry settings live here only.
 * The SDK reads AWS_ENDPOINT_URL (and AWS_ENDPOINT_URL_<SERVICE>) itself; S3 against such an
 * endpoint needs path-style addressing.
 *
 * Each SDK package is loaded, and its client made, on the first call to that service: a command that
 * talks to S3 and SageMaker does not pay for loading the other five at every start.
 */

export interface S3ObjectInfo {
  readonly key: string;
  readonly size: number;
  readonly etag?: string;
  /** Full-object SHA-256 (base64), when S3 has one. */
  readonly checksumSha256?: string;
}

export interface UploadFileOptions {
  readonly partSize: number;
  readonly queueSize: number;
}

export interface IS3 {
  headObject(bucket: string, key: string): Promise<S3ObjectInfo | undefined>;
  /** Up to `limit` objects under `prefix` (all when no limit). */
  listObjects(bucket: string, prefix: string, limit?: number): Promise<S3ObjectInfo[]>;
  getObjectText(bucket: string, key: string): Promise<string>;
  /** Bytes `start`–`end` (inclusive); a negative `start` with no `end` is the last -start bytes. */
  getObjectRange(bucket: string, key: string, start: number, end?: number, ifMatch?: string): Promise<Buffer>;
  /** A byte range (or the whole object) as a stream; fails with 412 when `ifMatch` no longer holds. */
  getObjectStream(
    bucket: string,
    key: string,
    options: { start?: number; end?: number; ifMatch?: string },
  ): Promise<NodeJS.ReadableStream>;
  getObjectTags(bucket: string, key: string): Promise<Record<string, string>>;
  putObjectTags(bucket: string, key: string, tags: Record<string, string>): Promise<void>;
  /** One PUT of a body held in memory, with tags. */
  putObjectTagged(bucket: string, key: string, body: Uint8Array, tags: Record<string, string>): Promise<void>;
  /**
   * Multipart upload of a file, `queueSize` parts in flight, each read into a reused buffer; a failed
   * upload is aborted. Resolves to each part's SHA-256 digest, in order: the one hash of the bytes,
   * which also signs the part (so S3 checks each part against it).
   */
  uploadFile(bucket: string, key: string, file: string, options: UploadFileOptions): Promise<Buffer[]>;
  /** Creates the object only if absent (If-None-Match: *); false when it already existed. */
  putObjectIfAbsent(
    bucket: string,
    key: string,
    body: string | Uint8Array,
    contentType?: string,
  ): Promise<boolean>;
  putObject(bucket: string, key: string, body: string | Uint8Array, contentType?: string): Promise<void>;
  /** Multipart for large bodies (lib-storage), with an S3-verified SHA-256 checksum. */
  uploadObject(bucket: string, key: string, body: Uint8Array, contentType?: string): Promise<void>;
  deleteObjects(bucket: string, keys: readonly string[]): Promise<void>;
}

export interface ISageMaker {
  createTrainingJob(request: CreateTrainingJobRequest): Promise<string>;
  /** undefined when no job has that name. */
  describeTrainingJob(name: string): Promise<DescribeTrainingJobResponse | undefined>;
  /** Newest first, across pages, up to `limit`. */
  listTrainingJobs(filter: {
    nameContains?: string;
    status?: TrainingJobStatus;
    limit: number;
  }): Promise<TrainingJobSummary[]>;
  stopTrainingJob(name: string): Promise<void>;
  listTags(arn: string): Promise<Record<string, string>>;
}

export interface LogStreamInfo {
  readonly name: string;
  readonly lastEventTime?: number;
}
export interface LogEvent {
  readonly timestamp: number;
  readonly message: string;
}

export interface ILogs {
  /** Streams whose names start with `prefix`; [] when the group does not exist (yet). */
  describeLogStreams(group: string, prefix: string): Promise<LogStreamInfo[]>;
  /** One page forward from `token` (from the head when absent). */
  getLogEvents(
    group: string,
    stream: string,
    token?: string,
  ): Promise<{ events: LogEvent[]; nextToken?: string }>;
}

/** The calls `rlvr doctor` makes. */
export interface IDiagnostics {
  callerIdentity(): Promise<{ account: string; arn: string }>;
  repositoryExists(name: string): Promise<boolean>;
  /** SageMaker quotas (name → value) whose names contain `text`. */
  sagemakerQuotas(text: string): Promise<Record<string, number>>;
}

/** Registry login for the image pipeline. */
export interface IEcr {
  /** `GetAuthorizationToken`: basic-auth credentials for the account's registry, with their expiry. */
  authorizationToken(): Promise<{ username: string; password: string; expiresAt?: Date }>;
}

export interface ISsm {
  /** undefined when the parameter does not exist. */
  getParameter(name: string): Promise<string | undefined>;
}

export interface AwsClients {
  readonly region: string;
  readonly s3: IS3;
  readonly sagemaker: ISageMaker;
  readonly ssm: ISsm;
  readonly logs: ILogs;
  readonly diagnostics: IDiagnostics;
  readonly ecr: IEcr;
  /** Frees the clients' sockets. */
  close(): void;
}

export interface AwsClientOptions {
  readonly region: string;
  /** Attempts per call, including the first (the SDK's standard retry: exponential backoff, full jitter). */
  readonly maxAttempts?: number;
  /** Per-request timeout, for probes that must not hang (dry-run pre-flight). */
  readonly requestTimeoutMs?: number;
  /** Another S3 endpoint than AWS_ENDPOINT_URL (e.g. a proxy in front of it). */
  readonly s3Endpoint?: string;
  /** Test hook: SDK middleware to inject faults (throttling, resets). */
  readonly configure?: (client: S3Client | SageMakerClient | SSMClient | CloudWatchLogsClient) => void;
}

function usesCustomEndpoint(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.AWS_ENDPOINT_URL || env.AWS_ENDPOINT_URL_S3);
}

type Destroyable = { destroy(): void };

export function createAwsClients(
  options: AwsClientOptions,
  env: NodeJS.ProcessEnv = process.env,
): AwsClients {
  const common = {
    region: options.region,
    maxAttempts: options.maxAttempts ?? 3,
    ...(options.requestTimeoutMs
      ? {
          requestHandler: {
            requestTimeout: options.requestTimeoutMs,
            connectionTimeout: options.requestTimeoutMs,
          },
        }
      : {}),
  };
  const made: Destroyable[] = [];
  const lazy = <C extends Destroyable>(make: () => Promise<C>): (() => Promise<C>) => {
    let client: Promise<C> | undefined;
    return () =>
      (client ??= make().then((c) => {
        options.configure?.(c as never);
        made.push(c);
        return c;
      }));
  };
  const ecr = lazy(async () => new (await import('@aws-sdk/client-ecr')).ECRClient(common));
  return {
    region: options.region,
    s3: new SdkS3(
      lazy(
        async () =>
          new (await import('@aws-sdk/client-s3')).S3Client({
            ...common,
            ...(options.s3Endpoint ? { endpoint: options.s3Endpoint } : {}),
            forcePathStyle: Boolean(options.s3Endpoint) || usesCustomEndpoint(env),
          }),
      ),
    ),
    // Throttling on CreateTrainingJob/Describe is common: more attempts, same backoff with jitter.
    sagemaker: new SdkSageMaker(
      lazy(
        async () =>
          new (await import('@aws-sdk/client-sagemaker')).SageMakerClient({
            ...common,
            maxAttempts: Math.max(common.maxAttempts, 8),
          }),
      ),
    ),
    ssm: new SdkSsm(lazy(async () => new (await import('@aws-sdk/client-ssm')).SSMClient(common))),
    logs: new SdkLogs(
      lazy(async () => new (await import('@aws-sdk/client-cloudwatch-logs')).CloudWatchLogsClient(common)),
    ),
    diagnostics: new SdkDiagnostics(
      lazy(async () => new (await import('@aws-sdk/client-sts')).STSClient(common)),
      ecr,
      lazy(async () => new (await import('@aws-sdk/client-service-quotas')).ServiceQuotasClient(common)),
    ),
    ecr: new SdkEcr(ecr),
    close: () => made.splice(0).forEach((c) => c.destroy()),
  };
}

function isNotFound(err: unknown): boolean {
  const name = (err as { name?: string }).name;
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return name === 'NotFound' || name === 'NoSuchKey' || status === 404;
}

class SdkS3 implements IS3 {
  constructor(private readonly client: () => Promise<S3Client>) {}

  private async sdk() {
    return Promise.all([import('@aws-sdk/client-s3'), this.client()]);
  }

  async headObject(bucket: string, key: string): Promise<S3ObjectInfo | undefined> {
    try {
      const [sdk, client] = await this.sdk();
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
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async listObjects(bucket: string, prefix: string, limit?: number): Promise<S3ObjectInfo[]> {
    const [{ paginateListObjectsV2 }, client] = await Promise.all([
      import('@aws-sdk/client-s3'),
      this.client(),
    ]);
    const out: S3ObjectInfo[] = [];
    const pages = paginateListObjectsV2(
      { client, pageSize: limit ? Math.min(1000, limit) : undefined },
      { Bucket: bucket, Prefix: prefix },
    );
    for await (const page of pages) {
      for (const o of page.Contents ?? []) out.push({ key: o.Key!, size: o.Size ?? 0, etag: o.ETag });
      if (limit && out.length >= limit) return out.slice(0, limit);
    }
    return out;
  }

  async getObjectText(bucket: string, key: string): Promise<string> {
    const [sdk, client] = await this.sdk();
    const out = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }));
    return out.Body!.transformToString('utf8');
  }

  async getObjectRange(
    bucket: string,
    key: string,
    start: number,
    end?: number,
    ifMatch?: string,
  ): Promise<Buffer> {
    const range = start < 0 ? `bytes=${start}` : `bytes=${start}-${end ?? ''}`;
    const [sdk, client] = await this.sdk();
    const out = await client.send(
      new sdk.GetObjectCommand({ Bucket: bucket, Key: key, Range: range, IfMatch: ifMatch }),
    );
    return Buffer.from(await out.Body!.transformToByteArray());
  }

  async getObjectStream(
    bucket: string,
    key: string,
    options: { start?: number; end?: number; ifMatch?: string },
  ) {
    const range = options.start !== undefined ? `bytes=${options.start}-${options.end ?? ''}` : undefined;
    const [sdk, client] = await this.sdk();
    const out = await client.send(
      new sdk.GetObjectCommand({ Bucket: bucket, Key: key, Range: range, IfMatch: options.ifMatch }),
    );
    return out.Body as NodeJS.ReadableStream;
  }

  async getObjectTags(bucket: string, key: string): Promise<Record<string, string>> {
    const [sdk, client] = await this.sdk();
    const out = await client.send(new sdk.GetObjectTaggingCommand({ Bucket: bucket, Key: key }));
    return Object.fromEntries((out.TagSet ?? []).map((t) => [t.Key!, t.Value ?? '']));
  }

  async putObjectTags(bucket: string, key: string, tags: Record<string, string>): Promise<void> {
    const [sdk, client] = await this.sdk();
    await client.send(
      new sdk.PutObjectTaggingCommand({
        Bucket: bucket,
        Key: key,
        Tagging: { TagSet: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) },
      }),
    );
  }

  async putObjectTagged(
    bucket: string,
    key: string,
    body: Uint8Array,
    tags: Record<string, string>,
  ): Promise<void> {
    const [sdk, client] = await this.sdk();
    await client.send(
      new sdk.PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: body,
        Tagging: new URLSearchParams(tags).toString(),
      }),
    );
  }

  private async upload(
    params: { Bucket: string; Key: string; Body: never; ContentType?: string; ChecksumAlgorithm?: 'SHA256' },
    partSize: number,
    queueSize: number,
  ): Promise<void> {
    const [{ Upload }, client] = await Promise.all([import('@aws-sdk/lib-storage'), this.client()]);
    await new Upload({ client, params, queueSize, partSize, leavePartsOnError: false }).done();
  }

  /*
   * Hand-written instead of lib-storage's Upload for files: Upload gathers a stream into each part with
   * Buffer.concat and allocates every part anew, measured here (CPU profile of a 1 GiB upload) as 0.66 s
   * of copying plus 0.35 s of garbage collection, which on a busy machine slowed the upload behind
   * `aws s3 cp`. Reading each part straight into one of `queueSize` reused buffers costs neither.
   */
  async uploadFile(bucket: string, key: string, file: string, options: UploadFileOptions) {
    const [sdk, client] = await this.sdk();
    const handle = await fs.promises.open(file, 'r');
    let uploadId: string | undefined;
    try {
      const size = (await handle.stat()).size;
      const parts = Math.max(1, Math.ceil(size / options.partSize));
      const created = await client.send(new sdk.CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
      uploadId = created.UploadId!;
      const etags: string[] = new Array(parts);
      const digests: Buffer[] = new Array(parts);
      let reading = Promise.resolve();
      // Reads are chained: the file is read front to back, as read-ahead expects.
      const read = (index: number, buffer: Buffer): Promise<number> => {
        const start = index * options.partSize;
        const length = Math.min(options.partSize, size - start);
        const done = reading.then(async () => {
          for (let got = 0; got < length;) {
            const { bytesRead } = await handle.read(buffer, got, length - got, start + got);
            if (bytesRead === 0) throw new Error(`${file} shrank while it was being uploaded`);
            got += bytesRead;
          }
          return length;
        });
        reading = done.then(() => undefined);
        return done;
      };
      // One buffer per part in flight, reused: at most `queueSize` are ever allocated.
      const buffers: Buffer[] = [];
      const uploadPart = async (index: number) => {
        const buffer = buffers.pop() ?? Buffer.allocUnsafe(options.partSize);
        try {
          const length = await read(index, buffer);
          const body = buffer.subarray(0, length);
          digests[index] = createHash('sha256').update(body).digest();
          const command = new sdk.UploadPartCommand({
            Bucket: bucket,
            Key: key,
            UploadId: uploadId,
            PartNumber: index + 1,
            Body: body,
            ContentLength: length,
          });
          // SigV4 takes a payload hash already in the request instead of hashing the body again.
          command.middlewareStack.add(
            (handler) => (args) => {
              (args.request as { headers: Record<string, string> }).headers['x-amz-content-sha256'] =
                digests[index].toString('hex');
              return handler(args);
            },
            { step: 'build', name: 'rlvrPartSha256' },
          );
          const out = await client.send(command);
          etags[index] = out.ETag!;
        } finally {
          buffers.push(buffer);
        }
      };
      await mapLimited(
        Array.from({ length: parts }, (_, i) => i),
        options.queueSize,
        uploadPart,
      );
      await client.send(
        new sdk.CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
        }),
      );
      uploadId = undefined;
      return digests;
    } finally {
      await handle.close();
      if (uploadId) {
        await client
          .send(new sdk.AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }))
          .catch(() => undefined);
      }
    }
  }

  async putObjectIfAbsent(bucket: string, key: string, body: string | Uint8Array, contentType?: string) {
    try {
      const [sdk, client] = await this.sdk();
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: typeof body === 'string' ? Buffer.from(body) : body,
          ContentType: contentType,
          IfNoneMatch: '*',
        }),
      );
      return true;
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 412 || (err as Error).name === 'PreconditionFailed') return false;
      throw err;
    }
  }

  async putObject(bucket: string, key: string, body: string | Uint8Array, contentType?: string) {
    // Bytes, not strings: the SDK then knows the length (and an empty body needs no stream).
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const [sdk, client] = await this.sdk();
    await client.send(
      new sdk.PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ContentType: contentType }),
    );
  }

  async uploadObject(bucket: string, key: string, body: Uint8Array, contentType?: string) {
    await this.upload(
      {
        Bucket: bucket,
        Key: key,
        Body: body as never,
        ContentType: contentType,
        ChecksumAlgorithm: 'SHA256',
      },
      16 * 1024 * 1024,
      4,
    );
  }

  async deleteObjects(bucket: string, keys: readonly string[]) {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      const [sdk, client] = await this.sdk();
      await client.send(
        new sdk.DeleteObjectsCommand({
          Bucket: bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
    }
  }
}

class SdkSageMaker implements ISageMaker {
  constructor(private readonly client: () => Promise<SageMakerClient>) {}

  private async sdk() {
    return Promise.all([import('@aws-sdk/client-sagemaker'), this.client()]);
  }

  async createTrainingJob(request: CreateTrainingJobRequest): Promise<string> {
    const [sdk, client] = await this.sdk();
    const out = await client.send(new sdk.CreateTrainingJobCommand(request));
    return out.TrainingJobArn!;
  }

  async listTrainingJobs(filter: { nameContains?: string; status?: TrainingJobStatus; limit: number }) {
    const [sdk, client] = await this.sdk();
    const out: TrainingJobSummary[] = [];
    const pages = sdk.paginateListTrainingJobs(
      { client, pageSize: Math.min(100, filter.limit) },
      {
        NameContains: filter.nameContains,
        StatusEquals: filter.status,
        SortBy: 'CreationTime',
        SortOrder: 'Descending',
      },
    );
    for await (const page of pages) {
      out.push(...(page.TrainingJobSummaries ?? []));
      if (out.length >= filter.limit) return out.slice(0, filter.limit);
    }
    return out;
  }

  async stopTrainingJob(name: string): Promise<void> {
    const [sdk, client] = await this.sdk();
    await client.send(new sdk.StopTrainingJobCommand({ TrainingJobName: name }));
  }

  async listTags(arn: string): Promise<Record<string, string>> {
    const [sdk, client] = await this.sdk();
    const out: Record<string, string> = {};
    for await (const page of sdk.paginateListTags({ client }, { ResourceArn: arn })) {
      for (const t of page.Tags ?? []) out[t.Key!] = t.Value ?? '';
    }
    return out;
  }

  async describeTrainingJob(name: string): Promise<DescribeTrainingJobResponse | undefined> {
    const [sdk, client] = await this.sdk();
    try {
      return await client.send(new sdk.DescribeTrainingJobCommand({ TrainingJobName: name }));
    } catch (err) {
      // SageMaker answers a missing job with ValidationException "Could not find training job …".
      if (/could not find|not found|does not exist/i.test((err as Error).message ?? '')) return undefined;
      throw err;
    }
  }
}

class SdkLogs implements ILogs {
  constructor(private readonly client: () => Promise<CloudWatchLogsClient>) {}

  async describeLogStreams(group: string, prefix: string): Promise<LogStreamInfo[]> {
    const [sdk, client] = await Promise.all([import('@aws-sdk/client-cloudwatch-logs'), this.client()]);
    const out: LogStreamInfo[] = [];
    try {
      const pages = sdk.paginateDescribeLogStreams(
        { client },
        { logGroupName: group, logStreamNamePrefix: prefix },
      );
      for await (const page of pages) {
        for (const s of page.logStreams ?? [])
          out.push({ name: s.logStreamName!, lastEventTime: s.lastEventTimestamp });
      }
    } catch (err) {
      if ((err as Error).name === 'ResourceNotFoundException') return [];
      throw err;
    }
    return out;
  }

  async getLogEvents(group: string, stream: string, token?: string) {
    const [sdk, client] = await Promise.all([import('@aws-sdk/client-cloudwatch-logs'), this.client()]);
    const page = await client.send(
      new sdk.GetLogEventsCommand({
        logGroupName: group,
        logStreamName: stream,
        startFromHead: true,
        nextToken: token,
      }),
    );
    return {
      events: (page.events ?? []).map((e) => ({ timestamp: e.timestamp ?? 0, message: e.message ?? '' })),
      nextToken: page.nextForwardToken,
    };
  }
}

class SdkDiagnostics implements IDiagnostics {
  constructor(
    private readonly sts: () => Promise<import('@aws-sdk/client-sts').STSClient>,
    private readonly ecr: () => Promise<import('@aws-sdk/client-ecr').ECRClient>,
    private readonly quotas: () => Promise<import('@aws-sdk/client-service-quotas').ServiceQuotasClient>,
  ) {}

  async callerIdentity() {
    const [sdk, client] = await Promise.all([import('@aws-sdk/client-sts'), this.sts()]);
    const out = await client.send(new sdk.GetCallerIdentityCommand({}));
    return { account: out.Account ?? '', arn: out.Arn ?? '' };
  }

  async repositoryExists(name: string): Promise<boolean> {
    const [sdk, client] = await Promise.all([import('@aws-sdk/client-ecr'), this.ecr()]);
    try {
      await client.send(new sdk.DescribeRepositoriesCommand({ repositoryNames: [name] }));
      return true;
    } catch (err) {
      if ((err as Error).name === 'RepositoryNotFoundException') return false;
      throw err;
    }
  }

  async sagemakerQuotas(text: string): Promise<Record<string, number>> {
    const [sdk, client] = await Promise.all([import('@aws-sdk/client-service-quotas'), this.quotas()]);
    const out: Record<string, number> = {};
    for await (const page of sdk.paginateListServiceQuotas({ client }, { ServiceCode: 'sagemaker' })) {
      for (const q of page.Quotas ?? []) if (q.QuotaName?.includes(text)) out[q.QuotaName] = q.Value ?? 0;
    }
    return out;
  }
}

class SdkEcr implements IEcr {
  constructor(private readonly client: () => Promise<import('@aws-sdk/client-ecr').ECRClient>) {}

  async authorizationToken() {
    const [sdk, client] = await Promise.all([import('@aws-sdk/client-ecr'), this.client()]);
    const out = await client.send(new sdk.GetAuthorizationTokenCommand({}));
    const data = out.authorizationData?.[0];
    const decoded = Buffer.from(data?.authorizationToken ?? '', 'base64').toString('utf8');
    const at = decoded.indexOf(':');
    if (at < 0) throw new Error('ECR returned no authorization token');
    return {
      username: decoded.slice(0, at),
      password: decoded.slice(at + 1),
      ...(data?.expiresAt ? { expiresAt: data.expiresAt } : {}),
    };
  }
}

class SdkSsm implements ISsm {
  constructor(private readonly client: () => Promise<SSMClient>) {}

  async getParameter(name: string): Promise<string | undefined> {
    const [sdk, client] = await Promise.all([import('@aws-sdk/client-ssm'), this.client()]);
    try {
      const out = await client.send(new sdk.GetParameterCommand({ Name: name }));
      return out.Parameter?.Value;
    } catch (err) {
      if ((err as Error).name === 'ParameterNotFound') return undefined;
      throw err;
    }
  }
}
