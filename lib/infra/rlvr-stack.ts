import { Aws, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as ecr from 'aws-cdk-lib/aws-ecr';
import type * as efs from 'aws-cdk-lib/aws-efs';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import { BUILT_IN_TEMPLATES } from '../job-options';
import { S3Layout, SETTINGS_PARAMETER_NAME } from '../layout';
import { addCheckpointExpiry } from './checkpoint-expiry';
import { sharedFileSystem } from './file-system';
import { TrainingJobTemplate } from './job-template';
import { jobNetwork, type JobNetwork } from './network';
import { jobNotifications } from './notifications';
import type { RlvrInfraProps } from './props';
import { executionRole, imageBuildRole, submitterAccess, type JobResources } from './roles';
import { accessLogBucket, dataKey, experimentBucket, imageRepository } from './storage';

/**
 * Everything a job needs: the bucket and its prefixes, the image repository, the execution role, the
 * submitter policy (and role), the CI image-build role, optional VPC (and in it, optionally, the file
 * system multi-host jobs share), job notifications, job templates, and the launcher settings parameter.
 *
 * IAM statements are written out with explicit actions: CDK's grant methods add wildcard actions
 * (`s3:GetObject*`, `s3:List*`, `kms:ReEncrypt*`), which this stack must not have.
 *
 * Each part is built by a function in its own module, in the stack's scope (so logical IDs are the
 * constructs' ids): storage.ts (key, buckets, repository), checkpoint-expiry.ts, network.ts,
 * file-system.ts, roles.ts, notifications.ts. The order of the calls below is the order of the
 * template's resources.
 */
export class RlvrInfraStack extends Stack {
  readonly bucket: s3.Bucket;
  readonly repository: ecr.Repository;
  readonly executionRole: iam.Role;
  readonly submitterPolicy: iam.ManagedPolicy;
  readonly key?: kms.Key;
  readonly vpc?: ec2.Vpc;
  readonly jobSecurityGroup?: ec2.SecurityGroup;
  readonly fileSystem?: efs.FileSystem;
  readonly settingsParameter: ssm.StringParameter;

  constructor(scope: Construct, id: string, props: RlvrInfraProps & StackProps) {
    super(scope, id, props);
    // Mount targets named by their subnet, not their position: a change to the subnet list must not
    // replace every mount target of the shared file system (set before any child is added).
    this.node.setContext('@aws-cdk/aws-efs:mountTargetOrderInsensitiveLogicalId', true);
    // Keys in the bucket, spelled by the shared layout module (the bucket name does not matter here).
    const keys = new S3Layout('unused', props.rootPrefix);
    this.key = props.customerManagedKey ? dataKey(this) : undefined;
    this.bucket = experimentBucket(
      this,
      {
        bucketName: props.bucketName ?? `rlvr-experiments-${Aws.ACCOUNT_ID}-${Aws.REGION}`,
        noncurrentVersionDays: props.noncurrentVersionDays,
      },
      accessLogBucket(this),
      this.key,
    );
    if (props.checkpointExpiryDays > 0) {
      addCheckpointExpiry(this, {
        bucket: this.bucket,
        key: this.key,
        keys,
        days: props.checkpointExpiryDays,
      });
    }
    this.repository = imageRepository(this, props);
    const network = props.vpc
      ? jobNetwork(this, {
          maxAzs: props.vpcMaxAzs,
          key: this.key,
          bucket: this.bucket,
          // parseInfraProps requires it with the VPC.
          s3PrefixListId: props.s3PrefixListId!,
        })
      : undefined;
    this.vpc = network?.vpc;
    this.jobSecurityGroup = network?.jobSecurityGroup;
    // parseInfraProps refuses efs without the VPC.
    this.fileSystem =
      props.sharedFileSystem === 'efs' && network
        ? sharedFileSystem(this, network, this.key).fileSystem
        : undefined;

    const resources: JobResources = {
      bucket: this.bucket,
      keys,
      repository: this.repository,
      key: this.key,
      network,
      fileSystem: this.fileSystem,
    };
    this.executionRole = executionRole(this, resources);
    const submitter = submitterAccess(this, resources, this.executionRole, props);
    this.submitterPolicy = submitter.policy;
    const ciRole = props.githubRepository
      ? imageBuildRole(this, this.repository, { ...props, githubRepository: props.githubRepository })
      : undefined;
    const topic = jobNotifications(this, props, this.key);

    for (const [name, template] of Object.entries(BUILT_IN_TEMPLATES)) {
      new TrainingJobTemplate(this, `Template-${name}`, { templateName: name, template });
    }
    this.settingsParameter = this.launcherSettings(props, network);
    this.addOutputs(topic, submitter.role, ciRole);
  }

  /** The launcher settings parameter `rlvr submit` reads: where everything of this stack is. */
  private launcherSettings(props: RlvrInfraProps, network: JobNetwork | undefined): ssm.StringParameter {
    return new ssm.StringParameter(this, 'LauncherSettings', {
      parameterName: SETTINGS_PARAMETER_NAME,
      description: 'rlvr launcher settings (read by `rlvr submit`)',
      stringValue: this.toJsonString({
        bucket: this.bucket.bucketName,
        prefix: props.rootPrefix,
        roleArn: this.executionRole.roleArn,
        repositoryUri: this.repository.repositoryUri,
        region: Aws.REGION,
        jobNamePrefix: props.jobNamePrefix,
        ...(network
          ? {
              subnets: network.vpc.isolatedSubnets.map((s) => s.subnetId),
              securityGroups: [network.jobSecurityGroup.securityGroupId],
            }
          : {}),
        ...(this.key ? { kmsKeyId: this.key.keyArn } : {}),
        ...(this.fileSystem ? { fileSystemId: this.fileSystem.fileSystemId } : {}),
      }),
    });
  }

  private addOutputs(
    topic: sns.ITopic,
    submitterRole: iam.IRole | undefined,
    ciRole: iam.IRole | undefined,
  ): void {
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
    new CfnOutput(this, 'ExecutionRoleArn', { value: this.executionRole.roleArn });
    new CfnOutput(this, 'RepositoryUri', { value: this.repository.repositoryUri });
    new CfnOutput(this, 'SubmitterPolicyArn', { value: this.submitterPolicy.managedPolicyArn });
    new CfnOutput(this, 'SettingsParameter', { value: this.settingsParameter.parameterName });
    new CfnOutput(this, 'NotificationTopicArn', { value: topic.topicArn });
    if (submitterRole) new CfnOutput(this, 'SubmitterRoleArn', { value: submitterRole.roleArn });
    if (ciRole) new CfnOutput(this, 'ImageBuildRoleArn', { value: ciRole.roleArn });
    if (this.fileSystem) new CfnOutput(this, 'FileSystemId', { value: this.fileSystem.fileSystemId });
  }
}
