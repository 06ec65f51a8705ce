import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { S3Layout } from '../../lib/layout';
import { FEATURE_FLAGS } from '../../lib/infra/app';
import { jobNetwork } from '../../lib/infra/network';
import { parseInfraProps } from '../../lib/infra/props';
import { jobNotifications } from '../../lib/infra/notifications';
import { executionRole, imageBuildRole, submitterAccess, type JobResources } from '../../lib/infra/roles';
import { dataKey, experimentBucket, accessLogBucket, imageRepository } from '../../lib/infra/storage';

/** The job policy the stack gets by default. */
const JOB_POLICY = parseInfraProps({});

type Statement = { Sid?: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

/** A bare stack with the bucket, repository and (optionally) the key and VPC the role builders scope to. */
function parts(options: { key: boolean; vpc: boolean }): { stack: Stack; resources: JobResources } {
  const stack = new Stack(new App({ context: FEATURE_FLAGS }), 'Parts');
  const key = options.key ? dataKey(stack) : undefined;
  const bucket = experimentBucket(
    stack,
    { bucketName: 'b-test', noncurrentVersionDays: 7 },
    accessLogBucket(stack),
    key,
  );
  const repository = imageRepository(stack, {
    repositoryName: 'repo-test',
    untaggedImageExpiryDays: 7,
    keepTaggedImages: 10,
  });
  const network = options.vpc
    ? jobNetwork(stack, { maxAzs: 2, key, bucket, s3PrefixListId: 'pl-68a54001' })
    : undefined;
  return { stack, resources: { bucket, keys: new S3Layout('unused', 'root/'), repository, key, network } };
}

function policyStatements(stack: Stack, policyId: string): Statement[] {
  const template = Template.fromStack(stack).toJSON() as { Resources: Record<string, { Properties: never }> };
  const id = Object.keys(template.Resources).find((k) => k.startsWith(policyId))!;
  return (template.Resources[id].Properties as { PolicyDocument: { Statement: Statement[] } }).PolicyDocument
    .Statement;
}

describe('stack parts', () => {
  it('the execution role uses the key and places network interfaces only when the stack has them', () => {
    const plain = parts({ key: false, vpc: false });
    executionRole(plain.stack, plain.resources);
    const plainSids = policyStatements(plain.stack, 'ExecutionPolicy').map((s) => s.Sid);
    expect(plainSids).not.toContain('UseDataKeyThroughS3AndSageMaker');
    expect(plainSids).not.toContain('JobNetworkInterfacesInStackVpc');

    const full = parts({ key: true, vpc: true });
    executionRole(full.stack, full.resources);
    const sids = policyStatements(full.stack, 'ExecutionPolicy').map((s) => s.Sid);
    expect(sids).toEqual(
      expect.arrayContaining([
        'UseDataKeyThroughS3AndSageMaker',
        'JobNetworkInterfacesInStackSubnets',
        'JobNetworkInterfacesInStackVpc',
        'DescribeJobNetwork',
        'RevokeJobInterfacePermissions',
        'ReadInputs',
        'PullImage',
      ]),
    );
  });

  it('the submitter policy scopes to the root prefix and job-name prefix; a role only for named principals', () => {
    const { stack, resources } = parts({ key: false, vpc: false });
    const role = executionRole(stack, resources);
    const alone = submitterAccess(stack, resources, role, {
      ...JOB_POLICY,
      rootPrefix: 'root/',
      jobNamePrefix: 'team-a',
      submitterPrincipalArns: [],
    });
    expect(alone.role).toBeUndefined();
    const statements = policyStatements(stack, 'SubmitterPolicy');
    const list = statements.find((s) => s.Sid === 'ListExperimentData')!;
    expect(list.Condition).toEqual({ StringLike: { 's3:prefix': ['root/*'] } });
    const create = statements.find((s) => s.Sid === 'CreateOurTrainingJobs')!;
    expect(JSON.stringify(create.Resource)).toContain(':training-job/team-a-*');
    expect(Object.keys(create.Condition as object)).not.toContain('ArnEquals'); // no key, no key condition

    const other = parts({ key: false, vpc: true });
    const withRole = submitterAccess(
      other.stack,
      other.resources,
      executionRole(other.stack, other.resources),
      {
        ...JOB_POLICY,
        rootPrefix: 'root/',
        jobNamePrefix: 'team-a',
        submitterPrincipalArns: ['arn:aws:iam::123456789012:role/researcher'],
      },
    );
    expect(withRole.role).toBeDefined();
    Template.fromStack(other.stack).hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [Match.objectLike({ Principal: { AWS: 'arn:aws:iam::123456789012:role/researcher' } })],
      },
      ManagedPolicyArns: [Match.anyValue()],
    });
    const vpcCreate = policyStatements(other.stack, 'SubmitterPolicy').find(
      (s) => s.Sid === 'CreateOurTrainingJobs',
    )!;
    expect(vpcCreate.Condition).toMatchObject({ Null: { 'sagemaker:VpcSubnets': 'false' } });
  });

  it('the image-build role uses a given OIDC provider instead of creating one', () => {
    const { stack, resources } = parts({ key: false, vpc: false });
    imageBuildRole(stack, resources.repository, {
      githubRepository: 'acme/trainer',
      githubBranch: 'release',
      githubOidcProviderArn: 'arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com',
    });
    const template = Template.fromStack(stack);
    expect(Object.keys(template.findResources('AWS::IAM::OIDCProvider'))).toEqual([]);
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          Match.objectLike({
            Principal: {
              Federated: 'arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com',
            },
            Condition: {
              StringEquals: Match.objectLike({
                'token.actions.githubusercontent.com:sub': 'repo:acme/trainer:ref:refs/heads/release',
              }),
            },
          }),
        ],
      },
    });
  });

  it('job notifications encrypt the topic with the key and let EventBridge use it; without a key, none', () => {
    const withKey = parts({ key: true, vpc: false });
    jobNotifications(
      withKey.stack,
      { jobNamePrefix: 'p', notificationEmails: [], notificationHttpsEndpoints: [] },
      withKey.resources.key,
    );
    const t = Template.fromStack(withKey.stack);
    t.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    t.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'events.amazonaws.com' } })]),
      },
    });
    t.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { detail: { TrainingJobName: [{ prefix: 'p-' }] } },
    });

    const without = parts({ key: false, vpc: false });
    jobNotifications(
      without.stack,
      { jobNamePrefix: 'p', notificationEmails: ['a@example.com'], notificationHttpsEndpoints: [] },
      undefined,
    );
    const u = Template.fromStack(without.stack);
    u.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.absent() });
    u.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'a@example.com' });
  });
});
