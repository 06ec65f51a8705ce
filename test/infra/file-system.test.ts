import { spawnSync } from 'node:child_process';
import type { CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import { Match } from 'aws-cdk-lib/assertions';
import { parseInfraProps } from '../../lib/infra/props';
import { SETTINGS_PARAMETER_NAME, SHARED_FILE_SYSTEM } from '../../lib/layout';
import { REQUIRED_SETTINGS, settingsObjectProblems } from '../../lib/settings/settings';
import { itWithPeer } from '../helpers/moto';
import {
  ACCOUNT,
  admittingStatements,
  createStatements,
  REGION,
  resolver,
  type Conditions,
  withFileSystemChannel,
} from './simulate';
import { FULL_CONTEXT, nagMismatches, synth, type Synthesized } from './synth';

/* The shared file system multi-host jobs mount (-c rlvr:sharedFileSystem=efs): what it is, who reaches it. */

type Resource = { Type: string; Properties: Record<string, unknown> };

const VPC_CONTEXT = { 'rlvr:vpc': true, 'rlvr:s3PrefixListId': 'pl-68a54001' };
const EFS_CONTEXT = { ...VPC_CONTEXT, 'rlvr:sharedFileSystem': 'efs' };
/** The stack that lets a job mounting the file system run without isolation. */
const EFS_ISOLATION_OPTIONAL = { ...EFS_CONTEXT, 'rlvr:sharedFileSystemIsolation': 'optional' };
const FILE_SYSTEM_KEYS = [
  'sagemaker:FileSystemId',
  'sagemaker:FileSystemType',
  'sagemaker:FileSystemAccessMode',
  'sagemaker:FileSystemDirectoryPath',
];

const resourcesOf = (s: Synthesized) => (s.json as { Resources: Record<string, Resource> }).Resources;
/** The logical id a `{Ref}` or `{Fn::GetAtt: [id, …]}` names. */
const referenced = (value: unknown) => {
  const v = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] } | undefined;
  return v?.Ref ?? v?.['Fn::GetAtt']?.[0];
};
const idOf = (s: Synthesized, type: string, prefix = '') => {
  const ids = Object.entries(resourcesOf(s))
    .filter(([id, r]) => r.Type === type && id.startsWith(prefix))
    .map(([id]) => id);
  expect(ids).toHaveLength(1);
  return ids[0];
};

/** Rules of `type` (inline on their group, or separate resources) on the group with this logical id. */
function rulesOf(
  s: Synthesized,
  groupId: string,
  direction: 'Ingress' | 'Egress',
): Record<string, unknown>[] {
  const resources = resourcesOf(s);
  const inline =
    (resources[groupId].Properties[`SecurityGroup${direction}`] as Record<string, unknown>[]) ?? [];
  const separate = Object.values(resources)
    .filter(
      (r) => r.Type === `AWS::EC2::SecurityGroup${direction}` && referenced(r.Properties.GroupId) === groupId,
    )
    .map((r) => r.Properties);
  return [...inline, ...separate];
}

