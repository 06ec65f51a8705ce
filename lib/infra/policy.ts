import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { acknowledge, acknowledgeWildcardResources } from './nag';

/**
 * The network-interface actions that have resource types (network-interface, subnet, security-group) and
 * the ec2:Vpc / ec2:Subnet condition keys: roles.ts scopes them to the stack's VPC, subnets and group.
 */
export const SCOPED_NETWORK_INTERFACE_ACTIONS = {
  create: ['ec2:CreateNetworkInterface'],
  manage: ['ec2:CreateNetworkInterfacePermission', 'ec2:DeleteNetworkInterface'],
} as const;
/**
 * The ones with no resource type (Service Authorization Reference, Amazon EC2), on Resource "*": the
 * read-only look-ups, and the removal of a permission SageMaker was given on an interface.
 */
export const UNSCOPED_NETWORK_INTERFACE_ACTIONS = {
  describe: [
    'ec2:DescribeNetworkInterfaces',
    'ec2:DescribeVpcs',
    'ec2:DescribeDhcpOptions',
    'ec2:DescribeSubnets',
    'ec2:DescribeSecurityGroups',
  ],
  removePermission: ['ec2:DeleteNetworkInterfacePermission'],
} as const;
/** What SageMaker needs to place a job's network interfaces in the VPC (SageMaker Developer Guide, CreateTrainingJob execution role permissions). */
export const NETWORK_INTERFACE_ACTIONS = [
  ...SCOPED_NETWORK_INTERFACE_ACTIONS.create,
  ...SCOPED_NETWORK_INTERFACE_ACTIONS.manage,
  ...UNSCOPED_NETWORK_INTERFACE_ACTIONS.describe,
  ...UNSCOPED_NETWORK_INTERFACE_ACTIONS.removePermission,
] as const;

/**
 * The only actions a policy here may allow on Resource "*", each with why: AWS's service authorization
 * reference gives them no resource type to scope by.
 */
export const UNSCOPABLE_ACTIONS: Readonly<Record<string, string>> = {
  'ecr:GetAuthorizationToken':
    'no resource type (a login token is for the whole registry); it grants no image access by itself, which the repository-scoped ecr:* statements limit',
  'cloudwatch:PutMetricData': 'no resource type; limited by its cloudwatch:namespace condition',
  'sagemaker:ListTrainingJobs': 'list actions have no resource type',
  ...Object.fromEntries(
    UNSCOPED_NETWORK_INTERFACE_ACTIONS.describe.map((a) => [
      a,
      'read-only look-ups SageMaker makes to place a VPC job; no resource type',
    ]),
  ),
  'ec2:DeleteNetworkInterfacePermission':
    "no resource type; SageMaker's documented VPC permissions list it for the job's clean-up. It only revokes a permission on an interface (it grants no access), and creating interfaces and permissions is scoped to the stack VPC and subnets",
};

/** Pulling images from the one repository (the job, researchers, CI). */
export const ECR_PULL_ACTIONS = [
  'ecr:BatchCheckLayerAvailability',
  'ecr:GetDownloadUrlForLayer',
  'ecr:BatchGetImage',
] as const;
/** Pushing images to it (researchers, CI). */
export const ECR_PUSH_ACTIONS = [
  'ecr:DescribeImages',
  'ecr:InitiateLayerUpload',
  'ecr:UploadLayerPart',
  'ecr:CompleteLayerUpload',
  'ecr:PutImage',
] as const;

/** The registry login every image user needs: account-wide, so on Resource "*" (see UNSCOPABLE_ACTIONS). */
export function ecrLoginStatement(): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: 'EcrLogin',
    actions: ['ecr:GetAuthorizationToken'],
    resources: ['*'],
  });
}

export interface LeastPrivilegePolicyProps {
  readonly description: string;
  readonly statements: readonly iam.PolicyStatement[];
  readonly roles?: readonly iam.IRole[];
  /** Why the resources ending in a wildcard (prefixes, job-name patterns) are as narrow as they can be. */
  readonly scopedWildcardReason?: string;
}

const asArray = (v: unknown): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v as string]);

/**
 * A managed policy whose every Resource "*" is justified by the action, and whose cdk-nag IAM5
 * acknowledgements are written from the statements themselves, so a reason never drifts from what the
 * policy allows. A "*" on any other action fails synthesis.
 */
export function leastPrivilegePolicy(
  scope: Construct,
  id: string,
  props: LeastPrivilegePolicyProps,
): iam.ManagedPolicy {
  const onStar: string[] = [];
  const problems: string[] = [];
  const scoped: string[] = [];
  for (const statement of props.statements) {
    const json = statement.toStatementJson() as { Sid?: string; Action?: unknown; Resource?: unknown };
    const resources = asArray(json.Resource);
    if (resources.includes('*')) {
      for (const action of asArray(json.Action)) {
        const why = UNSCOPABLE_ACTIONS[action];
        if (why) onStar.push(`${action} (${json.Sid ?? 'no sid'}: ${why})`);
        else problems.push(`${id}: ${action} on Resource "*" — scope it to the resources it acts on`);
      }
    }
    scoped.push(...resources.filter((r) => r !== '*'));
  }
  if (problems.length > 0) throw new Error(`Policy too broad:\n  ${problems.join('\n  ')}`);
  const policy = new iam.ManagedPolicy(scope, id, {
    description: props.description,
    roles: props.roles ? [...props.roles] : undefined,
    statements: [...props.statements],
  });
  if (onStar.length > 0) {
    acknowledge(
      policy,
      'AwsSolutions-IAM5[Resource::*]',
      `Only actions AWS gives no resource type: ${onStar.join('; ')}.`,
    );
  }
  if (props.scopedWildcardReason) acknowledgeWildcardResources(policy, scoped, props.scopedWildcardReason);
  return policy;
}
