import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import * as fs from 'node:fs';
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

/**
 * Expires intermediate checkpoints (`checkpoints/<job>/<run>_step<N>/`) after `days`, keeping every
 * `_final` and each job's newest step. S3 lifecycle filters match key prefixes only, so a daily
 * function does it; its code is inlined (no asset to upload).
 */
export function addCheckpointExpiry(scope: Construct, props: CheckpointExpiryProps): void {
  const { logGroup, role, policy } = expiryAccess(scope, props);
  const fn = new lambda.Function(scope, 'CheckpointExpiry', {
    description: `Deletes intermediate checkpoints older than ${props.days} days (keeps _final and each job's newest)`,
    runtime: lambda.Runtime.NODEJS_24_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline(
      fs.readFileSync(path.join(__dirname, 'functions', 'expire-checkpoints.js'), 'utf8'),
    ),
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
