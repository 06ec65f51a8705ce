import type { CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import type { Synthesized } from './synth';

/*
 * The submitter policy's CreateTrainingJob statements, read from a synthesized template with
 * CloudFormation values resolved as a deployment would make them, and IAM's evaluation of their
 * conditions against a request (the condition keys AWS defines for CreateTrainingJob).
 */

type Template = { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
type Statement = {
  Sid?: string;
  Action: string | string[];
  Condition?: Record<string, Record<string, unknown>>;
};
type Value = string | string[] | undefined;
export type Conditions = Record<string, Record<string, unknown>>;

export const REGION = 'us-west-2';
export const ACCOUNT = '123456789012';

/** CloudFormation values as a deployment would make them: deterministic stand-ins per resource. */
export function resolver(template: Template): (v: unknown) => unknown {
  const ids = Object.keys(template.Resources);
  const n = (id: string) => String(ids.indexOf(id)).padStart(4, '0');
  // What a Ref (and Fn::GetAtt of any attribute but Arn) gives, by resource type.
  const fake: Record<string, (id: string) => string> = {
    'AWS::KMS::Key': (id) => `arn:aws:kms:${REGION}:${ACCOUNT}:key/00000000-0000-0000-0000-00000000${n(id)}`,
    'AWS::EC2::Subnet': (id) => `subnet-0000000000000${n(id)}`,
    'AWS::EC2::SecurityGroup': (id) => `sg-0000000000000${n(id)}`,
    'AWS::EC2::VPC': (id) => `vpc-0000000000000${n(id)}`,
    'AWS::EFS::FileSystem': (id) => `fs-0000000000000${n(id)}`,
    'AWS::S3::Bucket': (id) => `rlvr-bucket-${n(id)}`,
    'AWS::ECR::Repository': () => 'rlvr-experiments',
    'AWS::IAM::Role': (id) => `RlvrInfra-${id}`,
  };
  // What Fn::GetAtt of Arn gives, where it is not the Ref's value.
  const arn: Record<string, (id: string) => string> = {
    'AWS::ECR::Repository': (id) =>
      `arn:aws:ecr:${REGION}:${ACCOUNT}:repository/${fake['AWS::ECR::Repository'](id)}`,
    'AWS::IAM::Role': (id) => `arn:aws:iam::${ACCOUNT}:role/${fake['AWS::IAM::Role'](id)}`,
  };
  const pseudo: Record<string, string> = {
    'AWS::Region': REGION,
    'AWS::AccountId': ACCOUNT,
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
  };
  const of = (id: string, attribute?: string) => {
    if (pseudo[id]) return pseudo[id];
    const type = template.Resources[id]?.Type;
    const make = (attribute === 'Arn' && arn[type]) || fake[type];
    if (!make) throw new Error(`no stand-in for ${id}`);
    return make(id);
  };
  const resolve = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(resolve);
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.Ref === 'string') return of(o.Ref);
      if (o['Fn::GetAtt']) return of(...(o['Fn::GetAtt'] as [string, string]));
      if (o['Fn::Join']) {
        const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
        return parts.map(resolve).join(sep);
      }
      if (o['Fn::Split']) {
        const [sep, text] = o['Fn::Split'] as [string, unknown];
        return (resolve(text) as string).split(sep);
      }
      if (o['Fn::Select']) {
        const [index, list] = o['Fn::Select'] as [number, unknown];
        return (resolve(list) as unknown[])[index];
      }
      return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, resolve(x)]));
    }
    return v;
  };
  return resolve;
}

/** The submitter policy's CreateTrainingJob statements by Sid, their conditions resolved. */
export function createStatements(s: Synthesized): Record<string, Conditions> {
  const template = s.json as Template;
  const policy = Object.entries(template.Resources).find(([id]) => id.startsWith('SubmitterPolicy'))![1];
  const statements = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
  const resolve = resolver(template);
  return Object.fromEntries(
    statements
      .filter((st) => [st.Action].flat().includes('sagemaker:CreateTrainingJob'))
      .map((st) => [st.Sid ?? '', resolve(st.Condition ?? {}) as Conditions]),
  );
}

