import { Aws, Duration } from 'aws-cdk-lib';
import type * as ecr from 'aws-cdk-lib/aws-ecr';
import type * as efs from 'aws-cdk-lib/aws-efs';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import {
  keyPattern,
  type S3Layout,
  SETTINGS_PARAMETER_NAME,
  SHARED_FILE_SYSTEM,
  TEMPLATE_PARAMETER_PREFIX,
  TRAINING_LOG_GROUP,
} from '../layout';
import type { JobNetwork } from './network';
import {
  ECR_PULL_ACTIONS,
  ECR_PUSH_ACTIONS,
  ecrLoginStatement,
  leastPrivilegePolicy,
  SCOPED_NETWORK_INTERFACE_ACTIONS,
  UNSCOPED_NETWORK_INTERFACE_ACTIONS,
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
  /** The file system multi-host jobs share (file-system.ts); only with the network. */
  readonly fileSystem?: efs.IFileSystem;
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

/**
 * The services the execution role's key use must come through (kms:ViaService, AWS KMS Developer Guide,
 * "kms:ViaService"): S3 (the bucket's SSE-KMS objects SageMaker reads and writes for the job) and SageMaker
 * (volumes and output), both in the stack's region. The job's credentials cannot call KMS directly.
 */
export const jobKeyServices = (): string[] => [
  `s3.${Aws.REGION}.amazonaws.com`,
  `sagemaker.${Aws.REGION}.amazonaws.com`,
];

function jobDataKeyStatement(key: kms.IKey): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: 'UseDataKeyThroughS3AndSageMaker',
    actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:DescribeKey'],
    resources: [key.keyArn],
    conditions: { StringEquals: { 'kms:ViaService': jobKeyServices() } },
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
      // No s3:DeleteObject: a job cannot remove checkpoints (its own or another job's). Expiry is the
      // lifecycle rules' and the checkpoint-expiry function's; AbortMultipartUpload only ends an
      // unfinished upload (an object that was never written).
      actions: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
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
    ...(key ? [jobDataKeyStatement(key)] : []),
    ...(network ? networkInterfaceStatements(network) : []),
  ];
}

const ec2Arn = (type: string, id: string) =>
  `arn:${Aws.PARTITION}:ec2:${Aws.REGION}:${Aws.ACCOUNT_ID}:${type}/${id}`;

/**
 * What SageMaker needs to place a VPC job's network interfaces, scoped by the EC2 service authorization
 * reference's resource types and condition keys (Service Authorization Reference, "Actions, resources,
 * and condition keys for Amazon EC2"): CreateNetworkInterface only in the stack's subnets with the job
 * security group; an interface may be created, shared with SageMaker (CreateNetworkInterfacePermission) or
 * deleted only when it is in the stack's VPC (ec2:Vpc) and subnets (ec2:Subnet). The describe actions and
 * DeleteNetworkInterfacePermission have no resource type (Resource "*", policy.ts).
 */
function networkInterfaceStatements({ vpc, jobSecurityGroup }: JobNetwork): iam.PolicyStatement[] {
  const subnets = vpc.isolatedSubnets.map((s) => ec2Arn('subnet', s.subnetId));
  return [
    new iam.PolicyStatement({
      sid: 'JobNetworkInterfacesInStackSubnets',
      actions: [...SCOPED_NETWORK_INTERFACE_ACTIONS.create],
      resources: [...subnets, ec2Arn('security-group', jobSecurityGroup.securityGroupId)],
    }),
    new iam.PolicyStatement({
      sid: 'JobNetworkInterfacesInStackVpc',
      actions: [...SCOPED_NETWORK_INTERFACE_ACTIONS.create, ...SCOPED_NETWORK_INTERFACE_ACTIONS.manage],
      resources: [ec2Arn('network-interface', '*')],
      conditions: {
        ArnEquals: { 'ec2:Vpc': ec2Arn('vpc', vpc.vpcId), 'ec2:Subnet': subnets },
      },
    }),
    new iam.PolicyStatement({
      sid: 'DescribeJobNetwork',
      actions: [...UNSCOPED_NETWORK_INTERFACE_ACTIONS.describe],
      resources: ['*'],
    }),
    new iam.PolicyStatement({
      sid: 'RevokeJobInterfacePermissions',
      actions: [...UNSCOPED_NETWORK_INTERFACE_ACTIONS.removePermission],
      resources: ['*'],
    }),
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
      'Objects under one fixed prefix of the stack bucket, streams of the training-job log group, or (VPC) network interfaces, only those in the stack VPC and subnets (ec2:Vpc, ec2:Subnet conditions): job names and interface ids are not known in advance.',
  });
  return role;
}

