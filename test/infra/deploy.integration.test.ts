import * as fs from 'node:fs';
import {
  CloudFormationClient,
  CreateStackCommand,
  DescribeStacksCommand,
  type Output,
} from '@aws-sdk/client-cloudformation';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { bareEnv, runCli } from '../helpers/cli';
import { IMAGE, SAFETENSORS, SEEDED_KEYS } from '../helpers/emulator-data';
import { makeTrainerRepo } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable, startMoto, TEST_REGION, type MotoServer } from '../helpers/moto';
import { FULL_CONTEXT, synth } from './synth';

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
      if ('rlvr:sharedFileSystem' in context) expect(outputs.FileSystemId).toMatch(/^fs-[0-9a-f]{8,}$/);
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
});
