import { Aws, Duration } from 'aws-cdk-lib';
import type * as ecr from 'aws-cdk-lib/aws-ecr';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import {
  keyPattern,
  type S3Layout,
  SETTINGS_PARAMETER_NAME,
  TEMPLATE_PARAMETER_PREFIX,
  TRAINING_LOG_GROUP,
} from '../layout';
import type { JobNetwork } from './network';
import {
  ECR_PULL_ACTIONS,
  ECR_PUSH_ACTIONS,
  ecrLoginStatement,
  leastPrivilegePolicy,
  NETWORK_INTERFACE_ACTIONS,
} from './policy';
import type { RlvrInfraProps } from './props';

/** SageMaker publishes training metrics to this namespace; the execution role may write nowhere else. */
const SAGEMAKER_METRICS_NAMESPACE = '/aws/sagemaker/TrainingJobs';
const GITHUB_OIDC_HOST = 'token.actions.githubusercontent.com';

/** What the roles' statements are scoped to. */
export interface JobResources {
  readonly bucket: s3.IBucket;
  /** Keys in the bucket (the bucket name does not matter here). */
  readonly keys: S3Layout;
  readonly repository: ecr.IRepository;
  readonly key: kms.IKey | undefined;
  readonly network: JobNetwork | undefined;
}

/** Objects under `prefix` of the bucket. */
const objectsUnder = (bucket: s3.IBucket, prefix: string) => `${bucket.bucketArn}/${keyPattern(prefix)}`;
const trainingLogGroupArn = () =>
  `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:log-group:${TRAINING_LOG_GROUP}`;
/** An SSM parameter's ARN is this followed by its name (which starts with "/"). */
const parameterArnPrefix = () => `arn:${Aws.PARTITION}:ssm:${Aws.REGION}:${Aws.ACCOUNT_ID}:parameter`;

function useDataKeyStatement(key: kms.IKey): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: 'UseDataKey',
    actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:DescribeKey'],
    resources: [key.keyArn],
  });
}

function executionStatements({
  bucket,
  keys,
  repository,
  key,
  network,
}: JobResources): iam.PolicyStatement[] {
  const objects = (prefix: string) => objectsUnder(bucket, prefix);
  const logGroupArn = trainingLogGroupArn();
  return [
    new iam.PolicyStatement({
      sid: 'ListJobPrefixes',
      actions: ['s3:ListBucket'],
      resources: [bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': keys.topLevelPrefixes().map(keyPattern) } },
    }),
    new iam.PolicyStatement({
      sid: 'LocateBucket',
      actions: ['s3:GetBucketLocation'],
      resources: [bucket.bucketArn],
    }),
    new iam.PolicyStatement({
      sid: 'ReadInputs',
      actions: ['s3:GetObject'],
      resources: keys.jobInputPrefixes().map(objects),
    }),
    new iam.PolicyStatement({
      sid: 'StreamCheckpointsAndOutput',
      actions: [
        's3:GetObject',
        's3:PutObject',
        's3:DeleteObject',
        's3:AbortMultipartUpload',
        's3:ListMultipartUploadParts',
      ],
      resources: keys.jobOutputPrefixes().map(objects),
    }),
    new iam.PolicyStatement({
      sid: 'PullImage',
      actions: [...ECR_PULL_ACTIONS],
      resources: [repository.repositoryArn],
    }),
    ecrLoginStatement(),
    new iam.PolicyStatement({
      sid: 'CreateJobLogGroup',
      actions: ['logs:CreateLogGroup'],
      resources: [logGroupArn],
    }),
    new iam.PolicyStatement({
      sid: 'WriteJobLogs',
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
      resources: [`${logGroupArn}:log-stream:*`],
    }),
    new iam.PolicyStatement({
      sid: 'PublishSageMakerMetrics',
      actions: ['cloudwatch:PutMetricData'],
      resources: ['*'],
      conditions: { StringEquals: { 'cloudwatch:namespace': SAGEMAKER_METRICS_NAMESPACE } },
    }),
    ...(key ? [useDataKeyStatement(key)] : []),
    ...(network
      ? [
          new iam.PolicyStatement({
            sid: 'JobNetworkInterfaces',
            actions: [...NETWORK_INTERFACE_ACTIONS],
            resources: ['*'],
          }),
        ]
      : []),
  ];
}

/** The SageMaker execution role: read inputs, stream checkpoints, pull the image, write logs. */
export function executionRole(scope: Construct, resources: JobResources): iam.Role {
  const role = new iam.Role(scope, 'ExecutionRole', {
    description: 'rlvr training jobs: read inputs, stream checkpoints, pull the image, write logs',
    assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com').withConditions({
      StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
    }),
    maxSessionDuration: Duration.hours(12),
  });
  leastPrivilegePolicy(scope, 'ExecutionPolicy', {
    description: 'rlvr training jobs (the SageMaker execution role)',
    roles: [role],
    statements: executionStatements(resources),
    scopedWildcardReason:
      'Objects under one fixed prefix of the stack bucket (or streams of the training-job log group): job names are not known in advance.',
  });
  return role;
}

