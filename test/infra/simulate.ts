import type { CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import { runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import type { Synthesized } from './synth';
import { SHARED_FILE_SYSTEM } from '../../lib/layout';
import { fileSystemChannel } from '../../lib/submission';

/*
 * The synthesized template's policy documents, with CloudFormation values resolved as a deployment would
 * make them, and requests against them evaluated by @cloud-copilot/iam-simulate (a test-only
 * devDependency: an IAM policy simulator that validates policies, actions, resource ARNs and the condition
 * keys AWS defines for each action, from the Service Authorization Reference).
 */

type Resource = { Type: string; Properties: Record<string, unknown> };
type Template = { Resources: Record<string, Resource> };
type Statement = {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};
export type PolicyDocument = { Version: string; Statement: Statement[] };
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
    'AWS::IAM::ManagedPolicy': (id) => `arn:aws:iam::${ACCOUNT}:policy/RlvrInfra-${id}`,
    'AWS::IAM::OIDCProvider': () =>
      `arn:aws:iam::${ACCOUNT}:oidc-provider/token.actions.githubusercontent.com`,
    'AWS::Logs::LogGroup': (id) => `RlvrInfra-${id}`,
  };
  // What Fn::GetAtt of Arn gives, where it is not the Ref's value.
  const arn: Record<string, (id: string) => string> = {
    'AWS::ECR::Repository': (id) =>
      `arn:aws:ecr:${REGION}:${ACCOUNT}:repository/${fake['AWS::ECR::Repository'](id)}`,
    'AWS::IAM::Role': (id) => `arn:aws:iam::${ACCOUNT}:role/${fake['AWS::IAM::Role'](id)}`,
    'AWS::S3::Bucket': (id) => `arn:aws:s3:::${fake['AWS::S3::Bucket'](id)}`,
    // A log group's Arn attribute ends in ":*".
    'AWS::Logs::LogGroup': (id) =>
      `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${fake['AWS::Logs::LogGroup'](id)}:*`,
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

const resourcesOf = (s: Synthesized) => (s.json as Template).Resources;

/** The one resource of `type` whose logical id starts with `prefix`. */
export function logicalId(s: Synthesized, type: string, prefix = ''): string {
  const ids = Object.entries(resourcesOf(s))
    .filter(([id, r]) => r.Type === type && id.startsWith(prefix))
    .map(([id]) => id);
  if (ids.length !== 1) throw new Error(`${ids.length} ${type} resources named ${prefix}…`);
  return ids[0];
}

/** A resolved property of the resource with this logical id. */
export function resolved(s: Synthesized, id: string, property: string): unknown {
  return resolver(s.json as Template)(resourcesOf(s)[id].Properties[property]);
}

/** A managed policy's document, resolved, by the start of its logical id. */
export function managedPolicy(s: Synthesized, prefix: string): PolicyDocument {
  return resolved(s, logicalId(s, 'AWS::IAM::ManagedPolicy', prefix), 'PolicyDocument') as PolicyDocument;
}

/** The submitter policy's CreateTrainingJob statements by Sid, their conditions resolved. */
export function createStatements(s: Synthesized): Record<string, Conditions> {
  return Object.fromEntries(
    managedPolicy(s, 'SubmitterPolicy')
      .Statement.filter((st) => [st.Action].flat().includes('sagemaker:CreateTrainingJob'))
      .map((st) => [st.Sid ?? '', st.Condition ?? {}]),
  );
}

/** The first CreateTrainingJob statement's conditions (CreateOurTrainingJobs), resolved. */
export function createConditions(s: Synthesized): Conditions {
  return Object.values(createStatements(s))[0];
}

/** A role of the stack, as a principal, and the identity policies the template attaches to it. */
export interface Principal {
  readonly arn: string;
  readonly policies: { name: string; policy: PolicyDocument }[];
}

/**
 * The role whose logical id starts with `prefix` and every policy the template attaches to it: managed
 * policies that name it in Roles or that it names in ManagedPolicyArns, and inline AWS::IAM::Policy.
 */
export function role(s: Synthesized, prefix: string): Principal {
  const resolve = resolver(s.json as Template);
  const id = logicalId(s, 'AWS::IAM::Role', prefix);
  const resources = resourcesOf(s);
  const attached = (resolve(resources[id].Properties.ManagedPolicyArns ?? []) as string[]).map((arn) => {
    const policyId = Object.keys(resources).find(
      (k) => resources[k].Type === 'AWS::IAM::ManagedPolicy' && resolve({ Ref: k }) === arn,
    );
    // An AWS managed policy the simulator does not have: the claims here do not rest on one.
    if (!policyId) throw new Error(`${id} has ${arn}, which is not in the template`);
    return policyId;
  });
  const naming = Object.entries(resources)
    .filter(
      ([, r]) =>
        ['AWS::IAM::ManagedPolicy', 'AWS::IAM::Policy'].includes(r.Type) &&
        ((r.Properties.Roles as { Ref?: string }[] | undefined) ?? []).some((x) => x.Ref === id),
    )
    .map(([k]) => k);
  return {
    arn: resolve({ 'Fn::GetAtt': [id, 'Arn'] }) as string,
    policies: [...new Set([...attached, ...naming])].map((k) => ({
      name: k,
      policy: resolve(resources[k].Properties.PolicyDocument) as PolicyDocument,
    })),
  };
}

/** The key policy of the stack key, and the policy of the data bucket (the stack's other bucket is its access logs). */
export function keyPolicy(s: Synthesized): PolicyDocument {
  return resolved(s, logicalId(s, 'AWS::KMS::Key'), 'KeyPolicy') as PolicyDocument;
}
export function bucketPolicy(s: Synthesized): PolicyDocument {
  return resolved(
    s,
    logicalId(s, 'AWS::S3::BucketPolicy', 'BucketPolicy'),
    'PolicyDocument',
  ) as PolicyDocument;
}

export type Verdict = 'Allowed' | 'ImplicitlyDenied' | 'ExplicitlyDenied';

export interface Request {
  readonly principal: Principal;
  readonly action: string;
  readonly resource: string;
  readonly context?: Record<string, string | string[]>;
  /** The policy of the resource, when it has one (a key policy, a bucket policy). */
  readonly resourcePolicy?: PolicyDocument;
}

/** IAM's decision for a request, from the simulator; input it rejects or a key it drops fails loudly. */
export async function simulate(request: Request): Promise<Verdict> {
  const simulation: Simulation = {
    request: {
      principal: request.principal.arn,
      action: request.action,
      resource: { resource: request.resource, accountId: ACCOUNT },
      contextVariables: request.context ?? {},
    },
    identityPolicies: request.principal.policies,
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    resourcePolicy: request.resourcePolicy,
  };
  const result = await runSimulation(simulation, {});
  if (result.resultType === 'error') throw new Error(`simulator: ${JSON.stringify(result.errors)}`);
  if (result.resultType !== 'single')
    throw new Error(`simulator: ${result.resultType} result for ${request.resource}`);
  const ignored = result.result.ignoredContextKeys ?? [];
  if (ignored.length > 0)
    throw new Error(`simulator: ${request.action} has no condition key ${ignored.join(', ')}`);
  return result.overallResult;
}

/**
 * The condition keys AWS defines for CreateTrainingJob, as a request sets them (absent keys left out).
 */
export function createTrainingJobContext(r: CreateTrainingJobRequest): Record<string, string | string[]> {
  const fileSystem = (r.InputDataConfig ?? []).find((c) => c.DataSource?.FileSystemDataSource)?.DataSource
    ?.FileSystemDataSource;
  const instanceTypes = [
    ...(r.ResourceConfig?.InstanceType ? [r.ResourceConfig.InstanceType] : []),
    ...(r.ResourceConfig?.InstanceGroups ?? []).map((g) => g.InstanceType!),
  ];
  const context: Record<string, string | string[] | undefined> = {
    'sagemaker:NetworkIsolation': r.EnableNetworkIsolation?.toString(),
    'sagemaker:InterContainerTrafficEncryption': r.EnableInterContainerTrafficEncryption?.toString(),
    'sagemaker:VolumeKmsKeyArn': r.ResourceConfig?.VolumeKmsKeyId,
    'sagemaker:OutputKmsKeyArn': r.OutputDataConfig?.KmsKeyId,
    'sagemaker:InstanceTypes': instanceTypes.length > 0 ? instanceTypes : undefined,
    'sagemaker:MaxRuntimeInSeconds': r.StoppingCondition?.MaxRuntimeInSeconds?.toString(),
    'sagemaker:VpcSubnets': r.VpcConfig?.Subnets,
    'sagemaker:VpcSecurityGroupIds': r.VpcConfig?.SecurityGroupIds,
    'sagemaker:FileSystemId': fileSystem?.FileSystemId,
    'sagemaker:FileSystemType': fileSystem?.FileSystemType,
    'sagemaker:FileSystemAccessMode': fileSystem?.FileSystemAccessMode,
    'sagemaker:FileSystemDirectoryPath': fileSystem?.DirectoryPath,
  };
  return Object.fromEntries(Object.entries(context).filter(([, v]) => v !== undefined)) as Record<
    string,
    string | string[]
  >;
}

/** The ARN of a training job named `name`. */
export const trainingJobArn = (name: string) => `arn:aws:sagemaker:${REGION}:${ACCOUNT}:training-job/${name}`;

/** The submitter role's decision on CreateTrainingJob for a request. */
export function simulateCreate(submitter: Principal, request: CreateTrainingJobRequest): Promise<Verdict> {
  return simulate({
    principal: submitter,
    action: 'sagemaker:CreateTrainingJob',
    resource: trainingJobArn(request.TrainingJobName!),
    context: createTrainingJobContext(request),
  });
}

/**
 * The Sids of the CreateTrainingJob statements that on their own admit a request: each simulated as
 * the submitter policy's only statement.
 */
export async function admittingStatements(
  s: Synthesized,
  request: CreateTrainingJobRequest,
): Promise<string[]> {
  const document = managedPolicy(s, 'SubmitterPolicy');
  const admitting: string[] = [];
  for (const statement of document.Statement.filter((st) =>
    [st.Action].flat().includes('sagemaker:CreateTrainingJob'),
  )) {
    const alone = {
      arn: submitterArn(s),
      policies: [{ name: statement.Sid!, policy: { ...document, Statement: [statement] } }],
    };
    if ((await simulateCreate(alone, request)) === 'Allowed') admitting.push(statement.Sid!);
  }
  return admitting;
}

/**
 * The submitter as a principal: its role when the stack makes one, else a role the submitter policy is
 * attached to (researchers attach it to their own roles).
 */
export function submitter(s: Synthesized): Principal {
  const made = Object.keys(resourcesOf(s)).some((id) => id.startsWith('SubmitterRole'));
  if (made) return role(s, 'SubmitterRole');
  return {
    arn: submitterArn(s),
    policies: [{ name: 'SubmitterPolicy', policy: managedPolicy(s, 'SubmitterPolicy') }],
  };
}
const submitterArn = (s: Synthesized) =>
  Object.keys(resourcesOf(s)).some((id) => id.startsWith('SubmitterRole'))
    ? role(s, 'SubmitterRole').arn
    : `arn:aws:iam::${ACCOUNT}:role/researcher`;

/**
 * A copy of `request` with the file-system channel the launcher makes (fileSystemChannel: the stack's
 * EFS at its root, read-write), but for the fields in `source`, and the isolation given.
 */
export function withFileSystemChannel(
  request: CreateTrainingJobRequest,
  fileSystemId: string,
  source: Partial<{
    FileSystemId: string;
    FileSystemType: string;
    FileSystemAccessMode: string;
    DirectoryPath: string;
  }> = {},
  networkIsolation = request.EnableNetworkIsolation,
): CreateTrainingJobRequest {
  const r = structuredClone(request);
  r.EnableNetworkIsolation = networkIsolation;
  const channel = fileSystemChannel(
    SHARED_FILE_SYSTEM.channel,
    fileSystemId,
    SHARED_FILE_SYSTEM.directoryPath,
  );
  Object.assign(channel.DataSource!.FileSystemDataSource!, source);
  r.InputDataConfig = [...(r.InputDataConfig ?? []), channel];
  return r;
}
