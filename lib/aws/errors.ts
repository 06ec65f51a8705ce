/*
 * The failures of AWS calls that callers act on, as one typed error: the adapters (s3.ts,
 * sagemaker.ts, …) turn an SDK exception of a kind below into an `AwsError` with that `kind`, the SDK's
 * exception as `cause` and its message as the message. Any other failure (access denied, no
 * credentials, a network error, a validation error) is thrown as the SDK threw it. Callers test
 * `isAwsError(err, kind)` and never read SDK shapes (`name`, `$metadata`).
 */

export type AwsErrorKind =
  /** No such object, bucket, job, parameter, log group or repository (404, NoSuchKey, ResourceNotFound…). */
  | 'NotFound'
  /** A conditional request whose condition no longer holds (412: If-Match, If-None-Match). */
  | 'PreconditionFailed'
  /** A name that is taken (SageMaker ResourceInUse). */
  | 'NameInUse'
  /** An account quota is used up (SageMaker ResourceLimitExceeded). */
  | 'QuotaExceeded'
  /** Still throttled after the SDK's retries (ThrottlingException, SlowDown, 429, 503). */
  | 'Throttled';

export class AwsError extends Error {
  constructor(
    readonly kind: AwsErrorKind,
    message: string,
    /** The SDK's name for the error (e.g. `NoSuchKey`, `ResourceInUse`). */
    readonly code: string,
    /** The call that failed (e.g. `S3 GetObject`), when the adapter said. */
    readonly operation: string | undefined,
    options: { cause: unknown },
  ) {
    super(message, options);
    this.name = 'AwsError';
  }
}

/** Whether `err` is an `AwsError` (of `kind`, when given). */
export function isAwsError(err: unknown, kind?: AwsErrorKind): err is AwsError {
  return err instanceof AwsError && (kind === undefined || err.kind === kind);
}

interface SdkErrorShape {
  name?: string;
  Code?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

const NOT_FOUND = new Set([
  'NotFound',
  'NoSuchKey',
  'NoSuchBucket',
  'NoSuchUpload',
  'ResourceNotFound',
  'ResourceNotFoundException',
  'ParameterNotFound',
  'RepositoryNotFoundException',
]);
const THROTTLED = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ProvisionedThroughputExceededException',
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
]);

export interface AwsErrorContext {
  /** The call, for the error (e.g. `SageMaker DescribeTrainingJob`). */
  readonly operation?: string;
  /**
   * A ValidationException whose message matches is a NotFound: SageMaker answers a missing training
   * job that way ("Requested resource not found", "Could not find training job …").
   */
  readonly notFoundMessage?: RegExp;
  /**
   * Whether a bare HTTP 404 means "no such thing" (S3: yes, its 404s are about the object). SageMaker
   * names a missing job in its error; a 404 there is a wrong endpoint or proxy, not a free name.
   */
  readonly notFoundByStatus?: boolean;
}

/** The kind of an SDK failure, or undefined when it is none of them. */
export function awsErrorKind(err: unknown, context: AwsErrorContext = {}): AwsErrorKind | undefined {
  if (typeof err !== 'object' || err === null || err instanceof AwsError) return undefined;
  const e = err as SdkErrorShape;
  const code = e.name ?? e.Code ?? e.code ?? '';
  const status = e.$metadata?.httpStatusCode;
  if (code === 'ResourceInUse') return 'NameInUse';
  if (code === 'ResourceLimitExceeded' || code === 'ServiceQuotaExceededException') return 'QuotaExceeded';
  if (code === 'PreconditionFailed' || status === 412) return 'PreconditionFailed';
  if (NOT_FOUND.has(code) || (status === 404 && context.notFoundByStatus !== false)) return 'NotFound';
  if (
    code === 'ValidationException' &&
    context.notFoundMessage &&
    context.notFoundMessage.test(e.message ?? '')
  )
    return 'NotFound';
  if (THROTTLED.has(code) || status === 429 || status === 503) return 'Throttled';
  return undefined;
}

/** `err` as an `AwsError` when it is of a kind callers act on; otherwise `err` itself. */
export function toAwsError(err: unknown, context: AwsErrorContext = {}): unknown {
  const kind = awsErrorKind(err, context);
  if (!kind) return err;
  const e = err as SdkErrorShape;
  const code = e.name ?? e.Code ?? e.code ?? 'Error';
  const status = e.$metadata?.httpStatusCode;
  const message = e.message?.trim() ? e.message : `${code}${status ? ` (HTTP ${status})` : ''}`;
  return new AwsError(kind, message, code, context.operation, { cause: err });
}

/** Runs one SDK call (or a loop over pages), its failure mapped by `toAwsError`. */
export async function mapAwsErrors<T>(context: AwsErrorContext, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toAwsError(err, context);
  }
}
