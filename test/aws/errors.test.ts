import { CloudWatchLogsClient, ResourceNotFoundException } from '@aws-sdk/client-cloudwatch-logs';
import { RepositoryNotFoundException } from '@aws-sdk/client-ecr';
import { NoSuchKey, NotFound, S3ServiceException, type S3Client } from '@aws-sdk/client-s3';
import {
  ResourceInUse,
  ResourceLimitExceeded,
  ResourceNotFound,
  SageMakerServiceException,
  type SageMakerClient,
} from '@aws-sdk/client-sagemaker';
import { ParameterNotFound, type SSMClient } from '@aws-sdk/client-ssm';
import { classifyAwsError, createAwsClients, describeAwsError, isAwsError } from '../../lib/aws';
import { AwsError, awsErrorKind, toAwsError, type AwsErrorKind } from '../../lib/aws/errors';
import { SdkLogs } from '../../lib/aws/logs';
import { SdkS3 } from '../../lib/aws/s3';
import { SdkSageMaker } from '../../lib/aws/sagemaker';
import { SdkSsm } from '../../lib/aws/ssm';

/*
 * How the adapters turn SDK failures into AwsError: the mapping on the SDK's own exception classes,
 * and each adapter's contract (undefined / [] / false for a missing thing) with a client stub that
 * throws them. The same adapters meet moto's real answers in adapters.integration.test.ts.
 */

const meta = (httpStatusCode: number) => ({ httpStatusCode, attempts: 1, totalRetryDelay: 0 });

/** An S3 exception the way the SDK makes one for an error it has no class for. */
function s3Error(name: string, status: number, message = `${name} from S3`) {
  return new S3ServiceException({
    name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: meta(status),
    message,
  });
}
function sageMakerError(name: string, status: number, message: string) {
  return new SageMakerServiceException({ name, $fault: 'client', $metadata: meta(status), message });
}

describe('awsErrorKind maps SDK exceptions', () => {
  const cases: [string, unknown, AwsErrorKind | undefined][] = [
    [
      'NoSuchKey',
      new NoSuchKey({ message: 'The specified key does not exist.', $metadata: meta(404) }),
      'NotFound',
    ],
    ['HEAD 404 (NotFound)', new NotFound({ message: 'UnknownError', $metadata: meta(404) }), 'NotFound'],
    ['NoSuchBucket by its status', s3Error('NoSuchBucket', 404), 'NotFound'],
    [
      'SageMaker ResourceNotFound',
      new ResourceNotFound({ message: 'no such', $metadata: meta(400) }),
      'NotFound',
    ],
    [
      'SSM ParameterNotFound',
      new ParameterNotFound({ message: 'no such', $metadata: meta(400) }),
      'NotFound',
    ],
    [
      'Logs ResourceNotFoundException',
      new ResourceNotFoundException({ message: 'no group', $metadata: meta(400) }),
      'NotFound',
    ],
    [
      'ECR RepositoryNotFoundException',
      new RepositoryNotFoundException({ message: 'no repo', $metadata: meta(400) }),
      'NotFound',
    ],
    ['412', s3Error('PreconditionFailed', 412), 'PreconditionFailed'],
    ['412 without a name S3 knows', s3Error('Unknown', 412), 'PreconditionFailed'],
    ['ResourceInUse', new ResourceInUse({ message: 'taken', $metadata: meta(400) }), 'NameInUse'],
    [
      'ResourceLimitExceeded',
      new ResourceLimitExceeded({ message: 'quota', $metadata: meta(400) }),
      'QuotaExceeded',
    ],
    ['ThrottlingException', sageMakerError('ThrottlingException', 400, 'Rate exceeded'), 'Throttled'],
    ['SlowDown', s3Error('SlowDown', 503), 'Throttled'],
    ['429', sageMakerError('TooManyRequests', 429, 'slow down'), 'Throttled'],
    ['503', s3Error('ServiceUnavailable', 503), 'Throttled'],
    ['AccessDenied stays itself', s3Error('AccessDenied', 403), undefined],
    [
      'a ValidationException about something else',
      sageMakerError('ValidationException', 400, 'bad'),
      undefined,
    ],
    [
      'a network error',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      undefined,
    ],
    ['not an object', 'boom', undefined],
  ];
  it.each(cases)('%s', (_label, err, kind) => {
    expect(awsErrorKind(err)).toBe(kind);
  });

  it('a bare 404 is NotFound unless the call says its 404s are not about the thing', () => {
    const err = sageMakerError('UnknownError', 404, 'Not Found');
    expect(awsErrorKind(err)).toBe('NotFound');
    expect(awsErrorKind(err, { notFoundByStatus: false })).toBeUndefined();
  });

  it('a ValidationException saying the resource is missing is NotFound only where the call says so', () => {
    const err = sageMakerError('ValidationException', 400, 'Requested resource not found.');
    expect(awsErrorKind(err)).toBeUndefined();
    expect(awsErrorKind(err, { notFoundMessage: /not found/i })).toBe('NotFound');
  });
});

