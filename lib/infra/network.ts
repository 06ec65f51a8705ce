import { Aws, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { ecrLayerBucketName } from '../layout';
import { acknowledge } from './nag';
import { leastPrivilegePolicy } from './policy';

/** The VPC jobs run in (isolated subnets, no internet) and the security group every job uses. */
export interface JobNetwork {
  readonly vpc: ec2.Vpc;
  readonly jobSecurityGroup: ec2.SecurityGroup;
}

/** The flow-log group (with the key, when there is one) and the role VPC flow logs deliver with. */
function flowLogDelivery(scope: Construct, key: kms.IKey | undefined): ec2.FlowLogDestination {
  const flowLogGroup = new logs.LogGroup(scope, 'FlowLogs', {
    retention: logs.RetentionDays.ONE_YEAR,
    encryptionKey: key,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  if (key) {
    key.addToResourcePolicy(
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
  const flowLogRole = new iam.Role(scope, 'FlowLogRole', {
    description: 'VPC flow logs delivery to the flow-log group',
    assumedBy: new iam.ServicePrincipal('vpc-flow-logs.amazonaws.com').withConditions({
      StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
    }),
  });
  leastPrivilegePolicy(scope, 'FlowLogPolicy', {
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
  return ec2.FlowLogDestination.toCloudWatchLogs(flowLogGroup, flowLogRole.withoutPolicyUpdates());
}

/** What the job network is built around. */
export interface JobNetworkProps {
  readonly maxAzs: number;
  readonly key: kms.IKey | undefined;
  /** The stack's bucket: the only one (with ECR's layer bucket) the S3 endpoint reaches. */
  readonly bucket: s3.IBucket;
  /** The region's S3 managed prefix list: the job security group's egress to the S3 gateway endpoint. */
  readonly s3PrefixListId: string;
}

/** What goes through the S3 gateway endpoint: what the execution role does on the bucket, and ECR layers. */
const BUCKET_ACTIONS = [
  's3:GetBucketLocation',
  's3:ListBucket',
  's3:GetObject',
  's3:PutObject',
  's3:AbortMultipartUpload',
  's3:ListMultipartUploadParts',
];

/**
 * The S3 gateway endpoint's policy: the stack's bucket (the actions jobs need; IAM still decides who may
 * do them) and reading ECR's layer bucket in the region (image pulls), nothing else: a job cannot copy
 * data to another bucket through the endpoint, even with credentials that could write there.
 */
function s3EndpointPolicy(bucket: s3.IBucket): iam.PolicyStatement[] {
  return [
    new iam.PolicyStatement({
      sid: 'StackBucket',
      principals: [new iam.AnyPrincipal()],
      actions: BUCKET_ACTIONS,
      resources: [bucket.bucketArn, bucket.arnForObjects('*')],
    }),
    new iam.PolicyStatement({
      sid: 'EcrImageLayers',
      principals: [new iam.AnyPrincipal()],
      actions: ['s3:GetObject'],
      resources: [`arn:${Aws.PARTITION}:s3:::${ecrLayerBucketName(Aws.REGION)}/*`],
    }),
  ];
}

/** ECR and CloudWatch Logs interface endpoints, reachable over HTTPS from the job security group only. */
function addInterfaceEndpoints(scope: Construct, { vpc, jobSecurityGroup }: JobNetwork): ec2.SecurityGroup {
  const endpointSg = new ec2.SecurityGroup(scope, 'EndpointSecurityGroup', {
    vpc,
    description: 'rlvr VPC interface endpoints: HTTPS from jobs',
    allowAllOutbound: false,
  });
  endpointSg.addIngressRule(jobSecurityGroup, ec2.Port.tcp(443), 'HTTPS from training jobs');
  for (const [name, service] of [
    ['EcrApi', ec2.InterfaceVpcEndpointAwsService.ECR],
    ['EcrDocker', ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER],
    ['Logs', ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS],
  ] as const) {
    // open: false — the endpoint group above admits only the job security group.
    vpc.addInterfaceEndpoint(name, {
      service,
      securityGroups: [endpointSg],
      privateDnsEnabled: true,
      open: false,
    });
  }
  return endpointSg;
}

/**
 * The job security group: all traffic between the instances of a job (this group), HTTPS to the interface
 * endpoints (their group) and to S3 (the region's S3 prefix list, through the gateway endpoint); no other
 * egress (not 0.0.0.0/0).
 */
function jobSecurityGroupOf(scope: Construct, vpc: ec2.Vpc): ec2.SecurityGroup {
  const group = new ec2.SecurityGroup(scope, 'JobSecurityGroup', {
    vpc,
    description: 'rlvr training jobs: traffic between the instances of a job, and to VPC endpoints',
    allowAllOutbound: false,
  });
  group.connections.allowInternally(ec2.Port.allTraffic(), 'instances of a multi-node job');
  acknowledge(
    group,
    'NIST.800.53.R5-EC2RestrictedCommonPorts',
    'The only ingress is from this same group: the instances of one multi-node job (NCCL, Ray) use many ports between themselves.',
  );
  return group;
}

/** A VPC without internet for jobs: isolated subnets, flow logs, an S3 gateway and interface endpoints. */
export function jobNetwork(scope: Construct, props: JobNetworkProps): JobNetwork {
  const flowLogs = flowLogDelivery(scope, props.key);
  const vpc = new ec2.Vpc(scope, 'Vpc', {
    maxAzs: props.maxAzs,
    natGateways: 0,
    subnetConfiguration: [{ name: 'jobs', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 20 }],
    flowLogs: { all: { destination: flowLogs, trafficType: ec2.FlowLogTrafficType.ALL } },
    // Closing the default security group needs a Lambda-backed custom resource; jobs never use it.
    restrictDefaultSecurityGroup: false,
  });
  acknowledge(
    vpc,
    'NIST.800.53.R5-VPCDefaultSecurityGroupClosed',
    'Jobs run only in the stack security group; the default group has no attached resources. Closing it needs a Lambda custom resource this stack avoids.',
  );
  const s3Endpoint = vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3 });
  for (const statement of s3EndpointPolicy(props.bucket)) s3Endpoint.addToPolicy(statement);
  const jobSecurityGroup = jobSecurityGroupOf(scope, vpc);
  const endpointSg = addInterfaceEndpoints(scope, { vpc, jobSecurityGroup });
  jobSecurityGroup.addEgressRule(endpointSg, ec2.Port.tcp(443), 'HTTPS to the ECR and Logs endpoints');
  jobSecurityGroup.addEgressRule(
    ec2.Peer.prefixList(props.s3PrefixListId),
    ec2.Port.tcp(443),
    'HTTPS to S3 through the gateway endpoint',
  );
  return { vpc, jobSecurityGroup };
}
