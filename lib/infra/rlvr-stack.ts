import { Aws, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BUILT_IN_TEMPLATES } from '../jobs/templates';
import {
  keyPattern,
  S3Layout,
  SETTINGS_PARAMETER_NAME,
  TEMPLATE_PARAMETER_PREFIX,
  TRAINING_LOG_GROUP,
} from '../layout';
import { TrainingJobTemplate } from './job-template';
import { acknowledge } from './nag';
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

/**
 * Everything a job needs: the bucket and its prefixes, the image repository, the execution role, the
 * submitter policy (and role), the CI image-build role, optional VPC, job notifications, job
 * templates, and the launcher settings parameter.
 *
 * IAM statements are written out with explicit actions: CDK's grant methods add wildcard actions
 * (`s3:GetObject*`, `s3:List*`, `kms:ReEncrypt*`), which this stack must not have.
 */
export class RlvrInfraStack extends Stack {
  readonly bucket: s3.Bucket;
  readonly repository: ecr.Repository;
  readonly executionRole: iam.Role;
  readonly submitterPolicy: iam.ManagedPolicy;
  readonly key?: kms.Key;
  readonly vpc?: ec2.Vpc;
  readonly jobSecurityGroup?: ec2.SecurityGroup;
  readonly settingsParameter: ssm.StringParameter;

