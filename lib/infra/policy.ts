import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { acknowledge, acknowledgeWildcardResources } from './nag';

/** What SageMaker needs to place a job's network interfaces in the VPC. */
export const NETWORK_INTERFACE_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:CreateNetworkInterfacePermission',
  'ec2:DeleteNetworkInterface',
  'ec2:DeleteNetworkInterfacePermission',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeVpcs',
  'ec2:DescribeDhcpOptions',
  'ec2:DescribeSubnets',
  'ec2:DescribeSecurityGroups',
] as const;

/**
 * The only actions a policy here may allow on Resource "*", each with why: AWS's service authorization
 * reference gives them no resource type to scope by (for the network-interface actions: none that
 * exists when SageMaker makes the request).
 */
export const UNSCOPABLE_ACTIONS: Readonly<Record<string, string>> = {
  'ecr:GetAuthorizationToken':
    'no resource type (a login token is for the whole registry); it grants no image access by itself, which the repository-scoped ecr:* statements limit',
  'cloudwatch:PutMetricData': 'no resource type; limited by its cloudwatch:namespace condition',
  'sagemaker:ListTrainingJobs': 'list actions have no resource type',
  ...Object.fromEntries(
    NETWORK_INTERFACE_ACTIONS.map((a) => [
      a,
      'SageMaker places the job in the VPC; no resource type to scope by',
    ]),
  ),
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