/** What the stack requires of every job it lets the submitter create. */
export type JobPolicy = Pick<
  RlvrInfraProps,
  | 'networkIsolation'
  | 'interContainerTrafficEncryption'
  | 'instanceTypes'
  | 'maxRuntimeHours'
  | 'sharedFileSystemIsolation'
>;

type Conditions = Record<string, Record<string, unknown>>;

/**
 * The conditions on sagemaker:CreateTrainingJob: what the launcher promises, enforced by IAM. Keys and
 * their types as the Service Authorization Reference defines them for CreateTrainingJob ("Actions,
 * resources, and condition keys for Amazon SageMaker AI",
 * https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsagemaker.html#amazonsagemaker-policy-keys):
 * - sagemaker:NetworkIsolation (Bool): EnableNetworkIsolation. Required true unless the stack opts out.
 * - sagemaker:VolumeKmsKeyArn, sagemaker:OutputKmsKeyArn (ARN): ResourceConfig.VolumeKmsKeyId and
 *   OutputDataConfig.KmsKeyId (the launcher gives the key's ARN, as these keys require). With the stack's
 *   key, both must be it; a request without one fails ArnEquals (an absent key matches no value). The
 *   reference lists only these for CreateTrainingJob: the older sagemaker:VolumeKmsKey/OutputKmsKey are
 *   deprecated, and a condition on a key the request no longer carries would refuse every job.
 * - sagemaker:InterContainerTrafficEncryption (Bool): EnableInterContainerTrafficEncryption. IAM sees no
 *   instance count, so when the stack asks for it every job must set it (it costs nothing on one instance).
 * - sagemaker:InstanceTypes (ArrayOfString): every instance type of the request, within the stack's list;
 *   ForAllValues passes an absent key, so Null requires it.
 * - sagemaker:MaxRuntimeInSeconds (Numeric): StoppingCondition.MaxRuntimeInSeconds, at most the ceiling.
 * - sagemaker:VpcSubnets, sagemaker:VpcSecurityGroupIds (ArrayOfString): with the VPC on, every job runs
 *   in the stack's subnets and security group (Null makes a job without any VPC config fail).
 * - sagemaker:FileSystemId, sagemaker:FileSystemType, sagemaker:FileSystemAccessMode,
 *   sagemaker:FileSystemDirectoryPath (String): a FileSystemDataSource channel's, absent when the request
 *   has none. Without the stack's file system, Null: no job mounts any file system. With it,
 *   StringEqualsIfExists: a job that mounts one mounts the stack's EFS, its root, read-write (the way
 *   jobs use it, SHARED_FILE_SYSTEM).
 */
export function createTrainingJobConditions(
  { key, network, fileSystem }: Pick<JobResources, 'key' | 'network' | 'fileSystem'>,
  policy: JobPolicy,
): Conditions {
  const conditions: Conditions = {
    'ForAllValues:StringEquals': { 'sagemaker:InstanceTypes': [...policy.instanceTypes] },
    NumericLessThanEquals: { 'sagemaker:MaxRuntimeInSeconds': String(policy.maxRuntimeHours * 3600) },
    Null: { 'sagemaker:InstanceTypes': 'false', 'sagemaker:MaxRuntimeInSeconds': 'false' },
  };
  const bools: Record<string, string> = {};
  if (policy.networkIsolation) bools['sagemaker:NetworkIsolation'] = 'true';
  if (policy.interContainerTrafficEncryption) bools['sagemaker:InterContainerTrafficEncryption'] = 'true';
  if (Object.keys(bools).length > 0) conditions.Bool = bools;
  if (key) {
    conditions.ArnEquals = { 'sagemaker:OutputKmsKeyArn': key.keyArn };
    // IfExists: instances with local storage (p4de, p5, g5, …) refuse a volume key, so requests for
    // them carry none; any volume key a request does carry must be the stack's.
    conditions.ArnEqualsIfExists = { 'sagemaker:VolumeKmsKeyArn': key.keyArn };
  }
  if (network) {
    conditions['ForAllValues:StringEquals']['sagemaker:VpcSubnets'] = network.vpc.isolatedSubnets.map(
      (s) => s.subnetId,
    );
    conditions['ForAllValues:StringEquals']['sagemaker:VpcSecurityGroupIds'] = [
      network.jobSecurityGroup.securityGroupId,
    ];
    Object.assign(conditions.Null, {
      'sagemaker:VpcSubnets': 'false',
      'sagemaker:VpcSecurityGroupIds': 'false',
    });
  }
  if (fileSystem) conditions.StringEqualsIfExists = stackFileSystemMount(fileSystem);
  else conditions.Null['sagemaker:FileSystemId'] = 'true';
  return conditions;
}

