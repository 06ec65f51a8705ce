import type { CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import { allowedContextKeysForRequest } from '@cloud-copilot/iam-simulate';
import {
  ACCOUNT,
  bucketPolicy,
  createConditions,
  createStatements,
  createTrainingJobContext,
  keyPolicy,
  logicalId,
  type PolicyDocument,
  type Principal,
  REGION,
  resolver,
  role,
  simulate,
  submitter,
  trainingJobArn,
  type Verdict,
  withFileSystemChannel,
} from './simulate';
import { FULL_CONTEXT, synth } from './synth';

/*
 * The stack's IAM claims, each a request evaluated by an IAM policy simulator (@cloud-copilot/iam-simulate)
 * against the synthesized template's own policy documents (every option on): the policies attached to
 * the submitter, execution, image-build and checkpoint-expiry roles, the stack key's key policy and the
 * data bucket's bucket policy. docs/security.md lists what the table proves.
 */

const s = synth(FULL_CONTEXT);
const resolve = resolver(s.json as never);
const conditions = createConditions(s);
const KEY = resolve({ 'Fn::GetAtt': [logicalId(s, 'AWS::KMS::Key'), 'Arn'] }) as string;
const OTHER_KEY = `arn:aws:kms:${REGION}:${ACCOUNT}:key/11111111-2222-3333-4444-555555555555`;
const SUBNETS = conditions['ForAllValues:StringEquals']['sagemaker:VpcSubnets'] as string[];
const GROUPS = conditions['ForAllValues:StringEquals']['sagemaker:VpcSecurityGroupIds'] as string[];
const FILE_SYSTEM = resolve({ Ref: logicalId(s, 'AWS::EFS::FileSystem') }) as string;
const BUCKET = resolve({ 'Fn::GetAtt': [logicalId(s, 'AWS::S3::Bucket', 'Bucket'), 'Arn'] }) as string;
const REPOSITORY = resolve({ 'Fn::GetAtt': [logicalId(s, 'AWS::ECR::Repository'), 'Arn'] }) as string;
const ROOT = 'rlvr-experiments';

const SUBMITTER = submitter(s);
const EXECUTION = role(s, 'ExecutionRole');
const IMAGE_BUILD = role(s, 'ImageBuildRole');
const EXPIRY = role(s, 'CheckpointExpiryRole');
const KEY_POLICY = keyPolicy(s);
const BUCKET_POLICY = bucketPolicy(s);

/** What S3 sees of a request over TLS 1.3 (the bucket policy denies plain HTTP and TLS below 1.2). */
const HTTPS = { 'aws:SecureTransport': 'true', 's3:TlsVersion': '1.3' };

/** A job the stack admits: isolated, its key, a listed instance type, an hour, its subnets and group. */
const JOB: CreateTrainingJobRequest = {
  TrainingJobName: 'annotations-adhoc-grpo-1',
  RoleArn: EXECUTION.arn,
  AlgorithmSpecification: {
    TrainingInputMode: 'File',
    TrainingImage: `${REPOSITORY}@sha256:${'a'.repeat(64)}`,
  },
  EnableNetworkIsolation: true,
  EnableInterContainerTrafficEncryption: true,
  ResourceConfig: { InstanceType: 'ml.p4de.24xlarge', InstanceCount: 2, VolumeSizeInGB: 100 },
  StoppingCondition: { MaxRuntimeInSeconds: 3600 },
  OutputDataConfig: { S3OutputPath: `s3://bucket/${ROOT}/output/`, KmsKeyId: KEY },
  VpcConfig: { Subnets: SUBNETS, SecurityGroupIds: GROUPS },
  InputDataConfig: [],
};

/** JOB changed by `change`. */
function job(change: (r: CreateTrainingJobRequest) => void): CreateTrainingJobRequest {
  const r = structuredClone(JOB);
  change(r);
  return r;
}

/** JOB with a file-system channel: the stack's, at its root, read-write, but for `source`. */
function mounting(
  source: Parameters<typeof withFileSystemChannel>[2],
  networkIsolation = true,
): CreateTrainingJobRequest {
  return withFileSystemChannel(JOB, FILE_SYSTEM, source, networkIsolation);
}

type Expected = 'Allowed' | 'Denied' | 'ExplicitlyDenied';
interface Row {
  readonly name: string;
  readonly principal: Principal;
  readonly action: string;
  readonly resource: string;
  readonly context?: Record<string, string | string[]>;
  readonly resourcePolicy?: PolicyDocument;
  readonly expected: Expected;
}

const create = (name: string, request: CreateTrainingJobRequest, expected: Expected): Row => ({
  name,
  principal: SUBMITTER,
  action: 'sagemaker:CreateTrainingJob',
  resource: trainingJobArn(request.TrainingJobName!),
  context: createTrainingJobContext(request),
  expected,
});
const object = (key: string) => `${BUCKET}/${ROOT}/${key}`;
const s3 = (name: string, principal: Principal, action: string, key: string, expected: Expected): Row => ({
  name,
  principal,
  action,
  resource: object(key),
  context: HTTPS,
  resourcePolicy: BUCKET_POLICY,
  expected,
});
const kms = (name: string, action: string, viaService: string | undefined, expected: Expected): Row => ({
  name,
  principal: EXECUTION,
  action,
  resource: KEY,
  context: viaService ? { 'kms:ViaService': viaService } : {},
  resourcePolicy: KEY_POLICY,
  expected,
});
const passRole = (name: string, roleArn: string, service: string, expected: Expected): Row => ({
  name,
  principal: SUBMITTER,
  action: 'iam:PassRole',
  resource: roleArn,
  context: { 'iam:PassedToService': service },
  expected,
});
const ecr = (name: string, action: string, repository: string, expected: Expected): Row => ({
  name,
  principal: IMAGE_BUILD,
  action,
  resource: repository,
  expected,
});

const TABLE: Row[] = [
  // The submitter creates training jobs only as the stack requires.
  create('a job as the launcher makes it', JOB, 'Allowed'),
  create(
    'network isolation off, no file system',
    job((r) => (r.EnableNetworkIsolation = false)),
    'Denied',
  ),
  create(
    'inter-container encryption off',
    job((r) => (r.EnableInterContainerTrafficEncryption = false)),
    'Denied',
  ),
  create(
    'output encrypted with another key',
    job((r) => (r.OutputDataConfig!.KmsKeyId = OTHER_KEY)),
    'Denied',
  ),
  create(
    'no output key',
    job((r) => delete r.OutputDataConfig!.KmsKeyId),
    'Denied',
  ),
  create(
    'volume encrypted with the stack key',
    job((r) => (r.ResourceConfig!.VolumeKmsKeyId = KEY)),
    'Allowed',
  ),
  create(
    'volume encrypted with another key',
    job((r) => (r.ResourceConfig!.VolumeKmsKeyId = OTHER_KEY)),
    'Denied',
  ),
  create(
    'an instance type not listed',
    job((r) => (r.ResourceConfig!.InstanceType = 'ml.p5en.48xlarge')),
    'Denied',
  ),
  create(
    'a heterogeneous cluster with one group not listed',
    job((r) => {
      delete r.ResourceConfig!.InstanceType;
      r.ResourceConfig!.InstanceGroups = [
        { InstanceGroupName: 'a', InstanceType: 'ml.p4de.24xlarge', InstanceCount: 1 },
        { InstanceGroupName: 'b', InstanceType: 'ml.p5en.48xlarge', InstanceCount: 1 },
      ];
    }),
    'Denied',
  ),
  create(
    'a runtime at the ceiling (7 days)',
    job((r) => (r.StoppingCondition!.MaxRuntimeInSeconds = 7 * 86400)),
    'Allowed',
  ),
  create(
    'a runtime over the ceiling',
    job((r) => (r.StoppingCondition!.MaxRuntimeInSeconds = 7 * 86400 + 1)),
    'Denied',
  ),
  create(
    'no stopping condition',
    job((r) => delete r.StoppingCondition),
    'Denied',
  ),
  create(
    'a subnet outside the stack',
    job((r) => r.VpcConfig!.Subnets!.push('subnet-0123456789abcdef0')),
    'Denied',
  ),
  create(
    'another security group',
    job((r) => (r.VpcConfig!.SecurityGroupIds = ['sg-0123456789abcdef0'])),
    'Denied',
  ),
  create(
    'no VPC config',
    job((r) => delete r.VpcConfig),
    'Denied',
  ),
  create(
    'a job name outside the prefix',
    job((r) => (r.TrainingJobName = 'someone-else-1')),
    'Denied',
  ),
  create('the stack file system, its root, rw, isolated', mounting({}), 'Allowed'),
  create('the stack file system with isolation off (isolation optional)', mounting({}, false), 'Allowed'),
  create('another file system', mounting({ FileSystemId: 'fs-0123456789abcdef0' }), 'Denied'),
  create(
    'another file system with isolation off',
    mounting({ FileSystemId: 'fs-0123456789abcdef0' }, false),
    'Denied',
  ),
  create('the stack file system read-only', mounting({ FileSystemAccessMode: 'ro' }, false), 'Denied'),
  create('a folder of the stack file system', mounting({ DirectoryPath: '/rlvr-jobs' }, false), 'Denied'),
  create('the stack file system as FSx for Lustre', mounting({ FileSystemType: 'FSxLustre' }), 'Denied'),

  // The submitter passes only the execution role, and only to SageMaker.
  passRole('pass the execution role to SageMaker', EXECUTION.arn, 'sagemaker.amazonaws.com', 'Allowed'),
  passRole('pass the execution role to EC2', EXECUTION.arn, 'ec2.amazonaws.com', 'Denied'),
  passRole('pass the image-build role to SageMaker', IMAGE_BUILD.arn, 'sagemaker.amazonaws.com', 'Denied'),
  passRole('pass any other role', `arn:aws:iam::${ACCOUNT}:role/Admin`, 'sagemaker.amazonaws.com', 'Denied'),

  // The execution role reads its inputs, writes checkpoints and output, deletes nothing.
  s3('job reads a dataset', EXECUTION, 's3:GetObject', 'datasets/gsm8k/train.parquet', 'Allowed'),
  s3('job reads a base model', EXECUTION, 's3:GetObject', 'models/qwen/config.json', 'Allowed'),
  s3('job writes a checkpoint', EXECUTION, 's3:PutObject', 'checkpoints/run-1/step-100/model.pt', 'Allowed'),
  s3('job writes its output', EXECUTION, 's3:PutObject', 'output/run-1/model.tar.gz', 'Allowed'),
  s3('job overwrites a dataset', EXECUTION, 's3:PutObject', 'datasets/gsm8k/train.parquet', 'Denied'),
  s3(
    'job deletes a checkpoint',
    EXECUTION,
    's3:DeleteObject',
    'checkpoints/run-1/step-100/model.pt',
    'Denied',
  ),
  s3('job deletes its output', EXECUTION, 's3:DeleteObject', 'output/run-1/model.tar.gz', 'Denied'),
  {
    name: 'job reads outside the experiment prefix',
    principal: EXECUTION,
    action: 's3:GetObject',
    resource: `${BUCKET}/elsewhere/secrets.json`,
    context: HTTPS,
    resourcePolicy: BUCKET_POLICY,
    expected: 'Denied',
  },
  {
    name: 'job reads a dataset over plain HTTP (bucket policy)',
    principal: EXECUTION,
    action: 's3:GetObject',
    resource: object('datasets/gsm8k/train.parquet'),
    context: { 'aws:SecureTransport': 'false' },
    resourcePolicy: BUCKET_POLICY,
    expected: 'ExplicitlyDenied',
  },
  {
    name: 'job lists its checkpoints',
    principal: EXECUTION,
    action: 's3:ListBucket',
    resource: BUCKET,
    context: { ...HTTPS, 's3:prefix': `${ROOT}/checkpoints/run-1/` },
    resourcePolicy: BUCKET_POLICY,
    expected: 'Allowed',
  },
  {
    name: 'job lists the whole bucket',
    principal: EXECUTION,
    action: 's3:ListBucket',
    resource: BUCKET,
    context: { ...HTTPS, 's3:prefix': '' },
    resourcePolicy: BUCKET_POLICY,
    expected: 'Denied',
  },

  // The execution role uses the stack key only through S3 and SageMaker in the stack's region.
  kms('job decrypts through S3', 'kms:Decrypt', `s3.${REGION}.amazonaws.com`, 'Allowed'),
  kms(
    'job makes a data key through SageMaker',
    'kms:GenerateDataKey',
    `sagemaker.${REGION}.amazonaws.com`,
    'Allowed',
  ),
  kms('job decrypts calling KMS directly', 'kms:Decrypt', undefined, 'Denied'),
  kms(
    'job decrypts through another service',
    'kms:Decrypt',
    `secretsmanager.${REGION}.amazonaws.com`,
    'Denied',
  ),
  kms('job decrypts through S3 in another region', 'kms:Decrypt', 's3.us-east-1.amazonaws.com', 'Denied'),
  kms('job re-encrypts through S3', 'kms:ReEncryptFrom', `s3.${REGION}.amazonaws.com`, 'Denied'),
  kms('job schedules the key for deletion', 'kms:ScheduleKeyDeletion', undefined, 'Denied'),

  // The image-build (CI) role pushes only to the stack's repository.
  ecr('CI pushes an image to its repository', 'ecr:PutImage', REPOSITORY, 'Allowed'),
  ecr('CI uploads a layer to its repository', 'ecr:InitiateLayerUpload', REPOSITORY, 'Allowed'),
  ecr(
    'CI pushes to another repository',
    'ecr:PutImage',
    `arn:aws:ecr:${REGION}:${ACCOUNT}:repository/other`,
    'Denied',
  ),
  ecr('CI deletes images from its repository', 'ecr:BatchDeleteImage', REPOSITORY, 'Denied'),
  ecr('CI changes its repository policy', 'ecr:SetRepositoryPolicy', REPOSITORY, 'Denied'),

  // The checkpoint-expiry function deletes only checkpoint keys.
  s3(
    'expiry deletes a checkpoint',
    EXPIRY,
    's3:DeleteObject',
    'checkpoints/run-1/step-100/model.pt',
    'Allowed',
  ),
  s3('expiry deletes an output', EXPIRY, 's3:DeleteObject', 'output/run-1/model.tar.gz', 'Denied'),
  s3('expiry deletes a dataset', EXPIRY, 's3:DeleteObject', 'datasets/gsm8k/train.parquet', 'Denied'),
  s3(
    'expiry deletes a key beside checkpoints/',
    EXPIRY,
    's3:DeleteObject',
    'checkpoints-old/model.pt',
    'Denied',
  ),
  s3('expiry reads a checkpoint', EXPIRY, 's3:GetObject', 'checkpoints/run-1/step-100/model.pt', 'Denied'),
  s3(
    'expiry overwrites a checkpoint',
    EXPIRY,
    's3:PutObject',
    'checkpoints/run-1/step-100/model.pt',
    'Denied',
  ),
];

const decided = (verdict: Verdict): Expected =>
  verdict === 'Allowed' ? 'Allowed' : verdict === 'ExplicitlyDenied' ? 'ExplicitlyDenied' : 'Denied';

describe('IAM claims of the stack (every option on), by a policy simulator', () => {
  it('has a row for every claim', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(20);
    expect(new Set(TABLE.map((r) => r.name)).size).toBe(TABLE.length);
  });

  it.each(TABLE.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const verdict = await simulate(row);
    // An explicit deny is a deny; a row that names ExplicitlyDenied wants the deny statement itself.
    const got = row.expected === 'Denied' && verdict === 'ExplicitlyDenied' ? 'Denied' : decided(verdict);
    expect(got).toBe(row.expected);
  });
});

describe("the stack's CreateTrainingJob conditions and the keys AWS sets", () => {
  it('uses only condition keys the Service Authorization Reference lists for CreateTrainingJob (a deprecated key the request no longer carries would refuse every job)', async () => {
    const keys = await allowedContextKeysForRequest(
      'sagemaker',
      'CreateTrainingJob',
      trainingJobArn('x'),
      false,
      undefined,
    );
    expect(keys).toEqual(expect.arrayContaining(['sagemaker:outputkmskeyarn', 'sagemaker:volumekmskeyarn']));
    // Both statements (FULL_CONTEXT lets a job mounting the file system turn isolation off).
    const statements = createStatements(s);
    expect(Object.keys(statements)).toEqual(['CreateOurTrainingJobs', 'CreateSharedFileSystemJobs']);
    const used = [
      ...new Set(
        Object.values(statements).flatMap((c) =>
          Object.values(c).flatMap((byKey) => Object.keys(byKey as object)),
        ),
      ),
    ];
    expect(used.length).toBeGreaterThan(5);
    for (const key of used) expect([key, keys.includes(key.toLowerCase())]).toEqual([key, true]);
  });
});