/** The submitter's statements about jobs and images: create, stop and watch our jobs, push images. */
function submitterJobStatements(
  { repository, network }: JobResources,
  role: iam.IRole,
  jobNamePrefix: string,
): iam.PolicyStatement[] {
  const jobArn = `arn:${Aws.PARTITION}:sagemaker:${Aws.REGION}:${Aws.ACCOUNT_ID}:training-job/${jobNamePrefix}-*`;
  return [
    new iam.PolicyStatement({
      sid: 'ManageOurTrainingJobs',
      actions: [
        'sagemaker:DescribeTrainingJob',
        'sagemaker:StopTrainingJob',
        'sagemaker:AddTags',
        'sagemaker:ListTags',
      ],
      resources: [jobArn],
    }),
    new iam.PolicyStatement({
      sid: 'CreateOurTrainingJobs',
      actions: ['sagemaker:CreateTrainingJob'],
      resources: [jobArn],
      // With the VPC on, every job must run in the stack's subnets and security group ("Null" makes
      // the condition fail for a job without any VPC config).
      conditions: network
        ? {
            'ForAllValues:StringEquals': {
              'sagemaker:VpcSubnets': network.vpc.isolatedSubnets.map((s) => s.subnetId),
              'sagemaker:VpcSecurityGroupIds': [network.jobSecurityGroup.securityGroupId],
            },
            Null: { 'sagemaker:VpcSubnets': 'false', 'sagemaker:VpcSecurityGroupIds': 'false' },
          }
        : undefined,
    }),
    new iam.PolicyStatement({
      sid: 'ListTrainingJobs',
      actions: ['sagemaker:ListTrainingJobs'],
      resources: ['*'],
    }),
    new iam.PolicyStatement({
      sid: 'PassExecutionRoleToSageMaker',
      actions: ['iam:PassRole'],
      resources: [role.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'sagemaker.amazonaws.com' } },
    }),
    new iam.PolicyStatement({
      sid: 'PushAndPullImages',
      // DescribeRepositories: `rlvr doctor` checks the repository exists.
      actions: [...ECR_PULL_ACTIONS, ...ECR_PUSH_ACTIONS, 'ecr:DescribeRepositories'],
      resources: [repository.repositoryArn],
    }),
    ecrLoginStatement(),
  ];
}

/** The submitter's statements about data, settings and logs: upload inputs, read results and logs. */
function submitterDataStatements(
  { bucket, keys }: JobResources,
  { rootPrefix: root, jobNamePrefix }: Pick<RlvrInfraProps, 'rootPrefix' | 'jobNamePrefix'>,
): iam.PolicyStatement[] {
  const objects = (prefix: string) => objectsUnder(bucket, prefix);
  const parameterArn = parameterArnPrefix();
  const logGroupArn = trainingLogGroupArn();
  return [
    new iam.PolicyStatement({
      sid: 'ListExperimentData',
      actions: ['s3:ListBucket'],
      resources: [bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [keyPattern(root)] } },
    }),
    new iam.PolicyStatement({
      sid: 'LocateBucket',
      actions: ['s3:GetBucketLocation'],
      resources: [bucket.bucketArn],
    }),
    new iam.PolicyStatement({
      sid: 'ReadExperimentData',
      actions: ['s3:GetObject'],
      resources: [objects(root)],
    }),
    new iam.PolicyStatement({
      sid: 'UploadInputsAndJobFiles',
      actions: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
      // The submitter uploads what the jobs read.
      resources: keys.jobInputPrefixes().map(objects),
    }),
    new iam.PolicyStatement({
      sid: 'RemoveFilesOfFailedSubmits',
      actions: ['s3:DeleteObject'],
      resources: [objects(keys.jobsPrefix())],
    }),
    new iam.PolicyStatement({
      sid: 'ReadLauncherSettings',
      actions: ['ssm:GetParameter'],
      resources: [
        `${parameterArn}${SETTINGS_PARAMETER_NAME}`,
        `${parameterArn}${TEMPLATE_PARAMETER_PREFIX}*`,
      ],
    }),
    new iam.PolicyStatement({
      sid: 'ReadJobLogStreams',
      actions: ['logs:DescribeLogStreams', 'logs:FilterLogEvents'],
      resources: [`${logGroupArn}:*`],
    }),
    new iam.PolicyStatement({
      sid: 'ReadJobLogEvents',
      actions: ['logs:GetLogEvents'],
      resources: [`${logGroupArn}:log-stream:${jobNamePrefix}-*`],
    }),
  ];
}

