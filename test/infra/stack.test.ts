import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tempDir } from '../helpers/fixtures';
import { Match } from 'aws-cdk-lib/assertions';
import { jobTemplateSchema } from '../../lib/config';
import { Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { leastPrivilegePolicy, NETWORK_INTERFACE_ACTIONS } from '../../lib/infra/policy';
import { parseInfraProps } from '../../lib/infra/props';
import { BUILT_IN_TEMPLATES } from '../../lib/job-options';
import { SETTINGS_PARAMETER_NAME } from '../../lib/layout';
import { expiryFunctionCode } from '../../lib/infra/checkpoint-expiry';
import { FULL_CONTEXT, nagMismatches, synth, type Synthesized } from './synth';
import { itWithPeer } from '../helpers/moto';

type Statement = {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, unknown>;
  Sid?: string;
};

function policyStatements(json: Record<string, unknown>): { resource: string; statement: Statement }[] {
  const out: { resource: string; statement: Statement }[] = [];
  const resources = json.Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>;
  for (const [id, r] of Object.entries(resources)) {
    const docs: unknown[] = [];
    if (r.Type === 'AWS::IAM::ManagedPolicy' || r.Type === 'AWS::IAM::Policy')
      docs.push(r.Properties.PolicyDocument);
    if (r.Type === 'AWS::IAM::Role')
      for (const p of (r.Properties.Policies as { PolicyDocument: unknown }[]) ?? [])
        docs.push(p.PolicyDocument);
    for (const doc of docs)
      for (const s of (doc as { Statement: Statement[] }).Statement) out.push({ resource: id, statement: s });
  }
  return out;
}

const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);

/** Actions AWS offers no resource-level permissions for. */
const UNSCOPABLE = new Set([
  'ecr:GetAuthorizationToken',
  'cloudwatch:PutMetricData',
  'sagemaker:ListTrainingJobs',
  ...NETWORK_INTERFACE_ACTIONS,
]);

