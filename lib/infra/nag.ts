import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/*
 * Acknowledgements name the exact finding. IAM5 findings are named after the flattened resource
 * (`Resource::<Bucket.Arn>/rlvr-experiments/datasets/*`); cdk-nag's own flattenCfnReference is not
 * exported, so this mirrors it (cdk-nag 3.0, src/utils/flatten-cfn-reference.ts).
 */
function flatten(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/}/g, '>');
  const n = node as Record<string, unknown>;
  if (n['Fn::Join']) {
    const [delimiter, items] = n['Fn::Join'] as [string, unknown[]];
    return items.map(flatten).join(delimiter);
  }
  if (n['Fn::Sub']) return flatten(n['Fn::Sub']);
  if (n['Fn::GetAtt']) {
    const [resource, attribute] = n['Fn::GetAtt'] as [unknown, unknown];
    return `<${flatten(resource)}.${flatten(attribute)}>`;
  }
  if (n['Fn::ImportValue']) return flatten(n['Fn::ImportValue']);
  if (n.Ref) return `<${flatten(n.Ref)}>`;
  return JSON.stringify(node);
}

/** Acknowledges `AwsSolutions-IAM5` for each wildcard resource, one exact finding each. */
export function acknowledgeWildcardResources(
  construct: IConstruct,
  resources: readonly string[],
  reason: string,
): void {
  const stack = Stack.of(construct);
  for (const resource of resources) {
    const flat = flatten(stack.resolve(resource));
    if (flat.includes('*')) {
      Validations.of(construct).acknowledge({ id: `AwsSolutions-IAM5[Resource::${flat}]`, reason });
    }
  }
}

export function acknowledge(construct: IConstruct, id: string, reason: string): void {
  Validations.of(construct).acknowledge({ id, reason });
}
