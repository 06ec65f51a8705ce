import { RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { SHARED_FILE_SYSTEM } from '../layout';
import { acknowledge } from './nag';
import type { JobNetwork } from './network';

/** NFS: the one port EFS mount targets listen on. */
const NFS_PORT = 2049;

/** The file system the hosts of a multi-host job share, and the access point for other clients. */
export interface SharedFileSystem {
  readonly fileSystem: efs.FileSystem;
  readonly securityGroup: ec2.SecurityGroup;
  readonly jobsAccessPoint: efs.AccessPoint;
}

/**
 * An EFS file system multi-host jobs mount as a FileSystemDataSource channel (the root, read-write, on
 * every host), in the job VPC's isolated subnets (one mount target each), reachable on NFS only from the
 * job security group.
 *
 * The execution role needs nothing for the mount: SageMaker mounts over NFS from the job's network
 * interfaces, without IAM authentication, so what admits a job is the network (the 2049 rule from the job
 * security group), not a policy. The submitter policy decides which jobs may mount it (roles.ts).
 */
export function sharedFileSystem(
  scope: Construct,
  { vpc, jobSecurityGroup }: JobNetwork,
  key: kms.IKey | undefined,
): SharedFileSystem {
  const securityGroup = new ec2.SecurityGroup(scope, 'FileSystemSecurityGroup', {
    vpc,
    description: 'rlvr shared file system: NFS from training jobs',
    allowAllOutbound: false,
  });
  securityGroup.addIngressRule(jobSecurityGroup, ec2.Port.tcp(NFS_PORT), 'NFS from training jobs');
  jobSecurityGroup.addEgressRule(securityGroup, ec2.Port.tcp(NFS_PORT), 'NFS to the shared file system');

  const fileSystem = new efs.FileSystem(scope, 'FileSystem', {
    vpc,
    vpcSubnets: { subnets: vpc.isolatedSubnets },
    securityGroup,
    encrypted: true,
    // Without the stack's key, EFS's AWS-managed key (aws/elasticfilesystem).
    kmsKey: key,
    performanceMode: efs.PerformanceMode.GENERAL_PURPOSE,
    // Elastic: billed per GB read and written, nothing for throughput while no job runs (only storage),
    // unlike provisioned throughput; and no burst credits to run out during a checkpoint write.
    throughputMode: efs.ThroughputMode.ELASTIC,
    lifecyclePolicy: efs.LifecyclePolicy.AFTER_7_DAYS,
    outOfInfrequentAccessPolicy: efs.OutOfInfrequentAccessPolicy.AFTER_1_ACCESS,
    // Like the bucket: deleting the stack must not delete what a running job is writing; removing the
    // file system is a deliberate act.
    removalPolicy: RemovalPolicy.RETAIN,
    enableAutomaticBackups: false,
    // Deliberate: SageMaker mounts the file system over NFS without IAM authentication, so a file-system
    // policy requiring IAM would refuse every job. The control is the network: only the job security
    // group reaches the mount targets (NFS_PORT, the rule above).
    allowAnonymousAccess: true,
  });
  acknowledge(
    fileSystem,
    'NIST.800.53.R5-EFSInBackupPlan',
    'Scratch data of running jobs: each job removes its folder when it ends and every result is in the S3 bucket (versioned), so there is nothing to restore from a backup.',
  );

  // Jobs mount the root (a FileSystemDataSource takes no access point) and keep to
  // <jobsFolder>/<job name>/. Other clients (a developer host inspecting a job) mount through this access
  // point and see the jobs' folders only, as root, as the jobs write them.
  const jobsAccessPoint = fileSystem.addAccessPoint('JobsAccessPoint', {
    path: `/${SHARED_FILE_SYSTEM.jobsFolder}`,
    createAcl: { ownerUid: '0', ownerGid: '0', permissions: '750' },
    posixUser: { uid: '0', gid: '0' },
  });
  return { fileSystem, securityGroup, jobsAccessPoint };
}