describe.each([
  ['default', {}],
  ['every option on', FULL_CONTEXT],
])('the stack (%s)', (_label, context) => {
  let synthesized: Synthesized;
  beforeAll(() => {
    synthesized = synth(context); // throws if any cdk-nag finding is left unacknowledged
  });

  it('has no unacknowledged cdk-nag finding (AwsSolutions, NIST 800-53 R5), and every acknowledgement names a real finding', () => {
    const { findings, acks, unacknowledged, unfounded } = nagMismatches(context);
    expect(findings.length).toBeGreaterThan(0);
    expect(unacknowledged).toEqual([]);
    expect(unfounded).toEqual([]);
    for (const a of acks) expect(a.reason.length).toBeGreaterThan(30);

    // Every Resource "*" is acknowledged on its policy with a reason that names each action allowed there.
    for (const { resource, statement } of policyStatements(synthesized.json)) {
      if (statement.Effect !== 'Allow' || !asArray(statement.Resource).includes('*')) continue;
      const ack = acks.find(
        (a) =>
          a.key.endsWith(' AwsSolutions-IAM5[Resource::*]') && resource.startsWith(a.key.split(/[/ ]/)[1]),
      );
      expect(ack).toBeDefined();
      for (const action of asArray(statement.Action)) expect(ack!.reason).toContain(action);
    }
  });

  const cfnLint = spawnSync('cfn-lint', ['--version'], { stdio: 'ignore' }).status === 0;
  itWithPeer('cfn-lint', cfnLint)('passes AWS cfn-lint', () => {
    const result = spawnSync('cfn-lint', [synthesized.templatePath], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('has no IAM Allow statement with a wildcard action, and Resource "*" only for actions AWS cannot scope', () => {
    const statements = policyStatements(synthesized.json).filter((s) => s.statement.Effect === 'Allow');
    expect(statements.length).toBeGreaterThan(10);
    for (const { resource, statement } of statements) {
      for (const action of asArray(statement.Action)) expect(`${resource} ${action}`).not.toMatch(/\*/);
      if (asArray(statement.Resource).includes('*')) {
        for (const action of asArray(statement.Action))
          expect(UNSCOPABLE.has(action) ? action : `${resource} ${action} on *`).toBe(action);
        if (asArray(statement.Action).includes('cloudwatch:PutMetricData')) {
          expect(statement.Condition).toEqual({
            StringEquals: { 'cloudwatch:namespace': '/aws/sagemaker/TrainingJobs' },
          });
        }
      }
    }
  });

  it('has no Allow with a wildcard action in resource policies either (key, bucket, topic policies)', () => {
    const resources = synthesized.json.Resources as Record<
      string,
      { Type: string; Properties: Record<string, unknown> }
    >;
    const docs = Object.entries(resources).flatMap(([id, r]) =>
      [r.Properties?.KeyPolicy, r.Properties?.PolicyDocument]
        .filter(Boolean)
        .map((d) => ({ id, doc: d as { Statement: Statement[] } })),
    );
    expect(docs.some((d) => resources[d.id].Type === 'AWS::KMS::Key')).toBe(true);
    for (const { id, doc } of docs) {
      for (const s of doc.Statement.filter((st) => st.Effect === 'Allow')) {
        for (const action of asArray(s.Action)) expect(`${id} ${action}`).not.toMatch(/\*/);
      }
    }
  });

  it('lets the submitter pass only the execution role, only to SageMaker', () => {
    const passRole = policyStatements(synthesized.json).filter((s) =>
      asArray(s.statement.Action).includes('iam:PassRole'),
    );
    expect(passRole).toHaveLength(1);
    expect(passRole[0].statement.Resource).toEqual({
      'Fn::GetAtt': [expect.stringMatching(/^ExecutionRole/), 'Arn'],
    });
    expect(passRole[0].statement.Condition).toEqual({
      StringEquals: { 'iam:PassedToService': 'sagemaker.amazonaws.com' },
    });
  });

  it('scopes S3 access to the prefixes of the layout', () => {
    const prefixesOf = (policy: RegExp, action: string) =>
      policyStatements(synthesized.json)
        .filter((s) => policy.test(s.resource) && asArray(s.statement.Action).includes(action))
        .flatMap((s) => asArray(s.statement.Resource))
        .map((r) => JSON.stringify(r).match(/\/(rlvr-experiments\/[a-z]*\/?)\*/)?.[1])
        .sort();
    expect(prefixesOf(/^ExecutionPolicy/, 's3:PutObject')).toEqual([
      'rlvr-experiments/checkpoints/',
      'rlvr-experiments/output/',
    ]);
    expect(prefixesOf(/^ExecutionPolicy/, 's3:GetObject')).toEqual(
      ['checkpoints', 'curricula', 'datasets', 'jobs', 'models', 'output', 'source'].map(
        (p) => `rlvr-experiments/${p}/`,
      ),
    );
    expect(prefixesOf(/^SubmitterPolicy/, 's3:PutObject')).toEqual(
      ['curricula', 'datasets', 'jobs', 'models', 'source'].map((p) => `rlvr-experiments/${p}/`),
    );
    expect(prefixesOf(/^SubmitterPolicy/, 's3:GetObject')).toEqual(['rlvr-experiments/']);
    expect(prefixesOf(/^SubmitterPolicy/, 's3:DeleteObject')).toEqual(['rlvr-experiments/jobs/']);
  });

  it('scopes training-job actions to the job-name prefix', () => {
    const creates = policyStatements(synthesized.json).filter((s) =>
      asArray(s.statement.Action).includes('sagemaker:CreateTrainingJob'),
    );
    // The second statement: jobs that mount the shared file system (with isolation off).
    expect(creates.map((c) => c.statement.Sid)).toEqual(
      (context as Record<string, unknown>)['rlvr:sharedFileSystemIsolation'] === 'optional'
        ? ['CreateOurTrainingJobs', 'CreateSharedFileSystemJobs']
        : ['CreateOurTrainingJobs'],
    );
    for (const create of creates)
      expect(JSON.stringify(create.statement.Resource)).toMatch(/:training-job\/annotations-adhoc-\*"/);
  });

  it('secures the buckets: public access blocked, TLS enforced, encryption, versioning, lifecycle', () => {
    const t = synthesized.template;
    t.resourcePropertiesCountIs(
      'AWS::S3::Bucket',
      {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        VersioningConfiguration: { Status: 'Enabled' },
      },
      2,
    );
    t.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          { ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms' }, BucketKeyEnabled: true },
        ],
      },
      LoggingConfiguration: { DestinationBucketName: Match.anyValue(), LogFilePrefix: 'rlvr-bucket/' },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 }, Status: 'Enabled' }),
          Match.objectLike({ NoncurrentVersionExpiration: { NoncurrentDays: 7 }, Status: 'Enabled' }),
        ]),
      },
    });
    const policies = t.findResources('AWS::S3::BucketPolicy');
    expect(Object.keys(policies)).toHaveLength(2);
    for (const p of Object.values(policies)) {
      expect(p.Properties.PolicyDocument.Statement).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            Effect: 'Deny',
            Action: 's3:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      );
    }
    t.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
  });

  it('makes image tags immutable, scans on push, and expires old images', () => {
    synthesized.template.hasResourceProperties('AWS::ECR::Repository', {
      RepositoryName: 'rlvr-experiments',
      ImageTagMutability: 'IMMUTABLE',
      ImageScanningConfiguration: { ScanOnPush: true },
      LifecyclePolicy: {
        LifecyclePolicyText: Match.stringLikeRegexp(
          '"tagStatus":"untagged".*"countType":"sinceImagePushed","countNumber":7',
        ),
      },
    });
  });

  it('publishes the launcher settings and every job template, valid for the launcher', () => {
    const params = synthesized.template.findResources('AWS::SSM::Parameter');
    const byName = Object.fromEntries(
      Object.values(params).map((p) => [p.Properties.Name, p.Properties.Value]),
    );
    expect(Object.keys(byName)).toEqual(
      expect.arrayContaining([
        SETTINGS_PARAMETER_NAME,
        ...Object.keys(BUILT_IN_TEMPLATES).map((n) => `/rlvr-infra/templates/${n}`),
      ]),
    );
    for (const name of Object.keys(BUILT_IN_TEMPLATES)) {
      expect(jobTemplateSchema.safeParse(JSON.parse(byName[`/rlvr-infra/templates/${name}`])).success).toBe(
        true,
      );
    }
    const settings = JSON.stringify(byName[SETTINGS_PARAMETER_NAME]);
    const keys = ['bucket', 'prefix', 'roleArn', 'repositoryUri', 'region', 'kmsKeyId'];
    if ('rlvr:sharedFileSystem' in context) keys.push('fileSystemId');
    for (const key of keys) expect(settings).toContain(`\\"${key}\\"`);
  });

  it('notifies on training jobs of our prefix reaching an end state, through an encrypted topic', () => {
    synthesized.template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.sagemaker'],
        'detail-type': ['SageMaker Training Job State Change'],
        detail: {
          TrainingJobName: [{ prefix: 'annotations-adhoc-' }],
          TrainingJobStatus: ['Completed', 'Failed', 'Stopped'],
        },
      },
    });
    synthesized.template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
  });

  it('notifies when a job is interrupted and restarted (spot, retries), saying where to see the resumed step', () => {
    const rules = synthesized.template.findResources('AWS::Events::Rule', {
      Properties: {
        EventPattern: {
          source: ['aws.sagemaker'],
          'detail-type': ['SageMaker Training Job State Change'],
          detail: {
            TrainingJobName: [{ prefix: 'annotations-adhoc-' }],
            TrainingJobStatus: ['InProgress'],
            SecondaryStatus: ['Interrupted', 'Restarting'],
          },
        },
      },
    });
    const [rule] = Object.values(rules) as {
      Properties: { Targets: { InputTransformer: { InputTemplate: string } }[] };
    }[];
    expect(rule.Properties.Targets[0].InputTransformer.InputTemplate).toMatch(
      /resumes from its newest complete checkpoint: rlvr status shows the attempts and the step it resumed from/,
    );
  });
});

