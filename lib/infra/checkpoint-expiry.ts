import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import * as path from 'node:path';
import { keyPattern, type S3Layout } from '../layout';
import { acknowledge } from './nag';
import { leastPrivilegePolicy } from './policy';

export interface CheckpointExpiryProps {
  readonly bucket: s3.IBucket;
  readonly key: kms.IKey | undefined;
  readonly keys: S3Layout;
  /** Intermediate checkpoints older than this many days go. */
  readonly days: number;
}

/** The function's log group and role, its policy attached: list and delete under checkpoints/, write logs. */
function expiryAccess(
  scope: Construct,
  { bucket, key, keys }: CheckpointExpiryProps,
): { logGroup: logs.LogGroup; role: iam.Role; policy: iam.ManagedPolicy } {
  const checkpoints = keys.checkpointsRootPrefix();
  const logGroup = new logs.LogGroup(scope, 'CheckpointExpiryLogs', {
    retention: logs.RetentionDays.THREE_MONTHS,
    encryptionKey: key,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  if (!key) {
    acknowledge(
      logGroup,
      'NIST.800.53.R5-CloudWatchLogGroupEncrypted',
      'S3-managed keys chosen by context; CloudWatch encrypts log data at rest.',
    );
  }
  const role = new iam.Role(scope, 'CheckpointExpiryRole', {
    description: 'Deletes expired intermediate checkpoints',
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
  });
  const policy = leastPrivilegePolicy(scope, 'CheckpointExpiryPolicy', {
    description: 'Expire intermediate checkpoints: list and delete under checkpoints/, write own logs',
    roles: [role],
    statements: [
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [keyPattern(checkpoints)] } },
      }),
      new iam.PolicyStatement({
        actions: ['s3:DeleteObject'],
        resources: [`${bucket.bucketArn}/${keyPattern(checkpoints)}`],
      }),
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [`${logGroup.logGroupArn}`],
      }),
    ],
    scopedWildcardReason: 'Checkpoint folders under the one checkpoints/ prefix are made per job.',
  });
  return { logGroup, role, policy };
}

/** CloudFormation's limit on inline function code (AWS::Lambda::Function Code.ZipFile). */
export const INLINE_CODE_LIMIT = 4096;

/**
 * The expiry function's code: functions/expire-checkpoints.ts bundled with the layout module it reads
 * checkpoint folders by (the entrypoint's), minified; the S3 client is the Lambda runtime's. Small enough
 * to inline (checked), so the stack needs no asset bucket.
 */
export function expiryFunctionCode(): string {
  // esbuild is loaded only when the function is part of the stack.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const esbuild = require('esbuild') as typeof import('esbuild');
  const result = esbuild.buildSync({
    entryPoints: [path.join(__dirname, 'functions', 'expire-checkpoints.ts')],
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    minify: true,
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
    external: ['@aws-sdk/*'],
  });
  const code = result.outputFiles[0].text;
  if (Buffer.byteLength(code) > INLINE_CODE_LIMIT) {
    throw new Error(
      `The checkpoint-expiry function bundles to ${Buffer.byteLength(code)} bytes, over CloudFormation's ${INLINE_CODE_LIMIT}-byte inline limit: make it smaller or ship it as an asset.`,
    );
  }
  return code;
}

/**
 * Expires intermediate checkpoints (`<run>_step<N>/` in `checkpoints/<job>/…/checkpoints/` or at the top
 * of `checkpoints/<job>/`, lib/layout's checkpointFolderOfKey) after `days`, keeping every `_final` and
 * the newest step of each checkpoints folder. S3 lifecycle filters match key prefixes only, so a daily
 * function does it; its code is inlined (no asset to upload).
 */
export function addCheckpointExpiry(scope: Construct, props: CheckpointExpiryProps): void {
  const { logGroup, role, policy } = expiryAccess(scope, props);
  const fn = new lambda.Function(scope, 'CheckpointExpiry', {
    description: `Deletes intermediate checkpoints older than ${props.days} days (keeps _final and the newest step of each checkpoints folder)`,
    runtime: lambda.Runtime.NODEJS_24_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline(expiryFunctionCode()),
    role,
    logGroup,
    timeout: Duration.minutes(15),
    memorySize: 512,
    reservedConcurrentExecutions: 1,
    environment: {
      BUCKET: props.bucket.bucketName,
      CHECKPOINTS_PREFIX: props.keys.checkpointsRootPrefix(),
      EXPIRY_DAYS: String(props.days),
    },
  });
  // The construct makes the function depend on its role, which its Role GetAtt already does
  // (cfn-lint W3005); what matters is that the managed policy is attached before it runs.
  (fn.node.defaultChild as lambda.CfnFunction).addOverride('DependsOn', [
    Stack.of(scope).getLogicalId(policy.node.defaultChild as iam.CfnManagedPolicy),
  ]);
  acknowledge(
    fn,
    'NIST.800.53.R5-LambdaDLQ',
    'A daily clean-up: a failed run is logged and the next day repeats it.',
  );
  acknowledge(
    fn,
    'NIST.800.53.R5-LambdaInsideVPC',
    'It only calls the S3 API; no private network access is needed.',
  );
  new events.Rule(scope, 'CheckpointExpirySchedule', {
    description: 'Daily expiry of intermediate checkpoints',
    schedule: events.Schedule.rate(Duration.days(1)),
    targets: [new targets.LambdaFunction(fn)],
  });
}
