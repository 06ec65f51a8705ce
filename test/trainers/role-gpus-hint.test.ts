import { bareEnv, runCli } from '../helpers/cli';
import { GSM8K_EXAMPLE } from '../helpers/fixtures';

/*
 * Too few GPUs for the roles: the hint may suggest more instances only when the same submit would accept
 * them. grpo-sft's hosts share a folder, so several instances need the shared file system (and its VPC).
 */
const settings = {
  RLVR_BUCKET: 'my-bucket',
  RLVR_ROLE_ARN: 'arn:aws:iam::123456789012:role/exec',
  RLVR_REPOSITORY_URI: '123456789012.dkr.ecr.us-west-2.amazonaws.com/rlvr-experiments',
  AWS_REGION: 'us-west-2',
};
const vpc = {
  RLVR_FILE_SYSTEM_ID: 'fs-0123456789abcdef0',
  RLVR_SUBNETS: 'subnet-0123456789abcdef0',
  RLVR_SECURITY_GROUPS: 'sg-0123456789abcdef0',
};
// 6 GPUs (trainer 2, reference 1, rollout 3) on 4 training GPUs.
const submit = [
  'submit',
  GSM8K_EXAMPLE,
  '--dry-run',
  '--image',
  'img:1',
  '--train-gpus',
  '0-3',
  '--eval-gpus',
  '4,5',
];

describe('the hint for roles that need more GPUs than the job trains on', () => {
  it('without a shared file system: a bigger instance type or the file system, not --instance-count 2', async () => {
    const env = bareEnv(settings);
    const short = await runCli(submit, { env });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/the roles need 6 GPUs/);
    expect(short.stderr).not.toMatch(/Run on 2 instances|--instance-count 2/);
    expect(short.stderr).toMatch(/an instance type with at least 6 GPUs for training/);
    expect(short.stderr).toMatch(
      /To run on 2 instances, give the job a shared file system: .*--file-system-id/,
    );
    // What the former hint suggested is indeed refused.
    const two = await runCli([...submit, '--instance-count', '2'], { env });
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/no shared file system is set/);
  });

  it('with a file system but no VPC: says the subnets and security groups are needed', async () => {
    const env = bareEnv({ ...settings, RLVR_FILE_SYSTEM_ID: vpc.RLVR_FILE_SYSTEM_ID });
    const short = await runCli(submit, { env });
    expect(short.code).toBe(2);
    expect(short.stderr).not.toMatch(/Run on 2 instances/);
    expect(short.stderr).toMatch(
      /To run on 2 instances, deploy the stack in its VPC mode .*--subnets and --security-groups/,
    );
  });

  it('with the shared file system: suggests 2 instances, and the same submit on 2 is accepted', async () => {
    const env = bareEnv({ ...settings, ...vpc });
    const short = await runCli(submit, { env });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/Run on 2 instances \(launcher\.instance_count: 2 or --instance-count 2\)/);
    const two = await runCli([...submit, '--instance-count', '2'], { env });
    expect(two.stderr).not.toMatch(/error/i);
    expect(two.code).toBe(0);
  });
});
