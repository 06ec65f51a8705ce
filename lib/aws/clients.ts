import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import {
  CreateTrainingJobCommand,
  DescribeTrainingJobCommand,
  SageMakerClient,
  type CreateTrainingJobRequest,
  type DescribeTrainingJobResponse,
} from '@aws-sdk/client-sagemaker';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
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
}

export interface IS3 {
  headObject(bucket: string, key: string): Promise<S3ObjectInfo | undefined>;
  /** Up to `limit` objects under `prefix` (all when no limit). */
  listObjects(bucket: string, prefix: string, limit?: number): Promise<S3ObjectInfo[]>;
  getObjectText(bucket: string, key: string): Promise<string>;
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
  /** Frees the clients' sockets. */
  close(): void;
}

export interface AwsClientOptions {
  readonly region: string;
  /** Attempts per call, including the first (the SDK's standard retry: exponential backoff, full jitter). */
  readonly maxAttempts?: number;
  /** Per-request timeout, for probes that must not hang (dry-run pre-flight). */
  readonly requestTimeoutMs?: number;
  /** Test hook: SDK middleware to inject faults (throttling, resets). */
  readonly configure?: (client: S3Client | SageMakerClient | SSMClient) => void;
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
  const s3 = new S3Client({ ...common, forcePathStyle: usesCustomEndpoint(env) });
  // Throttling on CreateTrainingJob/Describe is common: more attempts, same backoff with jitter.
  const sagemaker = new SageMakerClient({ ...common, maxAttempts: Math.max(common.maxAttempts, 8) });
  const ssm = new SSMClient(common);
  for (const client of [s3, sagemaker, ssm]) options.configure?.(client);
  return {
    region: options.region,
    s3: new SdkS3(s3),
    sagemaker: new SdkSageMaker(sagemaker),
    ssm: new SdkSsm(ssm),
    close: () => [s3, sagemaker, ssm].forEach((c) => c.destroy()),
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
      const out = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return { key, size: out.ContentLength ?? 0, etag: out.ETag };
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
      for (const o of page.Contents ?? []) out.push({ key: o.Key!, size: o.Size ?? 0, etag: o.ETag });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token && (!limit || out.length < limit));
    return out;
  }

  async getObjectText(bucket: string, key: string): Promise<string> {
    const out = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return out.Body!.transformToString('utf8');
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