describe('toAwsError', () => {
  it('keeps the SDK error as cause, its message, its name as code, and the operation', () => {
    const sdk = new ResourceInUse({ message: 'Training job name exists', $metadata: meta(400) });
    const err = toAwsError(sdk, { operation: 'SageMaker CreateTrainingJob' });
    expect(err).toBeInstanceOf(AwsError);
    expect(err).toBeInstanceOf(Error);
    const e = err as AwsError;
    expect(e.kind).toBe('NameInUse');
    expect(e.cause).toBe(sdk);
    expect(e.message).toBe('Training job name exists');
    expect(e.code).toBe('ResourceInUse');
    expect(e.operation).toBe('SageMaker CreateTrainingJob');
    expect(isAwsError(e, 'NameInUse')).toBe(true);
    expect(isAwsError(e, 'NotFound')).toBe(false);
    expect(isAwsError(sdk)).toBe(false);
  });

  it('an error of no kind comes back as it was', () => {
    const denied = s3Error('AccessDenied', 403);
    expect(toAwsError(denied)).toBe(denied);
  });

  it('an SDK error with an empty message gets a readable one', () => {
    const e = toAwsError(new NotFound({ message: '', $metadata: meta(404) })) as AwsError;
    expect(e.message).toBe('NotFound (HTTP 404)');
  });

  it('describeAwsError and classifyAwsError see through it to the SDK error', () => {
    const sdk = sageMakerError('ThrottlingException', 400, 'Rate exceeded\nmore');
    const wrapped = toAwsError(sdk);
    expect(describeAwsError(wrapped)).toBe('ThrottlingException: Rate exceeded');
    expect(describeAwsError(wrapped)).toBe(describeAwsError(sdk));
    const denied = s3Error('AccessDenied', 403);
    expect(classifyAwsError(denied)).toBe('access-denied');
    expect(classifyAwsError(new AwsError('Throttled', 'x', 'X', undefined, { cause: denied }))).toBe(
      'access-denied',
    );
  });
});

/** A client whose every call fails with `err`, and the commands it was sent. */
function failingClient<C>(err: unknown): { client: () => Promise<C>; sent: string[] } {
  const sent: string[] = [];
  const client = {
    send: async (command: object) => {
      sent.push(command.constructor.name);
      throw err;
    },
  };
  return { client: async () => client as unknown as C, sent };
}