  constructor(scope: Construct, id: string, props: RlvrInfraProps & StackProps) {
    super(scope, id, props);
    const bucketName = props.bucketName ?? `rlvr-experiments-${Aws.ACCOUNT_ID}-${Aws.REGION}`;
    const root = props.rootPrefix;
    // Keys in the bucket, spelled by the shared layout module (the bucket name does not matter here).
    const keys = new S3Layout('unused', root);

    // ---- Encryption key ------------------------------------------------------------------------
    if (props.customerManagedKey) {
      this.key = new kms.Key(this, 'Key', {
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

    // ---- Storage ---------------------------------------------------------------------------------
    const logBucket = new s3.Bucket(this, 'AccessLogs', {
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

    const lifecycleRules: s3.LifecycleRule[] = [
      { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
      {
        id: 'expire-noncurrent-versions',
        noncurrentVersionExpiration: Duration.days(props.noncurrentVersionDays),
      },
    ];
    this.bucket = new s3.Bucket(this, 'Bucket', {
      bucketName,
      encryption: this.key ? s3.BucketEncryption.KMS : s3.BucketEncryption.S3_MANAGED,
      encryptionKey: this.key,
      bucketKeyEnabled: Boolean(this.key),
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      versioned: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: logBucket,
      serverAccessLogsPrefix: 'rlvr-bucket/',
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules,
    });
    acknowledge(
      this.bucket,
      'NIST.800.53.R5-S3BucketReplicationEnabled',
      'Datasets and models are re-uploadable copies and checkpoints are working data; cross-region replication of multi-GB checkpoints would double storage cost. Versioning protects against deletion.',
    );
    if (!this.key) {
      acknowledge(
        this.bucket,
        'NIST.800.53.R5-S3DefaultEncryptionKMS',
        'S3-managed keys chosen by context (rlvr:customerManagedKey=false); objects are encrypted at rest.',
      );
    }

    if (props.checkpointExpiryDays > 0) this.addCheckpointExpiry(keys, props.checkpointExpiryDays);

    // ---- Image repository ------------------------------------------------------------------------
    this.repository = new ecr.Repository(this, 'Repository', {
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

    // ---- Optional VPC without internet ---------------------------------------------------------
    if (props.vpc) {
      const flowLogGroup = new logs.LogGroup(this, 'FlowLogs', {
        retention: logs.RetentionDays.ONE_YEAR,
        encryptionKey: this.key,
        removalPolicy: RemovalPolicy.RETAIN,
      });
      if (this.key) {
        this.key.addToResourcePolicy(
          new iam.PolicyStatement({
            principals: [new iam.ServicePrincipal(`logs.${Aws.REGION}.amazonaws.com`)],
            actions: ['kms:Encrypt', 'kms:Decrypt', 'kms:GenerateDataKey', 'kms:DescribeKey'],
            resources: ['*'], // in a key policy, "*" is this key
            conditions: {
              ArnLike: {
                'kms:EncryptionContext:aws:logs:arn': `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:*`,
              },
            },
          }),
        );
      } else {
        acknowledge(
          flowLogGroup,
          'NIST.800.53.R5-CloudWatchLogGroupEncrypted',
          'S3-managed keys chosen by context; CloudWatch encrypts log data at rest.',
        );
      }
      // Our own role with a managed policy: the construct's default role would get an inline policy.
      const flowLogRole = new iam.Role(this, 'FlowLogRole', {
        description: 'VPC flow logs delivery to the flow-log group',
        assumedBy: new iam.ServicePrincipal('vpc-flow-logs.amazonaws.com').withConditions({
          StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
        }),
      });
      leastPrivilegePolicy(this, 'FlowLogPolicy', {
        description: 'VPC flow logs delivery',
        roles: [flowLogRole],
        statements: [
          new iam.PolicyStatement({
            actions: ['logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
            resources: [`${flowLogGroup.logGroupArn}`],
          }),
        ],
        scopedWildcardReason: 'The streams of the one flow-log group.',
      });
      this.vpc = new ec2.Vpc(this, 'Vpc', {
        maxAzs: props.vpcMaxAzs,
        natGateways: 0,
        subnetConfiguration: [{ name: 'jobs', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 20 }],
        gatewayEndpoints: { S3: { service: ec2.GatewayVpcEndpointAwsService.S3 } },
        flowLogs: {
          all: {
            destination: ec2.FlowLogDestination.toCloudWatchLogs(
              flowLogGroup,
              flowLogRole.withoutPolicyUpdates(),
            ),
            trafficType: ec2.FlowLogTrafficType.ALL,
          },
        },
        // Closing the default security group needs a Lambda-backed custom resource; jobs never use it.
        restrictDefaultSecurityGroup: false,
      });
      acknowledge(
        this.vpc,
        'NIST.800.53.R5-VPCDefaultSecurityGroupClosed',
        'Jobs run only in the stack security group; the default group has no attached resources. Closing it needs a Lambda custom resource this stack avoids.',
      );
      this.jobSecurityGroup = new ec2.SecurityGroup(this, 'JobSecurityGroup', {
        vpc: this.vpc,
        description: 'rlvr training jobs: traffic between the instances of a job, and to VPC endpoints',
        allowAllOutbound: true,
      });
      this.jobSecurityGroup.connections.allowInternally(
        ec2.Port.allTraffic(),
        'instances of a multi-node job',
      );
      acknowledge(
        this.jobSecurityGroup,
        'NIST.800.53.R5-EC2RestrictedCommonPorts',
        'The only ingress is from this same group: the instances of one multi-node job (NCCL, Ray) use many ports between themselves.',
      );
      const endpointSg = new ec2.SecurityGroup(this, 'EndpointSecurityGroup', {
        vpc: this.vpc,
        description: 'rlvr VPC interface endpoints: HTTPS from jobs',
        allowAllOutbound: false,
      });
      endpointSg.addIngressRule(this.jobSecurityGroup, ec2.Port.tcp(443), 'HTTPS from training jobs');
      for (const [name, service] of [
        ['EcrApi', ec2.InterfaceVpcEndpointAwsService.ECR],
        ['EcrDocker', ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER],
        ['Logs', ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS],
      ] as const) {
        // open: false — the endpoint group above admits only the job security group.
        this.vpc.addInterfaceEndpoint(name, {
          service,
          securityGroups: [endpointSg],
          privateDnsEnabled: true,
          open: false,
        });
      }
    }

    // ---- SageMaker execution role ----------------------------------------------------------------
    this.executionRole = new iam.Role(this, 'ExecutionRole', {
      description: 'rlvr training jobs: read inputs, stream checkpoints, pull the image, write logs',
      assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com').withConditions({
        StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
      }),
      maxSessionDuration: Duration.hours(12),
    });
    const bucketArn = this.bucket.bucketArn;
    const objects = (prefix: string) => `${bucketArn}/${keyPattern(prefix)}`;
    const readPrefixes = keys.jobInputPrefixes();
    const writePrefixes = keys.jobOutputPrefixes();
    const logGroupArn = `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:log-group:${TRAINING_LOG_GROUP}`;
    const executionStatements = [
      new iam.PolicyStatement({
        sid: 'ListJobPrefixes',
        actions: ['s3:ListBucket'],
        resources: [bucketArn],
        conditions: { StringLike: { 's3:prefix': keys.topLevelPrefixes().map(keyPattern) } },
      }),
      new iam.PolicyStatement({
        sid: 'LocateBucket',
        actions: ['s3:GetBucketLocation'],
        resources: [bucketArn],
      }),
      new iam.PolicyStatement({
        sid: 'ReadInputs',
        actions: ['s3:GetObject'],
        resources: readPrefixes.map(objects),
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
        resources: writePrefixes.map(objects),
      }),
      new iam.PolicyStatement({
        sid: 'PullImage',
        actions: [...ECR_PULL_ACTIONS],
        resources: [this.repository.repositoryArn],
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
    ];
    if (this.key) {
      executionStatements.push(
        new iam.PolicyStatement({
          sid: 'UseDataKey',
          actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:DescribeKey'],
          resources: [this.key.keyArn],
        }),
      );
    }
    if (this.vpc) {
      executionStatements.push(
        new iam.PolicyStatement({
          sid: 'JobNetworkInterfaces',
          actions: [...NETWORK_INTERFACE_ACTIONS],
          resources: ['*'],
        }),
      );
    }
    leastPrivilegePolicy(this, 'ExecutionPolicy', {
      description: 'rlvr training jobs (the SageMaker execution role)',
      roles: [this.executionRole],
      statements: executionStatements,
      scopedWildcardReason:
        'Objects under one fixed prefix of the stack bucket (or streams of the training-job log group): job names are not known in advance.',
    });

    // ---- Submitter policy (and role) -------------------------------------------------------------
    const jobArn = `arn:${Aws.PARTITION}:sagemaker:${Aws.REGION}:${Aws.ACCOUNT_ID}:training-job/${props.jobNamePrefix}-*`;
    // The submitter uploads what the jobs read.
    const uploadPrefixes = keys.jobInputPrefixes();
    const parameterArn = `arn:${Aws.PARTITION}:ssm:${Aws.REGION}:${Aws.ACCOUNT_ID}:parameter`;
    const submitterStatements = [
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
        conditions: this.vpc
          ? {
              'ForAllValues:StringEquals': {
                'sagemaker:VpcSubnets': this.vpc.isolatedSubnets.map((s) => s.subnetId),
                'sagemaker:VpcSecurityGroupIds': [this.jobSecurityGroup!.securityGroupId],
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
        resources: [this.executionRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'sagemaker.amazonaws.com' } },
      }),
      new iam.PolicyStatement({
        sid: 'PushAndPullImages',
        // DescribeRepositories: `rlvr doctor` checks the repository exists.
        actions: [...ECR_PULL_ACTIONS, ...ECR_PUSH_ACTIONS, 'ecr:DescribeRepositories'],
        resources: [this.repository.repositoryArn],
      }),
      ecrLoginStatement(),
      new iam.PolicyStatement({
        sid: 'ListExperimentData',
        actions: ['s3:ListBucket'],
        resources: [bucketArn],
        conditions: { StringLike: { 's3:prefix': [keyPattern(root)] } },
      }),
      new iam.PolicyStatement({
        sid: 'LocateBucket',
        actions: ['s3:GetBucketLocation'],
        resources: [bucketArn],
      }),
      new iam.PolicyStatement({
        sid: 'ReadExperimentData',
        actions: ['s3:GetObject'],
        resources: [objects(root)],
      }),
      new iam.PolicyStatement({
        sid: 'UploadInputsAndJobFiles',
        actions: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
        resources: uploadPrefixes.map(objects),
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
        resources: [`${logGroupArn}:log-stream:${props.jobNamePrefix}-*`],
      }),
    ];
    if (this.key) {
      submitterStatements.push(
        new iam.PolicyStatement({
          sid: 'UseDataKey',
          actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:DescribeKey'],
          resources: [this.key.keyArn],
        }),
      );
    }
    this.submitterPolicy = leastPrivilegePolicy(this, 'SubmitterPolicy', {
      description: 'rlvr researchers: submit and watch training jobs, push images, upload data',
      statements: submitterStatements,
      scopedWildcardReason:
        'Scoped to the job-name prefix, one prefix of the stack bucket, the template parameters or the training-job log group: job names and object keys are made per submit.',
    });
    let submitterRole: iam.Role | undefined;
    if (props.submitterPrincipalArns.length > 0) {
      submitterRole = new iam.Role(this, 'SubmitterRole', {
        description: 'rlvr researchers: assume to submit and watch training jobs',
        assumedBy: new iam.CompositePrincipal(
          ...props.submitterPrincipalArns.map((arn) => new iam.ArnPrincipal(arn)),
        ),
        managedPolicies: [this.submitterPolicy],
        maxSessionDuration: Duration.hours(12),
      });
    }

    // ---- GitHub OIDC role for CI image builds ----------------------------------------------------
    let ciRole: iam.Role | undefined;
    if (props.githubRepository) {
      const providerArn =
        props.githubOidcProviderArn ??
        new iam.OidcProviderNative(this, 'GithubOidc', {
          url: `https://${GITHUB_OIDC_HOST}`,
          clientIds: ['sts.amazonaws.com'],
        }).oidcProviderArn;
      ciRole = new iam.Role(this, 'ImageBuildRole', {
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
      leastPrivilegePolicy(this, 'ImageBuildPolicy', {
        description: 'CI image builds: push to the one repository',
        roles: [ciRole],
        statements: [
          new iam.PolicyStatement({
            sid: 'PushImages',
            actions: [...ECR_PULL_ACTIONS, ...ECR_PUSH_ACTIONS],
            resources: [this.repository.repositoryArn],
          }),
          ecrLoginStatement(),
          // `rlvr image push` reads the repository URI from the launcher settings.
          new iam.PolicyStatement({
            sid: 'ReadLauncherSettings',
            actions: ['ssm:GetParameter'],
            resources: [`${parameterArn}${SETTINGS_PARAMETER_NAME}`],
          }),
        ],
      });
    }

    // ---- Job notifications -----------------------------------------------------------------------
    const topic = new sns.Topic(this, 'JobNotifications', {
      displayName: 'rlvr training job state changes',
      enforceSSL: true,
    });
    if (this.key) {
      // Set on the L1 resource: given to the L2, the EventBridge target would also grant itself
      // kms:GenerateDataKey* (a wildcard action); the explicit statement below is all it needs.
      (topic.node.defaultChild as sns.CfnTopic).kmsMasterKeyId = this.key.keyArn;
      // EventBridge publishes to the encrypted topic.
      this.key.addToResourcePolicy(
        new iam.PolicyStatement({
          principals: [new iam.ServicePrincipal('events.amazonaws.com')],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
          resources: ['*'], // in a key policy, "*" is this key
          conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } },
        }),
      );
    } else {
      acknowledge(
        topic,
        'AwsSolutions-SNS2',
        'EventBridge cannot publish to a topic encrypted with the AWS-managed SNS key; S3-managed keys were chosen by context.',
      );
      acknowledge(
        topic,
        'NIST.800.53.R5-SNSEncryptedKMS',
        'EventBridge cannot publish to a topic encrypted with the AWS-managed SNS key; S3-managed keys were chosen by context.',
      );
    }
    for (const email of props.notificationEmails)
      topic.addSubscription(new subscriptions.EmailSubscription(email));
    for (const url of props.notificationHttpsEndpoints)
      topic.addSubscription(new subscriptions.UrlSubscription(url));
    new events.Rule(this, 'JobStateChanges', {
      description: `SageMaker training jobs named ${props.jobNamePrefix}-* reaching an end state`,
      eventPattern: {
        source: ['aws.sagemaker'],
        detailType: ['SageMaker Training Job State Change'],
        detail: {
          TrainingJobName: events.Match.prefix(`${props.jobNamePrefix}-`),
          TrainingJobStatus: ['Completed', 'Failed', 'Stopped'],
        },
      },
      targets: [new targets.SnsTopic(topic)],
    });

    // ---- Job templates and launcher settings -----------------------------------------------------
    for (const [name, template] of Object.entries(BUILT_IN_TEMPLATES)) {
      new TrainingJobTemplate(this, `Template-${name}`, { templateName: name, template });
    }
    this.settingsParameter = new ssm.StringParameter(this, 'LauncherSettings', {
      parameterName: SETTINGS_PARAMETER_NAME,
      description: 'rlvr launcher settings (read by `rlvr submit`)',
      stringValue: this.toJsonString({
        bucket: this.bucket.bucketName,
        prefix: root,
        roleArn: this.executionRole.roleArn,
        repositoryUri: this.repository.repositoryUri,
        region: Aws.REGION,
        jobNamePrefix: props.jobNamePrefix,
        ...(this.vpc
          ? {
              subnets: this.vpc.isolatedSubnets.map((s) => s.subnetId),
              securityGroups: [this.jobSecurityGroup!.securityGroupId],
            }
          : {}),
        ...(this.key ? { kmsKeyId: this.key.keyArn } : {}),
      }),
    });

    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
    new CfnOutput(this, 'ExecutionRoleArn', { value: this.executionRole.roleArn });
    new CfnOutput(this, 'RepositoryUri', { value: this.repository.repositoryUri });
    new CfnOutput(this, 'SubmitterPolicyArn', { value: this.submitterPolicy.managedPolicyArn });
    new CfnOutput(this, 'SettingsParameter', { value: this.settingsParameter.parameterName });
    new CfnOutput(this, 'NotificationTopicArn', { value: topic.topicArn });
    if (submitterRole) new CfnOutput(this, 'SubmitterRoleArn', { value: submitterRole.roleArn });
    if (ciRole) new CfnOutput(this, 'ImageBuildRoleArn', { value: ciRole.roleArn });
  }

  /**
   * Expires intermediate checkpoints (`checkpoints/<job>/<run>_step<N>/`) after `days`, keeping every
   * `_final` and each job's newest step. S3 lifecycle filters match key prefixes only, so a daily
   * function does it; its code is inlined (no asset to upload).
   */
  private addCheckpointExpiry(keys: S3Layout, days: number): void {
    const checkpoints = keys.checkpointsRootPrefix();
    const logGroup = new logs.LogGroup(this, 'CheckpointExpiryLogs', {
      retention: logs.RetentionDays.THREE_MONTHS,
      encryptionKey: this.key,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new iam.Role(this, 'CheckpointExpiryRole', {
      description: 'Deletes expired intermediate checkpoints',
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    });
    const policy = leastPrivilegePolicy(this, 'CheckpointExpiryPolicy', {
      description: 'Expire intermediate checkpoints: list and delete under checkpoints/, write own logs',
      roles: [role],
      statements: [
        new iam.PolicyStatement({
          actions: ['s3:ListBucket'],
          resources: [this.bucket.bucketArn],
          conditions: { StringLike: { 's3:prefix': [keyPattern(checkpoints)] } },
        }),
        new iam.PolicyStatement({
          actions: ['s3:DeleteObject'],
          resources: [`${this.bucket.bucketArn}/${keyPattern(checkpoints)}`],
        }),
        new iam.PolicyStatement({
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resources: [`${logGroup.logGroupArn}`],
        }),
      ],
      scopedWildcardReason: 'Checkpoint folders under the one checkpoints/ prefix are made per job.',
    });
    const fn = new lambda.Function(this, 'CheckpointExpiry', {
      description: `Deletes intermediate checkpoints older than ${days} days (keeps _final and each job's newest)`,
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
        BUCKET: this.bucket.bucketName,
        CHECKPOINTS_PREFIX: checkpoints,
        EXPIRY_DAYS: String(days),
      },
    });
    // The construct makes the function depend on its role, which its Role GetAtt already does
    // (cfn-lint W3005); what matters is that the managed policy is attached before it runs.
    (fn.node.defaultChild as lambda.CfnFunction).addOverride('DependsOn', [
      this.getLogicalId(policy.node.defaultChild as iam.CfnManagedPolicy),
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
    new events.Rule(this, 'CheckpointExpirySchedule', {
      description: 'Daily expiry of intermediate checkpoints',
      schedule: events.Schedule.rate(Duration.days(1)),
      targets: [new targets.LambdaFunction(fn)],
    });
  }
}
