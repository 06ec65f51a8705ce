import { CreateTrainingJobCommand, type SageMakerClient } from '@aws-sdk/client-sagemaker';
import { createAwsClients, describeAwsError, isAwsError, type AwsClients } from '../../lib/aws';
import { AwsError } from '../../lib/aws/errors';
import { BUCKET } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { TEST_REGION } from '../helpers/moto';

/**
 * The adapters' contracts against a real S3, SageMaker, SSM and CloudWatch Logs (moto): the answers
 * these services really give for a missing thing or a failed condition arrive as AwsError of the right
 * kind, and the calls that absorb a kind (headObject, describeTrainingJob, getParameter, …) keep their
 * contracts. Run on the SDK packages (adapters.integration.test.ts) and on the build's bundle of them
 * (sdk-bundle.integration.test.ts).
 */
export function adapterCases(): void {
  useEmulator();
  let aws: AwsClients;
  beforeEach(() => {
    aws = createAwsClients({ region: TEST_REGION });
  });
  afterEach(() => aws.close());

  it('S3: a missing key is undefined to HEAD and NotFound to GET, with the SDK error as cause', async () => {
    expect(await aws.s3.headObject(BUCKET, 'no/such/key')).toBeUndefined();
    const err = await aws.s3.getObjectText(BUCKET, 'no/such/key').catch((e: unknown) => e);
    expect(isAwsError(err, 'NotFound')).toBe(true);
    expect((err as AwsError).code).toBe('NoSuchKey');
    expect((err as AwsError).cause).toMatchObject({ name: 'NoSuchKey' });
  });

  it('S3: a stale If-Match is PreconditionFailed; a second create-only write is false', async () => {
    await aws.s3.putObject(BUCKET, 'cond/a.txt', 'one');
    const head = await aws.s3.headObject(BUCKET, 'cond/a.txt');
    expect((await aws.s3.getObjectRange(BUCKET, 'cond/a.txt', 0, 1, head!.etag)).toString()).toBe('on');
    await aws.s3.putObject(BUCKET, 'cond/a.txt', 'two');
    const stale = await aws.s3
      .getObjectRange(BUCKET, 'cond/a.txt', 0, 1, head!.etag)
      .catch((e: unknown) => e);
    expect(isAwsError(stale, 'PreconditionFailed')).toBe(true);
    expect(await aws.s3.putObjectIfAbsent(BUCKET, 'cond/b.txt', 'x')).toBe(true);
    expect(await aws.s3.putObjectIfAbsent(BUCKET, 'cond/b.txt', 'y')).toBe(false);
    expect(await aws.s3.getObjectText(BUCKET, 'cond/b.txt')).toBe('x');
  });

  it('S3: a missing bucket is NotFound too, and describeAwsError still names it', async () => {
    const err = await aws.s3.putObject('no-such-bucket-here', 'k', 'x').catch((e: unknown) => e);
    expect(isAwsError(err, 'NotFound')).toBe(true);
    expect((err as AwsError).code).toBe('NoSuchBucket');
    expect(describeAwsError(err)).toMatch(/^NoSuchBucket: /);
  });

  it('S3: a failure of no kind (a range past the end) is the SDK error itself', async () => {
    const key = 'rlvr-experiments/curricula/gsm8k_curriculum.txt';
    const err = await aws.s3.getObjectRange(BUCKET, key, 1000, 2000).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(AwsError);
    expect(err).toMatchObject({ name: 'InvalidRange', $metadata: { httpStatusCode: 416 } });
  });

  it('SageMaker, SSM, Logs: a missing job, parameter or log group is undefined / []', async () => {
    expect(await aws.sagemaker.describeTrainingJob('no-such-job')).toBeUndefined();
    expect(await aws.ssm.getParameter('/no/such/parameter')).toBeUndefined();
    expect(await aws.logs.describeLogStreams('/aws/sagemaker/NoSuchGroup', 'x/')).toEqual([]);
  });

  it('SageMaker: ResourceInUse from CreateTrainingJob arrives as NameInUse', async () => {
    const failing = createAwsClients({
      region: TEST_REGION,
      configure: (client) => {
        if (client.constructor.name !== 'SageMakerClient') return;
        (client as SageMakerClient).middlewareStack.add(
          (next, context) => async (args) => {
            if (context.commandName === CreateTrainingJobCommand.name) {
              throw Object.assign(new Error('Training job names must be unique (injected)'), {
                name: 'ResourceInUse',
                $fault: 'client',
                $metadata: { httpStatusCode: 400 },
              });
            }
            return next(args);
          },
          { step: 'deserialize', name: 'inject-in-use' },
        );
      },
    });
    try {
      const err = await failing.sagemaker.createTrainingJob({} as never).catch((e: unknown) => e);
      expect(isAwsError(err, 'NameInUse')).toBe(true);
      expect((err as Error).message).toBe('Training job names must be unique (injected)');
      expect((err as AwsError).operation).toBe('SageMaker CreateTrainingJob');
    } finally {
      failing.close();
    }
  });
}
