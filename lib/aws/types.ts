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

/*
 * An interface per service listing only the calls we use (primitive calls: one request, or the pages
 * of one listing). The SDK adapters (s3.ts, sagemaker.ts, …) implement them; clients.ts makes them.
 * Failures callers act on arrive as `AwsError` (errors.ts).
 */

export interface S3ObjectInfo {
  readonly key: string;
  readonly size: number;
  readonly etag?: string;
  /** Full-object SHA-256 (base64), when S3 has one. */
  readonly checksumSha256?: string;
}

/** One part of a multipart upload. */
export interface UploadPartInput {
  readonly bucket: string;
  readonly key: string;
  readonly uploadId: string;
  /** 1-based. */
  readonly partNumber: number;
  readonly body: Uint8Array;
  /** The body's SHA-256: it signs the request (SigV4 payload hash), so S3 checks the part against it. */
  readonly sha256: Buffer;
}

export interface CompletedPart {
  readonly partNumber: number;
  readonly etag: string;
}

export interface IS3 {
  /** undefined when there is no such object. */
  headObject(bucket: string, key: string): Promise<S3ObjectInfo | undefined>;
  /** Up to `limit` objects under `prefix` (all when no limit). */
  listObjects(bucket: string, prefix: string, limit?: number): Promise<S3ObjectInfo[]>;
  /** Fails with AwsError NotFound when there is no such object. */
  getObjectText(bucket: string, key: string): Promise<string>;
  /**
   * Bytes `start`–`end` (inclusive); a negative `start` with no `end` is the last -start bytes. Fails
   * with AwsError PreconditionFailed when `ifMatch` no longer holds.
   */
  getObjectRange(bucket: string, key: string, start: number, end?: number, ifMatch?: string): Promise<Buffer>;
  /** A byte range (or the whole object) as a stream; fails with AwsError PreconditionFailed when `ifMatch` no longer holds. */
  getObjectStream(
    bucket: string,
    key: string,
    options: { start?: number; end?: number; ifMatch?: string },
  ): Promise<NodeJS.ReadableStream>;
  /**
   * A presigned GET of the object (valid for minutes), for a reader outside the SDK's HTTP stack; absent
   * where there is no such reader (the fakes of tests that inject faults at this interface).
   */
  signedGet?(bucket: string, key: string): Promise<{ readonly url: string }>;
  getObjectTags(bucket: string, key: string): Promise<Record<string, string>>;
  putObjectTags(bucket: string, key: string, tags: Record<string, string>): Promise<void>;
  /** One PUT of a body held in memory, with tags. */
  putObjectTagged(bucket: string, key: string, body: Uint8Array, tags: Record<string, string>): Promise<void>;
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
  /** Starts a multipart upload: its upload id. (lib/transfers/multipart-upload.ts drives the parts.) */
  createMultipartUpload(bucket: string, key: string): Promise<string>;
  /** Uploads one part, signed with its SHA-256: its ETag. */
  uploadPart(part: UploadPartInput): Promise<string>;
  completeMultipartUpload(
    bucket: string,
    key: string,
    uploadId: string,
    parts: readonly CompletedPart[],
  ): Promise<void>;
  abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void>;
}

export interface ISageMaker {
  /** Fails with AwsError NameInUse when the name is taken, QuotaExceeded when a quota is used up. */
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
