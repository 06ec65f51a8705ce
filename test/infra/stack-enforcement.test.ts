import { parseInfraProps } from '../../lib/infra/props';
import { FULL_CONTEXT, synth, type Synthesized } from './synth';

/* Issue 19: what the stack itself enforces on jobs: key use, no deletes, the VPC's way out. */

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};

const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
const resourcesOf = (s: Synthesized) => (s.json as { Resources: Record<string, Resource> }).Resources;
function statementsOf(s: Synthesized, idPrefix: string): Statement[] {
  return Object.entries(resourcesOf(s))
    .filter(([id, r]) => id.startsWith(idPrefix) && r.Type === 'AWS::IAM::ManagedPolicy')
    .flatMap(([, r]) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}
const json = (v: unknown) => JSON.stringify(v);

describe('what the stack enforces on jobs', () => {
  let full: Synthesized;
  beforeAll(() => {
    full = synth(FULL_CONTEXT);
  });

  it('lets the execution role use the key only through S3 and SageMaker in the stack region', () => {
    const kms = statementsOf(full, 'ExecutionPolicy').filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('kms:')),
    );
    expect(kms).toHaveLength(1);
    expect(kms[0].Condition).toEqual({
      StringEquals: {
        'kms:ViaService': [
          { 'Fn::Join': ['', ['s3.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
          { 'Fn::Join': ['', ['sagemaker.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
        ],
      },
    });
  });

  it('gives the execution role no way to delete an object, only to abort its unfinished uploads', () => {
    const actions = statementsOf(full, 'ExecutionPolicy').flatMap((s) => asArray(s.Action));
    expect(actions.filter((a) => /^s3:Delete/.test(a))).toEqual([]);
    expect(actions).toContain('s3:AbortMultipartUpload');
    // The expiry function is the one that deletes checkpoints.
    expect(statementsOf(full, 'CheckpointExpiryPolicy').flatMap((s) => asArray(s.Action))).toContain(
      's3:DeleteObject',
    );
  });

  it('limits the S3 gateway endpoint to the stack bucket and the region ECR layer bucket', () => {
    const endpoint = Object.values(resourcesOf(full)).find(
      (r) => r.Type === 'AWS::EC2::VPCEndpoint' && r.Properties.VpcEndpointType === 'Gateway',
    )!;
    const statements = (endpoint.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
    const resources = statements.flatMap((s) => asArray(s.Resource)).map(json);
    expect(resources).toHaveLength(3);
    expect(resources.filter((r) => r.includes('"Bucket'))).toHaveLength(2); // the bucket and its objects
    expect(resources.filter((r) => r.includes('-starport-layer-bucket/*'))).toHaveLength(1);
    const layers = statements.find((s) => json(s.Resource).includes('starport'))!;
    expect(layers.Action).toBe('s3:GetObject');
    for (const s of statements) expect(asArray(s.Action).every((a) => !a.includes('*'))).toBe(true);
  });

  it('lets jobs out only to themselves, the interface endpoints, S3 and the shared file system (not 0.0.0.0/0)', () => {
    const resources = resourcesOf(full);
    const [groupId, group] = Object.entries(resources).find(([id]) => id.startsWith('JobSecurityGroup'))!;
    const inline = (group.Properties.SecurityGroupEgress as Record<string, unknown>[]) ?? [];
    const separate = Object.values(resources)
      .filter(
        (r) => r.Type === 'AWS::EC2::SecurityGroupEgress' && json(r.Properties.GroupId).includes(groupId),
      )
      .map((r) => r.Properties);
    const egress = [...inline, ...separate];
    expect(egress.map((e) => e.CidrIp ?? e.CidrIpv6).filter(Boolean)).toEqual([]);
    const to = (e: Record<string, unknown>) =>
      e.DestinationPrefixListId
        ? `prefix list ${e.DestinationPrefixListId}`
        : json(e.DestinationSecurityGroupId).includes(groupId)
          ? 'itself'
          : `group ${json(e.DestinationSecurityGroupId).match(/EndpointSecurityGroup|FileSystemSecurityGroup/)?.[0]}`;
    expect(egress.map((e) => `${to(e)} ${e.IpProtocol} ${e.FromPort ?? ''}`).sort()).toEqual([
      'group EndpointSecurityGroup tcp 443',
      'group FileSystemSecurityGroup tcp 2049',
      'itself -1 ',
      'prefix list pl-68a54001 tcp 443',
    ]);
  });

  it('scopes network-interface creation to the stack VPC, subnets and group; only look-ups on "*"', () => {
    const statements = statementsOf(full, 'ExecutionPolicy');
    const creates = statements.filter((s) => asArray(s.Action).includes('ec2:CreateNetworkInterface'));
    expect(creates).toHaveLength(2);
    for (const s of creates) expect(asArray(s.Resource)).not.toContain('*');
    const onInterfaces = creates.find((s) => json(s.Resource).includes(':network-interface/*'))!;
    expect(Object.keys(onInterfaces.Condition!.ArnEquals).sort()).toEqual(['ec2:Subnet', 'ec2:Vpc']);
    expect(json(onInterfaces.Condition!.ArnEquals['ec2:Vpc'])).toMatch(/:vpc\/.*"Ref":"Vpc/);
    const inSubnets = creates.find((s) => s !== onInterfaces)!;
    expect(
      asArray(inSubnets.Resource)
        .map(json)
        .filter((r) => r.includes(':subnet/')),
    ).toHaveLength(2);
    expect(
      asArray(inSubnets.Resource)
        .map(json)
        .filter((r) => r.includes(':security-group/')),
    ).toHaveLength(1);
    const onStar = statements
      .filter((s) => asArray(s.Resource).includes('*'))
      .flatMap((s) => asArray(s.Action));
    expect(onStar.filter((a) => a.startsWith('ec2:')).sort()).toEqual([
      'ec2:DeleteNetworkInterfacePermission',
      'ec2:DescribeDhcpOptions',
      'ec2:DescribeNetworkInterfaces',
      'ec2:DescribeSecurityGroups',
      'ec2:DescribeSubnets',
      'ec2:DescribeVpcs',
    ]);
  });

  it('aborts unfinished multipart uploads in the bucket after 7 days', () => {
    const bucket = Object.entries(resourcesOf(full)).find(([id]) => /^Bucket[0-9A-F]{8}$/.test(id))![1];
    const rules = (bucket.Properties.LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
    expect(rules).toContainEqual(
      expect.objectContaining({
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 },
        Status: 'Enabled',
      }),
    );
  });
});

describe('context for what the stack enforces', () => {
  it.each([
    [{ 'rlvr:vpc': true }, /rlvr:s3PrefixListId: required with rlvr:vpc=true/],
    [
      { 'rlvr:vpc': true, 'rlvr:s3PrefixListId': 'com.amazonaws.us-west-2.s3' },
      /rlvr:s3PrefixListId: a prefix-list id/,
    ],
    [{ 'rlvr:instanceTypes': 'p4de.24xlarge' }, /rlvr:instanceTypes: /],
    [{ 'rlvr:instanceTypes': [] }, /rlvr:instanceTypes: at least one instance type/],
    [{ 'rlvr:maxRuntimeHours': 673 }, /rlvr:maxRuntimeHours/],
    [{ 'rlvr:networkIsolation': 'off' }, /rlvr:networkIsolation/],
  ])('refuses %j', (context, message) => {
    expect(() => parseInfraProps(context)).toThrow(message);
  });

  it('defaults to network isolation, encrypted traffic between instances, the built-in instance types and 7 days', () => {
    expect(parseInfraProps({})).toMatchObject({
      networkIsolation: true,
      interContainerTrafficEncryption: true,
      instanceTypes: ['ml.g5.2xlarge', 'ml.p4de.24xlarge', 'ml.p5.48xlarge'],
      maxRuntimeHours: 168,
      sharedFileSystemIsolation: 'required',
    });
  });
});
