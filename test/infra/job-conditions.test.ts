import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import { bareEnv, runCli } from '../helpers/cli';
import { REPO_ROOT } from '../helpers/fixtures';
import { ACCOUNT, createConditions, type Principal, REGION, simulateCreate, submitter } from './simulate';
import { FULL_CONTEXT, synth } from './synth';

/*
 * Issue 19, "the stack enforces what the launcher promises": the submitter policy's CreateTrainingJob
 * conditions, read from the synthesized template, and the request the launcher builds for every example
 * config (`rlvr submit … --dry-run --json` with the stack's settings as flags) evaluated against the
 * submitter's policy by an IAM policy simulator (simulate.ts).
 */

const EXAMPLES = fs
  .readdirSync(path.join(REPO_ROOT, 'configs', 'examples'))
  .filter((f) => f.endsWith('.yaml'));
const IMAGE = `${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com/rlvr-experiments@sha256:${'a'.repeat(64)}`;

/** The launcher's dry-run request for a config, with settings that match the synthesized stack. */
async function dryRunRequest(
  conditions: Record<string, Record<string, unknown>>,
  config: string,
  extra: string[] = [],
): Promise<CreateTrainingJobRequest> {
  const arn = conditions.ArnEquals?.['sagemaker:OutputKmsKeyArn'] as string | undefined;
  const all = conditions['ForAllValues:StringEquals'] ?? {};
  const subnets = all['sagemaker:VpcSubnets'] as string[] | undefined;
  const groups = all['sagemaker:VpcSecurityGroupIds'] as string[] | undefined;
  const { code, stdout, stderr } = await runCli(
    [
      'submit',
      path.join('configs', 'examples', config),
      '--dry-run',
      '--json',
      ...['--bucket', `rlvr-experiments-${ACCOUNT}-${REGION}`, '--region', REGION],
      ...['--role-arn', `arn:aws:iam::${ACCOUNT}:role/RlvrInfra-ExecutionRole`, '--image', IMAGE],
      ...(arn ? ['--kms-key', arn] : []),
      ...(subnets ? ['--subnets', subnets.join(','), '--security-groups', groups!.join(',')] : []),
      ...extra,
    ],
    { env: bareEnv() },
  );
  if (code !== 0) throw new Error(`dry-run of ${config} exited ${code}: ${stderr}`);
  return (JSON.parse(stdout) as { createTrainingJobRequest: CreateTrainingJobRequest })
    .createTrainingJobRequest;
}