describe('the shared file system (rlvr:sharedFileSystem=efs)', () => {
  let s: Synthesized;
  let fileSystemId: string;
  let jobGroupId: string;
  let efsGroupId: string;
  beforeAll(() => {
    s = synth(EFS_CONTEXT); // throws if any cdk-nag finding is left unacknowledged
    fileSystemId = idOf(s, 'AWS::EFS::FileSystem');
    jobGroupId = idOf(s, 'AWS::EC2::SecurityGroup', 'JobSecurityGroup');
    efsGroupId = idOf(s, 'AWS::EC2::SecurityGroup', 'FileSystemSecurityGroup');
  });

  it('is encrypted with the stack key, elastic, general purpose, to IA after 7 days and back on access, retained', () => {
    const keyId = idOf(s, 'AWS::KMS::Key');
    s.template.hasResource('AWS::EFS::FileSystem', {
      Properties: {
        Encrypted: true,
        KmsKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] },
        ThroughputMode: 'elastic',
        PerformanceMode: 'generalPurpose',
        LifecyclePolicies: [
          { TransitionToIA: 'AFTER_7_DAYS' },
          { TransitionToPrimaryStorageClass: 'AFTER_1_ACCESS' },
        ],
        // No policy requiring IAM: SageMaker mounts over NFS without IAM authentication.
        FileSystemPolicy: Match.absent(),
        BackupPolicy: Match.absent(),
      },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it("without the stack key, EFS's AWS-managed key (still encrypted)", () => {
    const sse = synth({ ...EFS_CONTEXT, 'rlvr:customerManagedKey': false });
    sse.template.hasResourceProperties('AWS::EFS::FileSystem', { Encrypted: true, KmsKeyId: Match.absent() });
  });

  it('has one mount target per isolated subnet, with its own security group', () => {
    const subnets = Object.entries(resourcesOf(s))
      .filter(([, r]) => r.Type === 'AWS::EC2::Subnet')
      .map(([id]) => id)
      .sort();
    expect(subnets).toHaveLength(2);
    const targets = Object.values(s.template.findResources('AWS::EFS::MountTarget'));
    expect(targets.map((t) => referenced(t.Properties.SubnetId)).sort()).toEqual(subnets);
    for (const t of targets) {
      expect(referenced(t.Properties.FileSystemId)).toBe(fileSystemId);
      expect(t.Properties.SecurityGroups).toEqual([{ 'Fn::GetAtt': [efsGroupId, 'GroupId'] }]);
    }
  });

  it('admits NFS (2049) from the job security group only, and sends nothing out', () => {
    expect(rulesOf(s, efsGroupId, 'Ingress')).toEqual([
      {
        IpProtocol: 'tcp',
        FromPort: 2049,
        ToPort: 2049,
        SourceSecurityGroupId: { 'Fn::GetAtt': [jobGroupId, 'GroupId'] },
        GroupId: { 'Fn::GetAtt': [efsGroupId, 'GroupId'] },
        Description: expect.stringMatching(/NFS from training jobs/),
      },
    ]);
    // allowAllOutbound false: CDK's placeholder rule that matches no traffic.
    expect(rulesOf(s, efsGroupId, 'Egress')).toEqual([
      expect.objectContaining({ CidrIp: '255.255.255.255/32', Description: 'Disallow all traffic' }),
    ]);
  });

  it("lets jobs out to it on 2049 (the job group's egress)", () => {
    const toEfs = rulesOf(s, jobGroupId, 'Egress').filter(
      (r) => referenced(r.DestinationSecurityGroupId) === efsGroupId,
    );
    expect(toEfs).toEqual([expect.objectContaining({ IpProtocol: 'tcp', FromPort: 2049, ToPort: 2049 })]);
  });

  it('has an access point rooted at the jobs folder, for clients other than jobs', () => {
    s.template.hasResourceProperties('AWS::EFS::AccessPoint', {
      FileSystemId: { Ref: fileSystemId },
      RootDirectory: {
        Path: `/${SHARED_FILE_SYSTEM.jobsFolder}`,
        CreationInfo: { OwnerUid: '0', OwnerGid: '0', Permissions: '750' },
      },
      PosixUser: { Uid: '0', Gid: '0' },
    });
    expect(SHARED_FILE_SYSTEM.jobsFolder).toBe('rlvr-jobs');
  });

  it('publishes fileSystemId in the launcher settings (valid for the launcher) and as an output', () => {
    const [parameter] = Object.values(
      s.template.findResources('AWS::SSM::Parameter', { Properties: { Name: SETTINGS_PARAMETER_NAME } }),
    );
    const value = parameter.Properties.Value as { 'Fn::Join': [string, unknown[]] };
    const parts = value['Fn::Join'][1];
    const at = parts.findIndex((p) => typeof p === 'string' && p.endsWith('"fileSystemId":"'));
    expect(parts[at + 1]).toEqual({ Ref: fileSystemId });
    // Resolved as a deployment would (a stand-in id per resource), the settings pass the launcher's checks.
    const settings = JSON.parse(resolver(s.json as never)(value) as string);
    expect(settings.fileSystemId).toMatch(/^fs-0{13}\d{4}$/);
    expect(settingsObjectProblems(settings)).toEqual([]);
    expect(REQUIRED_SETTINGS.filter((name) => settings[name] === undefined)).toEqual([]);
    expect(settingsObjectProblems({ ...settings, fileSystemId: 'fs-x' })).toEqual([
      'fileSystemId: a file system id like fs-0123456789abcdef0',
    ]);
    s.template.hasOutput('FileSystemId', { Value: { Ref: fileSystemId } });
  });

  it('leaves no cdk-nag finding unacknowledged, and its acknowledgements name real findings with reasons', () => {
    const { acks, unacknowledged, unfounded } = nagMismatches(EFS_CONTEXT);
    expect(unacknowledged).toEqual([]);
    expect(unfounded).toEqual([]);
    const onFileSystem = acks.filter((a) => a.key.startsWith('RlvrInfra/FileSystem '));
    expect(onFileSystem.map((a) => a.key)).toEqual(['RlvrInfra/FileSystem NIST.800.53.R5-EFSInBackupPlan']);
    expect(onFileSystem[0].reason).toMatch(/S3/);
  });

  const cfnLint = spawnSync('cfn-lint', ['--version'], { stdio: 'ignore' }).status === 0;
  itWithPeer('cfn-lint', cfnLint)('passes AWS cfn-lint', () => {
    const result = spawnSync('cfn-lint', [s.templatePath], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('is not made without the option', () => {
    const vpcOnly = synth(VPC_CONTEXT);
    vpcOnly.template.resourceCountIs('AWS::EFS::FileSystem', 0);
    vpcOnly.template.resourceCountIs('AWS::EFS::MountTarget', 0);
    expect(JSON.stringify(vpcOnly.json)).not.toContain('fileSystemId');
    expect(Object.keys(vpcOnly.template.findOutputs('FileSystemId'))).toEqual([]);
  });
});

/** A request the stack admits with network isolation, to which the cases below add a file-system channel. */
function baseRequest(first: Conditions): CreateTrainingJobRequest {
  const all = first['ForAllValues:StringEquals'];
  return {
    TrainingJobName: 'annotations-adhoc-test',
    RoleArn: `arn:aws:iam::${ACCOUNT}:role/RlvrInfra-ExecutionRole`,
    AlgorithmSpecification: { TrainingInputMode: 'File', TrainingImage: 'image' },
    EnableNetworkIsolation: true,
    // As the launcher's requests always ask for it (the stack requires it by default).
    EnableInterContainerTrafficEncryption: true,
    ResourceConfig: { InstanceType: 'ml.p4de.24xlarge', InstanceCount: 2, VolumeSizeInGB: 100 },
    StoppingCondition: { MaxRuntimeInSeconds: 3600 },
    OutputDataConfig: {
      S3OutputPath: `s3://b-${REGION}/out`,
      KmsKeyId: (first.ArnEquals as Record<string, string>)['sagemaker:OutputKmsKeyArn'],
    },
    VpcConfig: {
      Subnets: all['sagemaker:VpcSubnets'] as string[],
      SecurityGroupIds: all['sagemaker:VpcSecurityGroupIds'] as string[],
    },
    InputDataConfig: [],
  };
}

function withChannel(
  request: CreateTrainingJobRequest,
  source: Parameters<typeof withFileSystemChannel>[2],
  networkIsolation = request.EnableNetworkIsolation,
): CreateTrainingJobRequest {
  return withFileSystemChannel(request, 'fs-0000000000000000', source, networkIsolation);
}

describe("the submitter's CreateTrainingJob statements with the shared file system", () => {
  let s: Synthesized;
  let statements: Record<string, Conditions>;
  let fsId: string;
  beforeAll(() => {
    s = synth(EFS_ISOLATION_OPTIONAL);
    statements = createStatements(s);
    fsId = resolver(s.json as never)({ Ref: idOf(s, 'AWS::EFS::FileSystem') }) as string;
  });

  it('lets a job mount only the stack file system, its root, read-write (StringEqualsIfExists)', () => {
    expect(Object.keys(statements)).toEqual(['CreateOurTrainingJobs', 'CreateSharedFileSystemJobs']);
    const first = statements.CreateOurTrainingJobs;
    expect(first.StringEqualsIfExists).toEqual({
      'sagemaker:FileSystemId': fsId,
      'sagemaker:FileSystemType': 'EFS',
      'sagemaker:FileSystemAccessMode': 'rw',
      'sagemaker:FileSystemDirectoryPath': '/',
    });
    expect(first.Bool).toEqual({
      'sagemaker:NetworkIsolation': 'true',
      'sagemaker:InterContainerTrafficEncryption': 'true',
    });
    expect(first.Null).not.toHaveProperty(['sagemaker:FileSystemId']);
  });

  it('a second statement, otherwise the same, lets isolation be off only for a job that mounts it', () => {
    const first = statements.CreateOurTrainingJobs;
    const { StringEqualsIfExists: mount, ...rest } = first;
    expect(statements.CreateSharedFileSystemJobs).toEqual({
      ...rest,
      Bool: { ...rest.Bool, 'sagemaker:NetworkIsolation': 'false' },
      StringEquals: mount,
      Null: { ...first.Null, 'sagemaker:FileSystemId': 'false' },
    });
    expect(Object.keys(statements.CreateSharedFileSystemJobs.StringEquals).sort()).toEqual(
      [...FILE_SYSTEM_KEYS].sort(),
    );
  });

  it('admits and refuses requests as IAM would (the simulator, each statement on its own)', async () => {
    const base = baseRequest(statements.CreateOurTrainingJobs);
    const mount = { FileSystemId: fsId };
    const cases: [string, CreateTrainingJobRequest, string[]][] = [
      ['no file system, isolated', base, ['CreateOurTrainingJobs']],
      ['no file system, isolation off', { ...base, EnableNetworkIsolation: false }, []],
      ['the stack file system, isolated', withChannel(base, mount), ['CreateOurTrainingJobs']],
      [
        'the stack file system, isolation off',
        withChannel(base, mount, false),
        ['CreateSharedFileSystemJobs'],
      ],
      ['another file system, isolated', withChannel(base, { FileSystemId: 'fs-0123456789abcdef0' }), []],
      [
        'another file system, isolation off',
        withChannel(base, { FileSystemId: 'fs-0123456789abcdef0' }, false),
        [],
      ],
      [
        'the stack file system read-only',
        withChannel(base, { ...mount, FileSystemAccessMode: 'ro' }, false),
        [],
      ],
      [
        'a folder of it, not the root',
        withChannel(base, { ...mount, DirectoryPath: '/rlvr-jobs' }, false),
        [],
      ],
      ['as FSx for Lustre', withChannel(base, { ...mount, FileSystemType: 'FSxLustre' }, false), []],
    ];
    for (const [what, request, allowed] of cases)
      expect([what, await admittingStatements(s, request)]).toEqual([what, allowed]);
  });

  it("keeps the submitter policy within IAM's managed-policy size (6,144 characters) with every option on", () => {
    const full = synth(FULL_CONTEXT);
    const resources = (full.json as { Resources: Record<string, Resource> }).Resources;
    const id = Object.keys(resources).find((k) => k.startsWith('SubmitterPolicy'))!;
    const document = resolver(full.json as never)(resources[id].Properties.PolicyDocument);
    // Both CreateTrainingJob statements list the subnets: room for the subnets of a region's every AZ.
    expect(JSON.stringify(document).length).toBeLessThan(6144 - 600);
  });

  it('keeps inter-container encryption required in both statements when the stack asks for it', () => {
    const both = createStatements(
      synth({ ...EFS_ISOLATION_OPTIONAL, 'rlvr:interContainerTrafficEncryption': true }),
    );
    expect(both.CreateOurTrainingJobs.Bool).toEqual({
      'sagemaker:NetworkIsolation': 'true',
      'sagemaker:InterContainerTrafficEncryption': 'true',
    });
    expect(both.CreateSharedFileSystemJobs.Bool).toEqual({
      'sagemaker:NetworkIsolation': 'false',
      'sagemaker:InterContainerTrafficEncryption': 'true',
    });
  });

  it('by default (sharedFileSystemIsolation required) one statement: a job mounting it stays isolated', async () => {
    const required = synth(EFS_CONTEXT);
    const strict = createStatements(required);
    expect(Object.keys(strict)).toEqual(['CreateOurTrainingJobs']);
    const id = resolver(required.json as never)({ Ref: idOf(required, 'AWS::EFS::FileSystem') }) as string;
    const base = baseRequest(strict.CreateOurTrainingJobs);
    expect(await admittingStatements(required, withChannel(base, { FileSystemId: id }))).toEqual([
      'CreateOurTrainingJobs',
    ]);
    expect(await admittingStatements(required, withChannel(base, { FileSystemId: id }, false))).toEqual([]);
  });

  it('refuses sharedFileSystemIsolation without the file system, and a value off its list', () => {
    expect(() => synth({ ...VPC_CONTEXT, 'rlvr:sharedFileSystemIsolation': 'optional' })).toThrow(
      /rlvr:sharedFileSystemIsolation: applies to the shared file system/,
    );
    expect(() => synth({ ...EFS_CONTEXT, 'rlvr:sharedFileSystemIsolation': 'off' })).toThrow(
      /rlvr:sharedFileSystemIsolation/,
    );
  });

  it('with rlvr:networkIsolation=false, one statement (it admits jobs either way)', () => {
    const open = createStatements(synth({ ...EFS_CONTEXT, 'rlvr:networkIsolation': false }));
    expect(Object.keys(open)).toEqual(['CreateOurTrainingJobs']);
    expect(open.CreateOurTrainingJobs.Bool ?? {}).not.toHaveProperty(['sagemaker:NetworkIsolation']);
    expect(Object.keys(open.CreateOurTrainingJobs.StringEqualsIfExists).sort()).toEqual(
      [...FILE_SYSTEM_KEYS].sort(),
    );
  });

  it.each([
    ['default', {}],
    ['VPC', VPC_CONTEXT],
  ])(
    'without the option (%s), no job may mount any file system, and there is no second statement',
    async (_label, context) => {
      const synthesized = synth(context);
      const without = createStatements(synthesized);
      expect(Object.keys(without)).toEqual(['CreateOurTrainingJobs']);
      expect(without.CreateOurTrainingJobs.Null).toMatchObject({ 'sagemaker:FileSystemId': 'true' });
      expect(without.CreateOurTrainingJobs).not.toHaveProperty(['StringEqualsIfExists']);
      // A request this stack admits, but for a file-system channel: refused for the channel alone.
      const base = baseRequest(without.CreateOurTrainingJobs);
      expect(await admittingStatements(synthesized, base)).toEqual(['CreateOurTrainingJobs']);
      expect(await admittingStatements(synthesized, withChannel(base, {}))).toEqual([]);
    },
  );
});

describe('context for the shared file system', () => {
  it('defaults to none', () => {
    expect(parseInfraProps({}).sharedFileSystem).toBe('none');
    expect(parseInfraProps(EFS_CONTEXT).sharedFileSystem).toBe('efs');
  });

  it('refuses efs without the VPC, saying what to add', () => {
    expect(() => parseInfraProps({ 'rlvr:sharedFileSystem': 'efs' })).toThrow(
      'rlvr:sharedFileSystem: efs needs the job VPC (SageMaker mounts it through the job network): add -c rlvr:vpc=true -c rlvr:s3PrefixListId=pl-…',
    );
  });

  it('refuses an unknown file system', () => {
    expect(() => parseInfraProps({ ...VPC_CONTEXT, 'rlvr:sharedFileSystem': 'fsx' })).toThrow(
      /rlvr:sharedFileSystem: .*"none"\|"efs"/,
    );
  });
});