/** The first CreateTrainingJob statement's conditions (CreateOurTrainingJobs), resolved. */
export function createConditions(s: Synthesized): Conditions {
  return Object.values(createStatements(s))[0];
}

/** The condition keys AWS defines for CreateTrainingJob, as a request sets them. */
function requestContext(r: CreateTrainingJobRequest): Record<string, Value> {
  const bool = (b: boolean | undefined) => (b === undefined ? undefined : String(b));
  const fileSystem = (r.InputDataConfig ?? []).find((c) => c.DataSource?.FileSystemDataSource)?.DataSource
    ?.FileSystemDataSource;
  return {
    'sagemaker:NetworkIsolation': bool(r.EnableNetworkIsolation),
    'sagemaker:InterContainerTrafficEncryption': bool(r.EnableInterContainerTrafficEncryption),
    'sagemaker:VolumeKmsKey': r.ResourceConfig?.VolumeKmsKeyId,
    'sagemaker:OutputKmsKey': r.OutputDataConfig?.KmsKeyId,
    'sagemaker:InstanceTypes': [
      ...(r.ResourceConfig?.InstanceType ? [r.ResourceConfig.InstanceType] : []),
      ...(r.ResourceConfig?.InstanceGroups ?? []).map((g) => g.InstanceType!),
    ],
    'sagemaker:MaxRuntimeInSeconds': r.StoppingCondition?.MaxRuntimeInSeconds?.toString(),
    'sagemaker:VpcSubnets': r.VpcConfig?.Subnets,
    'sagemaker:VpcSecurityGroupIds': r.VpcConfig?.SecurityGroupIds,
    'sagemaker:FileSystemId': fileSystem?.FileSystemId,
    'sagemaker:FileSystemType': fileSystem?.FileSystemType,
    'sagemaker:FileSystemAccessMode': fileSystem?.FileSystemAccessMode,
    'sagemaker:FileSystemDirectoryPath': fileSystem?.DirectoryPath,
  };
}

/** IAM's evaluation for the operators the stack uses; an unknown operator or key fails loudly. */
const OPERATORS: Record<string, (actual: Value, allowed: string[]) => boolean> = {
  Bool: (a, v) => typeof a === 'string' && v.includes(a.toLowerCase()),
  ArnEquals: (a, v) => typeof a === 'string' && v.includes(a),
  // IfExists: a key the request does not carry passes.
  ArnEqualsIfExists: (a, v) => a === undefined || (typeof a === 'string' && v.includes(a)),
  StringEquals: (a, v) => typeof a === 'string' && v.includes(a),
  StringEqualsIfExists: (a, v) => a === undefined || (typeof a === 'string' && v.includes(a)),
  NumericLessThanEquals: (a, v) => typeof a === 'string' && v.some((x) => Number(a) <= Number(x)),
  // ForAllValues: every value in the request is allowed (an absent or empty key passes).
  'ForAllValues:StringEquals': (a, v) => [a ?? []].flat().every((x) => v.includes(x)),
  Null: (a, v) => v.includes(String(a === undefined || (Array.isArray(a) && a.length === 0))),
};

/** The conditions a request breaks, as "Operator key" (empty: allowed). */
export function brokenConditions(conditions: Conditions, request: CreateTrainingJobRequest): string[] {
  const context = requestContext(request);
  const broken: string[] = [];
  for (const [operator, keys] of Object.entries(conditions)) {
    const test = OPERATORS[operator];
    if (!test) throw new Error(`no evaluator for ${operator}`);
    for (const [key, expected] of Object.entries(keys)) {
      if (!(key in context)) throw new Error(`no request value for ${key}`);
      if (!test(context[key], [expected as string | string[]].flat().map(String)))
        broken.push(`${operator} ${key}`);
    }
  }
  return broken;
}

/** Whether IAM allows the request: some statement's conditions all hold. */
export function allowedBy(
  statements: Record<string, Conditions>,
  request: CreateTrainingJobRequest,
): string[] {
  return Object.entries(statements)
    .filter(([, conditions]) => brokenConditions(conditions, request).length === 0)
    .map(([sid]) => sid);
}
