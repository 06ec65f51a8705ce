import {
  DeleteObjectsCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  PutObjectTaggingCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import {
  CreateTrainingJobCommand,
  DescribeTrainingJobCommand,
  ListTagsCommand,
  ListTrainingJobsCommand,
  SageMakerClient,
  StopTrainingJobCommand,
  type CreateTrainingJobRequest,
  type DescribeTrainingJobResponse,
  type TrainingJobStatus,
  type TrainingJobSummary,
} from '@aws-sdk/client-sagemaker';
import {
  CloudWatchLogsClient,
  DescribeLogStreamsCommand,
  GetLogEventsCommand,
} from '@aws-sdk/client-cloudwatch-logs';
import { DescribeRepositoriesCommand, ECRClient } from '@aws-sdk/client-ecr';
import { ListServiceQuotasCommand, ServiceQuotasClient } from '@aws-sdk/client-service-quotas';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { Upload } from '@aws-sdk/lib-storage';

/*
 * AWS through one narrow factory: an interface per service listing only the calls we use, one real
 * implementation from the SDK v3 clients. Region, endpoint and retry settings live here only.
 * The SDK reads AWS_ENDPOINT_URL (and AWS_ENDPOINT_URL_<SERVICE>) itself; S3 against such an
 * endpoint needs path-style addressing.
 */

export interface S3ObjectInfo {
  readonly key: string;
  readonly size: number;
  readonly etag?: string;
  readonly lastModified?: Date;
  /** Full-object SHA-256 (base64), when S3 has one. */
  readonly checksumSha256?: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

export interface UploadFileOptions {
  readonly contentType?: string;
  readonly metadata?: Record<string, string>;
  readonly partSize: number;
  readonly queueSize: number;
  readonly onProgress?: (loadedBytes: number) => void;
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
  /** Multipart upload of a file stream (lib-storage). */
  uploadStream(
    bucket: string,
    key: string,
    body: NodeJS.ReadableStream,
    options: UploadFileOptions,
  ): Promise<void>;
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
  const s3 = new S3Client({
    ...common,
    ...(options.s3Endpoint ? { endpoint: options.s3Endpoint } : {}),
    forcePathStyle: Boolean(options.s3Endpoint) || usesCustomEndpoint(env),
  });
  // Throttling on CreateTrainingJob/Describe is common: more attempts, same backoff with jitter.
  const sagemaker = new SageMakerClient({ ...common, maxAttempts: Math.max(common.maxAttempts, 8) });
  const ssm = new SSMClient(common);
  const logs = new CloudWatchLogsClient(common);
  const sts = new STSClient(common);
  const ecr = new ECRClient(common);
  const quotas = new ServiceQuotasClient(common);
  const all = [s3, sagemaker, ssm, logs, sts, ecr, quotas];
  for (const client of all) options.configure?.(client as never);
  return {
    region: options.region,
    s3: new SdkS3(s3),
    sagemaker: new SdkSageMaker(sagemaker),
    ssm: new SdkSsm(ssm),
    logs: new SdkLogs(logs),
    diagnostics: new SdkDiagnostics(sts, ecr, quotas),
    close: () => all.forEach((c) => c.destroy()),
  };
}

function isNotFound(err: unknown): boolean {
  const name = (err as { name?: string }).name;
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return name === 'NotFound' || name === 'NoSuchKey' || status === 404;
}

class SdkS3 implements IS3 {
  constructor(private readonly client: S3Client) {}

  async headObject(bucket: string, key: string): Promise<S3ObjectInfo | undefined> {
    try {
      const out = await this.client.send(
        new HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }),
      );
      return {
        key,
        size: out.ContentLength ?? 0,
        etag: out.ETag,
        lastModified: out.LastModified,
        checksumSha256:
          out.ChecksumSHA256 && out.ChecksumType !== 'COMPOSITE' && !out.ChecksumSHA256.includes('-')
            ? out.ChecksumSHA256
            : undefined,
        metadata: out.Metadata,
      };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async listObjects(bucket: string, prefix: string, limit?: number): Promise<S3ObjectInfo[]> {
    const out: S3ObjectInfo[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: prefix,
          ContinuationToken: token,
          MaxKeys: limit ? Math.min(1000, limit - out.length) : undefined,
        }),
      );
      for (const o of page.Contents ?? [])
        out.push({ key: o.Key!, size: o.Size ?? 0, etag: o.ETag, lastModified: o.LastModified });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token && (!limit || out.length < limit));
    return out;
  }

  async getObjectText(bucket: string, key: string): Promise<string> {
    const out = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
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
    const out = await this.client.send(
      new GetObjectCommand({ Bucket: bucket, Key: key, Range: range, IfMatch: ifMatch }),
    );
    return Buffer.from(await out.Body!.transformToByteArray());
  }

  async getObjectStream(
    bucket: string,
    key: string,
    options: { start?: number; end?: number; ifMatch?: string },
  ) {
    const range = options.start !== undefined ? `bytes=${options.start}-${options.end ?? ''}` : undefined;
    const out = await this.client.send(
      new GetObjectCommand({ Bucket: bucket, Key: key, Range: range, IfMatch: options.ifMatch }),
    );
    return out.Body as NodeJS.ReadableStream;
  }

  async getObjectTags(bucket: string, key: string): Promise<Record<string, string>> {
    const out = await this.client.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }));
    return Object.fromEntries((out.TagSet ?? []).map((t) => [t.Key!, t.Value ?? '']));
  }

  async putObjectTags(bucket: string, key: string, tags: Record<string, string>): Promise<void> {
    await this.client.send(
      new PutObjectTaggingCommand({
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
    await this.client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: body,
        Tagging: new URLSearchParams(tags).toString(),
      }),
    );
  }

  async uploadStream(bucket: string, key: string, body: NodeJS.ReadableStream, options: UploadFileOptions) {
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: bucket,
        Key: key,
        Body: body as never,
        ContentType: options.contentType,
        Metadata: options.metadata,
      },
      queueSize: options.queueSize,
      partSize: options.partSize,
      leavePartsOnError: false,
    });
    if (options.onProgress) upload.on('httpUploadProgress', (p) => options.onProgress!(p.loaded ?? 0));
    await upload.done();
  }

  async putObjectIfAbsent(bucket: string, key: string, body: string | Uint8Array, contentType?: string) {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: typeof body === 'string' ? Buffer.from(body) : body,
          ContentType: contentType,
          IfNoneMatch: '*',
        }),
      );
      return true;
    } catch (err) {
      const status = (err as S3ServiceException).$metadata?.httpStatusCode;
      if (status === 412 || (err as Error).name === 'PreconditionFailed') return false;
      throw err;
    }
  }

  async putObject(bucket: string, key: string, body: string | Uint8Array, contentType?: string) {
    // Bytes, not strings: the SDK then knows the length (and an empty body needs no stream).
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    await this.client.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ContentType: contentType }),
    );
  }

  async uploadObject(bucket: string, key: string, body: Uint8Array, contentType?: string) {
    await new Upload({
      client: this.client,
      params: { Bucket: bucket, Key: key, Body: body, ContentType: contentType, ChecksumAlgorithm: 'SHA256' },
      queueSize: 4,
      partSize: 16 * 1024 * 1024,
      leavePartsOnError: false,
    }).done();
  }

  async deleteObjects(bucket: string, keys: readonly string[]) {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      if (batch.length === 0) continue;
      await this.client.send(
        new DeleteObjectsCommand({
          Bucket: bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
    }
  }
}

class SdkSageMaker implements ISageMaker {
  constructor(private readonly client: SageMakerClient) {}

  async createTrainingJob(request: CreateTrainingJobRequest): Promise<string> {
    const out = await this.client.send(new CreateTrainingJobCommand(request));
    return out.TrainingJobArn!;
  }

  async listTrainingJobs(filter: { nameContains?: string; status?: TrainingJobStatus; limit: number }) {
    const out: TrainingJobSummary[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListTrainingJobsCommand({
          NameContains: filter.nameContains,
          StatusEquals: filter.status,
          SortBy: 'CreationTime',
          SortOrder: 'Descending',
          MaxResults: Math.min(100, filter.limit - out.length),
          NextToken: token,
        }),
      );
      out.push(...(page.TrainingJobSummaries ?? []));
      token = page.NextToken;
    } while (token && out.length < filter.limit);
    return out;
  }

  async stopTrainingJob(name: string): Promise<void> {
    await this.client.send(new StopTrainingJobCommand({ TrainingJobName: name }));
  }

  async listTags(arn: string): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListTagsCommand({ ResourceArn: arn, NextToken: token }));
      for (const t of page.Tags ?? []) out[t.Key!] = t.Value ?? '';
      token = page.NextToken;
    } while (token);
    return out;
  }

  async describeTrainingJob(name: string): Promise<DescribeTrainingJobResponse | undefined> {
    try {
      return await this.client.send(new DescribeTrainingJobCommand({ TrainingJobName: name }));
    } catch (err) {
      // SageMaker answers a missing job with ValidationException "Could not find training job …".
      if (/could not find|not found|does not exist/i.test((err as Error).message ?? '')) return undefined;
      throw err;
    }
  }
}