describe('the adapters map failures and keep their contracts', () => {
  it('S3: a missing object is undefined for HEAD and NotFound for GET; a taken key is false', async () => {
    const missing = new SdkS3(
      failingClient<S3Client>(new NotFound({ message: '', $metadata: meta(404) })).client,
    );
    expect(await missing.headObject('b', 'k')).toBeUndefined();
    const noKey = new SdkS3(
      failingClient<S3Client>(
        new NoSuchKey({ message: 'The specified key does not exist.', $metadata: meta(404) }),
      ).client,
    );
    const err = await noKey.getObjectText('b', 'k').catch((e: unknown) => e);
    expect(isAwsError(err, 'NotFound')).toBe(true);
    expect((err as AwsError).cause).toBeInstanceOf(NoSuchKey);
    expect((err as AwsError).operation).toBe('S3 GetObject');
    const taken = new SdkS3(failingClient<S3Client>(s3Error('PreconditionFailed', 412)).client);
    expect(await taken.putObjectIfAbsent('b', 'k', 'x')).toBe(false);
    const stale = await taken.getObjectRange('b', 'k', 0, 9, '"etag"').catch((e: unknown) => e);
    expect(isAwsError(stale, 'PreconditionFailed')).toBe(true);
  });

  it('S3: a failure of no kind passes through untouched, even where a kind would be absorbed', async () => {
    const denied = s3Error('AccessDenied', 403);
    const s3 = new SdkS3(failingClient<S3Client>(denied).client);
    await expect(s3.headObject('b', 'k')).rejects.toBe(denied);
    await expect(s3.putObjectIfAbsent('b', 'k', 'x')).rejects.toBe(denied);
  });

  it('SageMaker: a missing job is undefined; a taken name and a used-up quota are typed', async () => {
    for (const message of ['Requested resource not found.', "Could not find training job 'arn:…'."]) {
      const stub = failingClient<SageMakerClient>(sageMakerError('ValidationException', 400, message));
      expect(await new SdkSageMaker(stub.client).describeTrainingJob('j')).toBeUndefined();
      expect(stub.sent).toEqual(['DescribeTrainingJobCommand']);
    }
    // A bare 404 from SageMaker is a wrong endpoint or proxy, not a missing job (a free name).
    const bare404 = sageMakerError('UnknownError', 404, 'Not Found');
    await expect(
      new SdkSageMaker(failingClient<SageMakerClient>(bare404).client).describeTrainingJob('j'),
    ).rejects.toBe(bare404);
    const invalid = sageMakerError('ValidationException', 400, 'TrainingJobName is invalid');
    await expect(
      new SdkSageMaker(failingClient<SageMakerClient>(invalid).client).describeTrainingJob('j'),
    ).rejects.toBe(invalid);
    const inUse = new SdkSageMaker(
      failingClient<SageMakerClient>(new ResourceInUse({ message: 'exists', $metadata: meta(400) })).client,
    );
    expect(isAwsError(await inUse.createTrainingJob({} as never).catch((e: unknown) => e), 'NameInUse')).toBe(
      true,
    );
    const quota = new SdkSageMaker(
      failingClient<SageMakerClient>(new ResourceLimitExceeded({ message: 'quota', $metadata: meta(400) }))
        .client,
    );
    const err = await quota.createTrainingJob({} as never).catch((e: unknown) => e);
    expect(isAwsError(err, 'QuotaExceeded')).toBe(true);
    expect((err as Error).message).toBe('quota');
  });

  it('SSM and Logs: a missing parameter is undefined, a missing log group no streams', async () => {
    const ssm = new SdkSsm(
      failingClient<SSMClient>(new ParameterNotFound({ message: 'none', $metadata: meta(400) })).client,
    );
    expect(await ssm.getParameter('/x')).toBeUndefined();
    // The paginator wants a real client: one that fails before the network.
    const client = new CloudWatchLogsClient({
      region: 'us-west-2',
      endpoint: 'http://127.0.0.1:9',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
    });
    client.middlewareStack.add(
      () => async () => {
        throw new ResourceNotFoundException({ message: 'none', $metadata: meta(400) });
      },
      { step: 'deserialize', name: 'no-group' },
    );
    const logs = new SdkLogs(async () => client);
    expect(await logs.describeLogStreams('/g', 'p')).toEqual([]);
    client.destroy();
  });
});

describe('Throttled comes after the SDK retries', () => {
  const saved = { ...process.env };
  beforeAll(() => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' });
    delete process.env.AWS_PROFILE;
  });
  afterAll(() => {
    process.env = saved;
  });

  it('SlowDown on every attempt: the caller gets Throttled once, after maxAttempts tries', async () => {
    let attempts = 0;
    const aws = createAwsClients(
      {
        region: 'us-west-2',
        maxAttempts: 2,
        s3Endpoint: 'http://127.0.0.1:9',
        configure: (client) =>
          (client as S3Client).middlewareStack.add(
            () => async () => {
              attempts++;
              throw s3Error('SlowDown', 503, 'Please reduce your request rate.');
            },
            { step: 'deserialize', name: 'always-slow-down' },
          ),
      },
      {},
    );
    try {
      const err = await aws.s3.putObject('b', 'k', 'x').catch((e: unknown) => e);
      expect(isAwsError(err, 'Throttled')).toBe(true);
      expect((err as AwsError).message).toBe('Please reduce your request rate.');
      expect(attempts).toBe(2);
    } finally {
      aws.close();
    }
  });
});
