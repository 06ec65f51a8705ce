import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { acknowledge } from './nag';
import type { RlvrInfraProps } from './props';

/** Every KMS action that applies to a key (AWS KMS API reference), for the key policy. */
const KMS_KEY_ACTIONS = [
  'CancelKeyDeletion',
  'CreateAlias',
  'CreateGrant',
  'Decrypt',
  'DeleteAlias',
  'DeleteImportedKeyMaterial',
  'DescribeKey',
  'DisableKey',
  'DisableKeyRotation',
  'EnableKey',
  'EnableKeyRotation',
  'Encrypt',
  'GenerateDataKey',
  'GenerateDataKeyWithoutPlaintext',
  'GetKeyPolicy',
  'GetKeyRotationStatus',
  'GetParametersForImport',
  'ImportKeyMaterial',
  'ListGrants',
  'ListKeyPolicies',
  'ListKeyRotations',
  'ListResourceTags',
  'PutKeyPolicy',
  'ReEncryptFrom',
  'ReEncryptTo',
  'RetireGrant',
  'RevokeGrant',
  'RotateKeyOnDemand',
  'ScheduleKeyDeletion',
  'TagResource',
  'UntagResource',
  'UpdateAlias',
  'UpdateKeyDescription',
];

/** The customer-managed key (rotated yearly) for experiment data, notifications and VPC flow logs. */
export function dataKey(scope: Construct): kms.Key {
  return new kms.Key(scope, 'Key', {
    description: 'rlvr-infra: experiment data, notifications and VPC flow logs',
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.RETAIN,
    // AWS's default key policy delegates to IAM with "kms:*"; this names the same key-level
    // actions explicitly (kms:PutKeyPolicy among them, so the account can always repair it).
    policy: new iam.PolicyDocument({
      statements: [
        new iam.PolicyStatement({
          sid: 'DelegateToIamInThisAccount',
          principals: [new iam.AccountRootPrincipal()],
          actions: KMS_KEY_ACTIONS.map((a) => `kms:${a}`),
          resources: ['*'], // in a key policy, "*" is this key
        }),
      ],
    }),
  });
}

/** Where the experiment bucket's server access logs go (SSE-S3: log delivery supports nothing else). */
export function accessLogBucket(scope: Construct): s3.Bucket {
  const logBucket = new s3.Bucket(scope, 'AccessLogs', {
    // Server access log delivery supports only SSE-S3 on the target bucket.
    encryption: s3.BucketEncryption.S3_MANAGED,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    versioned: true,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    removalPolicy: RemovalPolicy.RETAIN,
    lifecycleRules: [
      {
        id: 'expire-access-logs',
        expiration: Duration.days(365),
        noncurrentVersionExpiration: Duration.days(30),
      },
      { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
    ],
  });
  acknowledge(
    logBucket,
    'NIST.800.53.R5-S3DefaultEncryptionKMS',
    'S3 server access log delivery requires SSE-S3 on the destination bucket.',
  );
  acknowledge(
    logBucket,
    'NIST.800.53.R5-S3BucketReplicationEnabled',
    'Access logs are kept in the region they describe; replicating them adds cost without a recovery need.',
  );
  return logBucket;
}

/** The bucket every dataset, model, job file, checkpoint and output lives in. */
export function experimentBucket(
  scope: Construct,
  props: { readonly bucketName: string; readonly noncurrentVersionDays: number },
  logBucket: s3.IBucket,
  key: kms.IKey | undefined,
): s3.Bucket {
  const bucket = new s3.Bucket(scope, 'Bucket', {
    bucketName: props.bucketName,
    encryption: key ? s3.BucketEncryption.KMS : s3.BucketEncryption.S3_MANAGED,
    encryptionKey: key,
    bucketKeyEnabled: Boolean(key),
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    versioned: true,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    serverAccessLogsBucket: logBucket,
    serverAccessLogsPrefix: 'rlvr-bucket/',
    removalPolicy: RemovalPolicy.RETAIN,
    lifecycleRules: [
      // Parts of an upload that never completed (an interrupted `rlvr upload`, a killed submit, a job
      // stopped mid-checkpoint) are billed until aborted. 7 days: longer than any upload a person would
      // resume (a multi-GB checkpoint takes minutes to hours), short enough that a week's leftovers are
      // all that is ever paid for. The launcher aborts its own on failure and SIGINT; this catches the rest.
      { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
      {
        id: 'expire-noncurrent-versions',
        noncurrentVersionExpiration: Duration.days(props.noncurrentVersionDays),
      },
    ],
  });
  acknowledge(
    bucket,
    'NIST.800.53.R5-S3BucketReplicationEnabled',
    'Datasets and models are re-uploadable copies and checkpoints are working data; cross-region replication of multi-GB checkpoints would double storage cost. Versioning protects against deletion.',
  );
  if (!key) {
    acknowledge(
      bucket,
      'NIST.800.53.R5-S3DefaultEncryptionKMS',
      'S3-managed keys chosen by context (rlvr:customerManagedKey=false); objects are encrypted at rest.',
    );
  }
  return bucket;
}

/** The image repository: immutable content-hash tags, scanned on push, old images expired. */
export function imageRepository(
  scope: Construct,
  props: Pick<RlvrInfraProps, 'repositoryName' | 'untaggedImageExpiryDays' | 'keepTaggedImages'>,
): ecr.Repository {
  return new ecr.Repository(scope, 'Repository', {
    repositoryName: props.repositoryName,
    // Tags are content hashes: immutability costs nothing and pins every job to its bits.
    imageTagMutability: ecr.TagMutability.IMMUTABLE,
    imageScanOnPush: true,
    removalPolicy: RemovalPolicy.RETAIN,
    lifecycleRules: [
      {
        rulePriority: 1,
        description: `expire untagged images after ${props.untaggedImageExpiryDays} days`,
        tagStatus: ecr.TagStatus.UNTAGGED,
        maxImageAge: Duration.days(props.untaggedImageExpiryDays),
      },
      {
        rulePriority: 2,
        description: `keep the last ${props.keepTaggedImages} tagged images`,
        tagStatus: ecr.TagStatus.ANY,
        maxImageCount: props.keepTaggedImages,
      },
    ],
  });
}