/** The submitter policy researchers attach (and a role with it, when principals are named). */
export function submitterAccess(
  scope: Construct,
  resources: JobResources,
  executionRole: iam.IRole,
  props: Pick<RlvrInfraProps, 'rootPrefix' | 'jobNamePrefix' | 'submitterPrincipalArns'>,
): { policy: iam.ManagedPolicy; role: iam.Role | undefined } {
  const policy = leastPrivilegePolicy(scope, 'SubmitterPolicy', {
    description: 'rlvr researchers: submit and watch training jobs, push images, upload data',
    statements: [
      ...submitterJobStatements(resources, executionRole, props.jobNamePrefix),
      ...submitterDataStatements(resources, props),
      ...(resources.key ? [useDataKeyStatement(resources.key)] : []),
    ],
    scopedWildcardReason:
      'Scoped to the job-name prefix, one prefix of the stack bucket, the template parameters or the training-job log group: job names and object keys are made per submit.',
  });
  if (props.submitterPrincipalArns.length === 0) return { policy, role: undefined };
  const role = new iam.Role(scope, 'SubmitterRole', {
    description: 'rlvr researchers: assume to submit and watch training jobs',
    assumedBy: new iam.CompositePrincipal(
      ...props.submitterPrincipalArns.map((arn) => new iam.ArnPrincipal(arn)),
    ),
    managedPolicies: [policy],
    maxSessionDuration: Duration.hours(12),
  });
  return { policy, role };
}

/** The role a GitHub workflow of `githubRepository` assumes (over OIDC) to push images. */
export function imageBuildRole(
  scope: Construct,
  repository: ecr.IRepository,
  props: Pick<RlvrInfraProps, 'githubOidcProviderArn' | 'githubBranch'> & {
    readonly githubRepository: string;
  },
): iam.Role {
  const providerArn =
    props.githubOidcProviderArn ??
    new iam.OidcProviderNative(scope, 'GithubOidc', {
      url: `https://${GITHUB_OIDC_HOST}`,
      clientIds: ['sts.amazonaws.com'],
    }).oidcProviderArn;
  const role = new iam.Role(scope, 'ImageBuildRole', {
    description: `CI image builds from ${props.githubRepository} (${props.githubBranch})`,
    assumedBy: new iam.FederatedPrincipal(
      providerArn,
      {
        StringEquals: {
          [`${GITHUB_OIDC_HOST}:aud`]: 'sts.amazonaws.com',
          [`${GITHUB_OIDC_HOST}:sub`]: `repo:${props.githubRepository}:ref:refs/heads/${props.githubBranch}`,
        },
      },
      'sts:AssumeRoleWithWebIdentity',
    ),
    // A large image push can take a while: longer than the 1 h default.
    maxSessionDuration: Duration.hours(2),
  });
  leastPrivilegePolicy(scope, 'ImageBuildPolicy', {
    description: 'CI image builds: push to the one repository',
    roles: [role],
    statements: [
      new iam.PolicyStatement({
        sid: 'PushImages',
        actions: [...ECR_PULL_ACTIONS, ...ECR_PUSH_ACTIONS],
        resources: [repository.repositoryArn],
      }),
      ecrLoginStatement(),
      // `rlvr image push` reads the repository URI from the launcher settings.
      new iam.PolicyStatement({
        sid: 'ReadLauncherSettings',
        actions: ['ssm:GetParameter'],
        resources: [`${parameterArnPrefix()}${SETTINGS_PARAMETER_NAME}`],
      }),
    ],
  });
  return role;
}