describe.each([
  ['without the inter-container requirement', { 'rlvr:interContainerTrafficEncryption': false }],
  [
    'VPC, expiry, every option on but inter-container encryption',
    { ...FULL_CONTEXT, 'rlvr:interContainerTrafficEncryption': false },
  ],
])('CreateTrainingJob conditions of the stack (%s)', (_label, context) => {
  let conditions: Record<string, Record<string, unknown>>;
  let principal: Principal;
  const requests = new Map<string, CreateTrainingJobRequest>();
  beforeAll(async () => {
    const s = synth(context);
    conditions = createConditions(s);
    principal = submitter(s);
    for (const config of EXAMPLES) requests.set(config, await dryRunRequest(conditions, config));
  }, 120_000);

  it('carries the keys AWS defines: network isolation, volume and output key, instance types, runtime ceiling', () => {
    expect(conditions).toMatchObject({
      Bool: { 'sagemaker:NetworkIsolation': 'true' },
      ArnEquals: { 'sagemaker:OutputKmsKeyArn': expect.stringMatching(/^arn:aws:kms:/) },
      ArnEqualsIfExists: { 'sagemaker:VolumeKmsKeyArn': expect.stringMatching(/^arn:aws:kms:/) },
      'ForAllValues:StringEquals': {
        'sagemaker:InstanceTypes': expect.arrayContaining([
          'ml.p4de.24xlarge',
          'ml.p5.48xlarge',
          'ml.g5.2xlarge',
        ]),
      },
      NumericLessThanEquals: { 'sagemaker:MaxRuntimeInSeconds': String(7 * 24 * 3600) },
      Null: { 'sagemaker:InstanceTypes': 'false', 'sagemaker:MaxRuntimeInSeconds': 'false' },
    });
    expect(conditions.Bool).not.toHaveProperty(['sagemaker:InterContainerTrafficEncryption']);
  });

  it.each(EXAMPLES)("allows the launcher's request for %s", async (config) => {
    const request = requests.get(config)!;
    expect(await simulateCreate(principal, request)).toBe('Allowed');
    // Their instance types have local storage: no volume key (AWS refuses one), the output key set.
    expect(request.ResourceConfig?.VolumeKmsKeyId).toBeUndefined();
    expect(request.OutputDataConfig?.KmsKeyId).toMatch(/^arn:aws:kms:/);
  });

  const mutations: [string, (r: CreateTrainingJobRequest) => void, string][] = [
    ['network isolation off', (r) => (r.EnableNetworkIsolation = false), 'Bool sagemaker:NetworkIsolation'],
    [
      'another volume key',
      (r) => (r.ResourceConfig!.VolumeKmsKeyId = `arn:aws:kms:${REGION}:${ACCOUNT}:key/other`),
      'ArnEqualsIfExists sagemaker:VolumeKmsKeyArn',
    ],
    [
      'another output key',
      (r) => (r.OutputDataConfig!.KmsKeyId = `arn:aws:kms:${REGION}:${ACCOUNT}:key/other`),
      'ArnEquals sagemaker:OutputKmsKeyArn',
    ],
    [
      'an instance type not in the list',
      (r) => (r.ResourceConfig!.InstanceType = 'ml.p5en.48xlarge'),
      'ForAllValues:StringEquals sagemaker:InstanceTypes',
    ],
    [
      'a runtime over the ceiling',
      (r) => (r.StoppingCondition!.MaxRuntimeInSeconds = 8 * 24 * 3600),
      'NumericLessThanEquals sagemaker:MaxRuntimeInSeconds',
    ],
    ['no runtime at all', (r) => delete r.StoppingCondition, 'Null sagemaker:MaxRuntimeInSeconds'],
    [
      "a file-system channel that is not the stack's",
      (r) =>
        r.InputDataConfig!.push({
          ChannelName: 'shared',
          DataSource: {
            FileSystemDataSource: {
              FileSystemId: 'fs-0123456789abcdef0',
              FileSystemType: 'EFS',
              FileSystemAccessMode: 'rw',
              DirectoryPath: '/',
            },
          },
        }),
      // Without the shared file system no job may mount one; with it, only the stack's.
      'rlvr:sharedFileSystem' in context
        ? 'StringEqualsIfExists sagemaker:FileSystemId'
        : 'Null sagemaker:FileSystemId',
    ],
  ];
  // The unchanged request is allowed (above), so the one change is what the simulator denies; the
  // condition named is the statement's that the change breaks.
  it.each(mutations)('denies a request with %s', async (_what, mutate, broken) => {
    const [operator, key] = broken.split(' ');
    expect(conditions[operator]).toHaveProperty([key]);
    const request = structuredClone(requests.get(EXAMPLES[0])!);
    mutate(request);
    expect(await simulateCreate(principal, request)).toBe('ImplicitlyDenied');
  });

  it('with the VPC, denies a job outside the stack subnets or without a VPC', async () => {
    if (!('rlvr:vpc' in context)) return expect(conditions.Null).not.toHaveProperty(['sagemaker:VpcSubnets']);
    const outside = structuredClone(requests.get(EXAMPLES[0])!);
    outside.VpcConfig!.Subnets = ['subnet-elsewhere'];
    expect(await simulateCreate(principal, outside)).toBe('ImplicitlyDenied');
    const none = structuredClone(requests.get(EXAMPLES[0])!);
    delete none.VpcConfig;
    expect(conditions.Null).toMatchObject({
      'sagemaker:VpcSubnets': 'false',
      'sagemaker:VpcSecurityGroupIds': 'false',
    });
    expect(await simulateCreate(principal, none)).toBe('ImplicitlyDenied');
  });
});

describe('stack options that change the conditions', () => {
  it('rlvr:networkIsolation=false lets a trainer that needs the network be submitted', async () => {
    const s = synth({ 'rlvr:networkIsolation': false });
    const conditions = createConditions(s);
    expect(conditions.Bool ?? {}).not.toHaveProperty(['sagemaker:NetworkIsolation']);
    const request = await dryRunRequest(conditions, EXAMPLES[0], ['--no-network-isolation']);
    expect(request.EnableNetworkIsolation).toBe(false);
    expect(await simulateCreate(submitter(s), request)).toBe('Allowed');
  });

  it('rlvr:interContainerTrafficEncryption (the default) requires it of every job (IAM sees no instance count)', async () => {
    const s = synth({});
    const conditions = createConditions(s);
    expect(conditions.Bool).toEqual({
      'sagemaker:NetworkIsolation': 'true',
      'sagemaker:InterContainerTrafficEncryption': 'true',
    });
    // The launcher sets EnableInterContainerTrafficEncryption for every job, so every job is admitted.
    const request = await dryRunRequest(conditions, EXAMPLES[0]);
    expect(request.EnableInterContainerTrafficEncryption).toBe(true);
    expect(await simulateCreate(submitter(s), request)).toBe('Allowed');
    request.EnableInterContainerTrafficEncryption = false;
    expect(await simulateCreate(submitter(s), request)).toBe('ImplicitlyDenied');
  });

  it('rlvr:instanceTypes and rlvr:maxRuntimeHours set the list and the ceiling', () => {
    const conditions = createConditions(
      synth({ 'rlvr:instanceTypes': 'ml.g5.2xlarge, ml.g5.12xlarge', 'rlvr:maxRuntimeHours': 2 }),
    );
    expect(conditions['ForAllValues:StringEquals']['sagemaker:InstanceTypes']).toEqual([
      'ml.g5.2xlarge',
      'ml.g5.12xlarge',
    ]);
    expect(conditions.NumericLessThanEquals['sagemaker:MaxRuntimeInSeconds']).toBe('7200');
  });
});