describe('optional features', () => {
  let full: Synthesized;
  beforeAll(() => {
    full = synth(FULL_CONTEXT);
  });

  it('trusts only the configured GitHub repository and branch, for sts.amazonaws.com', () => {
    full.template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          {
            Action: 'sts:AssumeRoleWithWebIdentity',
            Effect: 'Allow',
            Principal: { Federated: Match.anyValue() },
            Condition: {
              StringEquals: {
                'token.actions.githubusercontent.com:aud': 'sts.amazonaws.com',
                'token.actions.githubusercontent.com:sub': 'repo:acme/grpo-trainer:ref:refs/heads/main',
              },
            },
          },
        ],
      },
      MaxSessionDuration: 7200,
    });
  });

  it('forces every job into the stack subnets and security group when the VPC is on', () => {
    const create = policyStatements(full.json).find((s) =>
      asArray(s.statement.Action).includes('sagemaker:CreateTrainingJob'),
    )!;
    expect(create.statement.Condition).toMatchObject({
      'ForAllValues:StringEquals': {
        'sagemaker:VpcSubnets': [expect.anything(), expect.anything()],
        'sagemaker:VpcSecurityGroupIds': [expect.anything()],
      },
      Null: { 'sagemaker:VpcSubnets': 'false', 'sagemaker:VpcSecurityGroupIds': 'false' },
    });
  });

  it('builds a VPC without internet: isolated subnets, S3 gateway, ECR and Logs interface endpoints, flow logs', () => {
    const t = full.template;
    t.resourceCountIs('AWS::EC2::InternetGateway', 0);
    t.resourceCountIs('AWS::EC2::NatGateway', 0);
    t.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      VpcEndpointType: 'Gateway',
      ServiceName: Match.objectLike({}),
    });
    const interfaces = Object.values(
      t.findResources('AWS::EC2::VPCEndpoint', { Properties: { VpcEndpointType: 'Interface' } }),
    );
    expect(
      interfaces
        .map((e) => JSON.stringify(e.Properties.ServiceName).match(/\.(ecr\.api|ecr\.dkr|logs)/)?.[1])
        .sort(),
    ).toEqual(['ecr.api', 'ecr.dkr', 'logs']);
    t.hasResourceProperties('AWS::EC2::FlowLog', {
      TrafficType: 'ALL',
      LogDestinationType: 'cloud-watch-logs',
    });
    t.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 365, KmsKeyId: Match.anyValue() });
    t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      IpProtocol: '-1',
      SourceSecurityGroupId: Match.anyValue(),
    });
  });

  it('expires intermediate checkpoints daily when asked', () => {
    full.template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { CHECKPOINTS_PREFIX: 'rlvr-experiments/checkpoints/', EXPIRY_DAYS: '14' } },
      // The handler bundled with lib/layout (its checkpoint-folder rule), inlined.
      Code: { ZipFile: expiryFunctionCode() },
    });
    full.template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 day)' });
  });

  it('subscribes the notification addresses', () => {
    full.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ml-team@example.com',
    });
    full.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'https',
      Endpoint: 'https://hooks.example.com/rlvr',
    });
  });

  it('uses S3-managed keys when asked, and says why nag findings are acknowledged then', () => {
    const sse = synth({ 'rlvr:customerManagedKey': false });
    sse.template.resourceCountIs('AWS::KMS::Key', 0);
    sse.template.hasResourceProperties('AWS::S3::Bucket', {
      BucketName: Match.anyValue(),
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
    });
    // Every optional feature with S3-managed keys synthesizes too (the expiry function's log group
    // once failed the NIST pack there).
    const all = synth({ ...FULL_CONTEXT, 'rlvr:customerManagedKey': false });
    all.template.resourceCountIs('AWS::KMS::Key', 0);
    all.template.resourceCountIs('AWS::Lambda::Function', 1);
  });
});