class SdkLogs implements ILogs {
  constructor(private readonly client: CloudWatchLogsClient) {}

  async describeLogStreams(group: string, prefix: string): Promise<LogStreamInfo[]> {
    const out: LogStreamInfo[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.client.send(
          new DescribeLogStreamsCommand({
            logGroupName: group,
            logStreamNamePrefix: prefix,
            nextToken: token,
          }),
        );
        for (const s of page.logStreams ?? [])
          out.push({ name: s.logStreamName!, lastEventTime: s.lastEventTimestamp });
        token = page.nextToken;
      } while (token);
    } catch (err) {
      if ((err as Error).name === 'ResourceNotFoundException') return [];
      throw err;
    }
    return out;
  }

  async getLogEvents(group: string, stream: string, token?: string) {
    const page = await this.client.send(
      new GetLogEventsCommand({
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
    private readonly sts: STSClient,
    private readonly ecr: ECRClient,
    private readonly quotas: ServiceQuotasClient,
  ) {}

  async callerIdentity() {
    const out = await this.sts.send(new GetCallerIdentityCommand({}));
    return { account: out.Account ?? '', arn: out.Arn ?? '' };
  }

  async repositoryExists(name: string): Promise<boolean> {
    try {
      await this.ecr.send(new DescribeRepositoriesCommand({ repositoryNames: [name] }));
      return true;
    } catch (err) {
      if ((err as Error).name === 'RepositoryNotFoundException') return false;
      throw err;
    }
  }

  async sagemakerQuotas(text: string): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    let token: string | undefined;
    do {
      const page = await this.quotas.send(
        new ListServiceQuotasCommand({ ServiceCode: 'sagemaker', NextToken: token }),
      );
      for (const q of page.Quotas ?? []) if (q.QuotaName?.includes(text)) out[q.QuotaName] = q.Value ?? 0;
      token = page.NextToken;
    } while (token);
    return out;
  }
}

class SdkSsm implements ISsm {
  constructor(private readonly client: SSMClient) {}

  async getParameter(name: string): Promise<string | undefined> {
    try {
      const out = await this.client.send(new GetParameterCommand({ Name: name }));
      return out.Parameter?.Value;
    } catch (err) {
      if ((err as Error).name === 'ParameterNotFound') return undefined;
      throw err;
    }
  }
}