/** The file-system keys of a request that mounts the stack's file system as jobs do: its root, read-write. */
function stackFileSystemMount(fileSystem: efs.IFileSystem): Record<string, string> {
  return {
    'sagemaker:FileSystemId': fileSystem.fileSystemId,
    'sagemaker:FileSystemType': 'EFS',
    'sagemaker:FileSystemAccessMode': 'rw',
    'sagemaker:FileSystemDirectoryPath': SHARED_FILE_SYSTEM.directoryPath,
  };
}

/**
 * The conditions of the second CreateTrainingJob statement, when the stack has the shared file system,
 * requires network isolation (without isolation required, the first statement admits these jobs already)
 * and was deployed with `sharedFileSystemIsolation: optional`:
 * the first statement's, except that network isolation is off and the request must mount the stack's
 * file system (StringEquals, and Null false: the keys must be there). A job may turn isolation off only to
 * mount the shared file system: AWS does not document whether a file-system channel works with network
 * isolation, so the launcher lets such jobs turn it off deliberately. Undefined when there is no such
 * statement.
 */
export function sharedFileSystemJobConditions(
  resources: Pick<JobResources, 'key' | 'network' | 'fileSystem'>,
  policy: JobPolicy,
): Conditions | undefined {
  if (!resources.fileSystem || !policy.networkIsolation || policy.sharedFileSystemIsolation !== 'optional')
    return undefined;
  const conditions = createTrainingJobConditions(resources, policy);
  delete conditions.StringEqualsIfExists;
  conditions.Bool = { ...conditions.Bool, 'sagemaker:NetworkIsolation': 'false' };
  conditions.StringEquals = stackFileSystemMount(resources.fileSystem);
  conditions.Null['sagemaker:FileSystemId'] = 'false';
  return conditions;
}

/** CreateSharedFileSystemJobs, when the stack has one (sharedFileSystemJobConditions). */
function sharedFileSystemJobStatements(
  resources: JobResources,
  jobArn: string,
  policy: JobPolicy,
): iam.PolicyStatement[] {
  const conditions = sharedFileSystemJobConditions(resources, policy);
  if (!conditions) return [];
  return [
    new iam.PolicyStatement({
      sid: 'CreateSharedFileSystemJobs',
      actions: ['sagemaker:CreateTrainingJob'],
      resources: [jobArn],
      conditions,
    }),
  ];
}

/** The submitter's statements about jobs and images: create, stop and watch our jobs, push images. */
function submitterJobStatements(
  resources: JobResources,
  role: iam.IRole,
  jobNamePrefix: string,
  policy: JobPolicy,
): iam.PolicyStatement[] {
  const { repository } = resources;
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
      conditions: createTrainingJobConditions(resources, policy),
    }),
    ...sharedFileSystemJobStatements(resources, jobArn, policy),
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
  props: Pick<RlvrInfraProps, 'rootPrefix' | 'jobNamePrefix' | 'submitterPrincipalArns'> & JobPolicy,
): { policy: iam.ManagedPolicy; role: iam.Role | undefined } {
  const policy = leastPrivilegePolicy(scope, 'SubmitterPolicy', {
    description: 'rlvr researchers: submit and watch training jobs, push images, upload data',
    statements: [
      ...submitterJobStatements(resources, executionRole, props.jobNamePrefix, props),
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