describe('least-privilege policies', () => {
  it('refuse Resource "*" for an action that can be scoped', () => {
    const stack = new Stack();
    expect(() =>
      leastPrivilegePolicy(stack, 'TooBroad', {
        description: 'x',
        statements: [
          new PolicyStatement({
            sid: 'Read',
            actions: ['s3:GetObject', 'ecr:GetAuthorizationToken'],
            resources: ['*'],
          }),
        ],
      }),
    ).toThrow(/TooBroad: s3:GetObject on Resource "\*" — scope it/);
  });
});

describe('context validation', () => {
  it('reports every bad context value at once', () => {
    expect(() =>
      parseInfraProps({
        'rlvr:vpc': 'maybe',
        'rlvr:githubRepository': 'not a repo',
        'rlvr:bucketNmae': 'x',
        'rlvr:notificationEmails': 'nope',
      }),
    ).toThrow(
      /rlvr:bucketNmae: unknown context key[\s\S]*rlvr:vpc[\s\S]*rlvr:githubRepository: owner\/name[\s\S]*rlvr:notificationEmails/,
    );
  });
});

describe('cdk synth', () => {
  it('works offline with no AWS credentials, from cdk.json', () => {
    const out = tempDir('rlvr-synth-');
    execFileSync('npx', ['cdk', 'synth', '--no-notices', '-q', '-o', out], {
      env: {
        PATH: process.env.PATH!,
        HOME: '/nonexistent-home',
        AWS_EC2_METADATA_DISABLED: 'true',
        CI: 'true',
      },
      encoding: 'utf8',
      stdio: 'pipe',
    });
    expect(fs.existsSync(`${out}/RlvrInfra.template.json`)).toBe(true);
  });
});
