import { synth } from './synth';

type Resource = { Type: string; Properties: Record<string, unknown> };

/** The logical ids a `{Ref}` or `{Fn::GetAtt: [id, …]}` names. */
function referenced(value: unknown): string | undefined {
  const v = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] } | undefined;
  return v?.Ref ?? v?.['Fn::GetAtt']?.[0];
}

function resourcesOf(json: Record<string, unknown>): Record<string, Resource> {
  return (json as { Resources: Record<string, Resource> }).Resources;
}

describe('the job security group', () => {
  it('lets the instances of a multi-node job reach each other on every port (a rule from itself)', () => {
    const { json } = synth({ 'rlvr:vpc': true, 'rlvr:s3PrefixListId': 'pl-68a54001' });
    const resources = resourcesOf(json);
    const groups = Object.entries(resources).filter(
      ([id, r]) => r.Type === 'AWS::EC2::SecurityGroup' && id.startsWith('JobSecurityGroup'),
    );
    expect(groups).toHaveLength(1);
    const [groupId, group] = groups[0];
    const inline = ((group.Properties.SecurityGroupIngress as Record<string, unknown>[]) ?? []).map(
      (r): Record<string, unknown> => ({
        ...r,
        GroupId: { Ref: groupId },
      }),
    );
    const separate = Object.values(resources)
      .filter((r) => r.Type === 'AWS::EC2::SecurityGroupIngress')
      .map((r) => r.Properties);
    const onJobGroup = [...inline, ...separate].filter((r) => referenced(r.GroupId) === groupId);
    expect(onJobGroup).toEqual([
      expect.objectContaining({
        IpProtocol: '-1',
        SourceSecurityGroupId: expect.anything(),
        Description: expect.stringMatching(/multi-node job/),
      }),
    ]);
    expect(referenced(onJobGroup[0].SourceSecurityGroupId)).toBe(groupId);
    // No other source: nothing from outside the group, no CIDR.
    expect(onJobGroup.some((r) => r.CidrIp !== undefined || r.CidrIpv6 !== undefined)).toBe(false);
  });

  it('is not made without the VPC', () => {
    const resources = resourcesOf(synth({}).json);
    expect(Object.keys(resources).filter((id) => id.startsWith('JobSecurityGroup'))).toEqual([]);
    expect(Object.values(resources).filter((r) => r.Type === 'AWS::EC2::SecurityGroupIngress')).toEqual([]);
  });
});
