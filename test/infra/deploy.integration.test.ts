import * as fs from 'node:fs';
import {
  CloudFormationClient,
  CreateStackCommand,
  DescribeStacksCommand,
  type Output,
} from '@aws-sdk/client-cloudformation';
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { bareEnv, runCli } from '../helpers/cli';
import { IMAGE, SAFETENSORS, SEEDED_KEYS } from '../helpers/emulator-data';
import { makeTrainerRepo } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable, startMoto, TEST_REGION, type MotoServer } from '../helpers/moto';
import { FULL_CONTEXT, synth } from './synth';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the function's own CommonJS file, as inlined
const expireCheckpoints = require('../../lib/infra/functions/expire-checkpoints.js') as {
  handler: (event: unknown, context: unknown, client: S3Client) => Promise<{ deleted: number }>;
};

describeWithPeer('moto_server', motoAvailable())('the stack in moto CloudFormation', () => {
  let moto: MotoServer;
  let cfn: CloudFormationClient;
  let s3: S3Client;
  let ssm: SSMClient;

  beforeAll(async () => {
    moto = await startMoto();
    const common = {
      region: TEST_REGION,
      endpoint: moto.endpoint,
      credentials: { accessKeyId: 't', secretAccessKey: 't' },
    };
    cfn = new CloudFormationClient(common);
    s3 = new S3Client({ ...common, forcePathStyle: true });
    ssm = new SSMClient(common);
  });
  afterAll(async () => {
    for (const c of [cfn, s3, ssm]) c?.destroy();
    await moto?.stop();
  });
  beforeEach(async () => {
    await moto.reset();
    // What `cdk bootstrap` leaves behind, which the template's bootstrap-version rule reads.
    await ssm.send(
      new PutParameterCommand({ Name: '/cdk-bootstrap/hnb659fds/version', Type: 'String', Value: '30' }),
    );
  });

  async function deploy(context: Record<string, unknown>): Promise<Record<string, string>> {
    const { templatePath } = synth(context);
    await cfn.send(
      new CreateStackCommand({
        StackName: 'RlvrInfra',
        TemplateBody: fs.readFileSync(templatePath, 'utf8'),
        Capabilities: ['CAPABILITY_IAM', 'CAPABILITY_NAMED_IAM'],
      }),
    );
    for (let i = 0; i < 100; i++) {
      const stack = (await cfn.send(new DescribeStacksCommand({ StackName: 'RlvrInfra' }))).Stacks![0];
      if (stack.StackStatus === 'CREATE_COMPLETE') {
        return Object.fromEntries((stack.Outputs ?? []).map((o: Output) => [o.OutputKey!, o.OutputValue!]));
      }
      if (!stack.StackStatus!.endsWith('IN_PROGRESS'))
        throw new Error(`${stack.StackStatus}: ${stack.StackStatusReason}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('stack creation did not finish');
  }

  async function seedInputs(bucket: string) {
    for (const key of SEEDED_KEYS)
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: key.endsWith('.safetensors') ? SAFETENSORS : '{}',
        }),
      );
  }

  it.each([
    ['default', {}],
    ['every option on', FULL_CONTEXT],
  ])(
    '%s: creates, and the launcher then finds its settings and builds a request with the created role and bucket',
    async (_label, context) => {
      const outputs = await deploy(context);
      expect(outputs.BucketName).toBe('rlvr-experiments-123456789012-us-west-2');
      expect(outputs.ExecutionRoleArn).toMatch(/^arn:aws:iam::123456789012:role\/RlvrInfra-ExecutionRole/);
      await seedInputs(outputs.BucketName);

      const repo = makeTrainerRepo();
      const { code, stdout, stderr } = await runCli(
        ['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--dry-run', '--json'],
        {
          env: bareEnv({ ...moto.env }), // no RLVR_* settings: everything from the published parameter
          cwd: repo.root,
        },
      );
      expect(stderr).not.toMatch(/^error/m);
      expect(code).toBe(0);
      const plan = JSON.parse(stdout);
      expect(plan.settings.bucket).toEqual({
        value: outputs.BucketName,
        source: 'parameter /rlvr-infra/settings',
      });
      expect(plan.settings.roleArn.value).toBe(outputs.ExecutionRoleArn);
      expect(plan.template).toEqual({ name: 'p4de-train-eval', from: 'parameter' });
      const request = plan.createTrainingJobRequest;
      expect(request.RoleArn).toBe(outputs.ExecutionRoleArn);
      expect(request.CheckpointConfig.S3Uri).toBe(
        `s3://${outputs.BucketName}/rlvr-experiments/checkpoints/${plan.jobName}/`,
      );
      expect(request.OutputDataConfig.KmsKeyId).toMatch(/^arn:aws:kms:us-west-2:123456789012:key\//);
      expect(plan.preflight.ran).toBe(true);
      if ('rlvr:vpc' in context) {
        expect(request.VpcConfig.Subnets).toHaveLength(2);
        expect(request.VpcConfig.SecurityGroupIds).toEqual([expect.stringMatching(/^sg-/)]);
      } else {
        expect(request.VpcConfig).toBeUndefined();
      }
    },
  );

  it('the checkpoint-expiry function deletes old intermediate checkpoints, keeping _final and each job newest', async () => {
    const bucket = 'expiry-test';
    await s3.send(
      new CreateBucketCommand({
        Bucket: bucket,
        CreateBucketConfiguration: { LocationConstraint: TEST_REGION },
      }),
    );
    const keys = [
      'rlvr-experiments/checkpoints/job-a/run_step20/model.safetensors',
      'rlvr-experiments/checkpoints/job-a/run_step20/config.json',
      'rlvr-experiments/checkpoints/job-a/run_step40/model.safetensors',
      'rlvr-experiments/checkpoints/job-a/run_final/model.safetensors',
      'rlvr-experiments/checkpoints/job-a/traces/trace.jsonl',
      'rlvr-experiments/checkpoints/job-b/run_step10/model.safetensors',
      'rlvr-experiments/checkpoints/job-b/run_step30/model.safetensors',
      'rlvr-experiments/checkpoints/job-b/config.yaml',
      'rlvr-experiments/datasets/gsm8k_train/run_step5/x',
    ];
    for (const Key of keys) await s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'x' }));
    const list = async () =>
      ((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? [])
        .map((o) => o.Key!)
        .sort();
    Object.assign(process.env, {
      BUCKET: bucket,
      CHECKPOINTS_PREFIX: 'rlvr-experiments/checkpoints/',
      EXPIRY_DAYS: '1',
    });
    expect(await expireCheckpoints.handler({}, {}, s3)).toEqual({ deleted: 0 }); // all younger than a day
    expect(await list()).toEqual([...keys].sort());
    process.env.EXPIRY_DAYS = '0';
    expect(await expireCheckpoints.handler({}, {}, s3)).toEqual({ deleted: 3 });
    expect(await list()).toEqual(
      keys.filter((k) => !k.includes('job-a/run_step20/') && !k.includes('job-b/run_step10/')).sort(),
    );
    for (const v of ['BUCKET', 'CHECKPOINTS_PREFIX', 'EXPIRY_DAYS']) delete process.env[v];
  });
});
