import * as path from 'node:path';
import { ProblemsError } from '../../lib/errors';
import { type SubmitInput, type SubmitPlan } from '../../lib/training';
import { hourlyPrice } from '../../lib/job-options';
import { planJson, renderPlan } from '../../bin/plan-output';
import { runCli } from '../helpers/cli';
import { loadBotocoreModel, validateAgainstModel } from '../helpers/botocore-model';
import { gsm8kWith, lineOf, makeTrainerRepo, planInSession } from '../helpers/fixtures';

const model = loadBotocoreModel('sagemaker');
const IMAGE = `123456789012.dkr.ecr.us-west-2.amazonaws.com/rlvr-experiments@sha256:${'a'.repeat(64)}`;
const NO_AWS_ENV = { HOME: '/nonexistent', AWS_EC2_METADATA_DISABLED: 'true' };
const SETTINGS = {
  bucket: 'sagemaker-us-west-2-123456789012',
  roleArn: 'arn:aws:iam::123456789012:role/rlvr-sagemaker-execution',
  region: 'us-west-2',
};
const FS = 'fs-0123456789abcdef0';
const VPC = { subnets: 'subnet-0a1b2c3d', securityGroups: 'sg-0a1b2c3d' };
const VPC_FLAGS = ['--subnets', VPC.subnets, '--security-groups', VPC.securityGroups];

/**
 * A trainer of the repository's own (rlvr-trainers.yaml, no built-in base): it has no shared folder, so
 * the launcher lets it run on several hosts.
 */
const OWN_TRAINER = `trainers:
  - id: multihost
    script: entrypoints/train_grpo_sft.py
`;

function repo(edits: [string | RegExp, string][] = [], ownTrainer = true) {
  return makeTrainerRepo({
    config: gsm8kWith(...edits),
    files: ownTrainer ? { 'rlvr-trainers.yaml': OWN_TRAINER } : {},
  });
}

const withTrainer = (extra = ''): [string, string] => [
  'launcher:\n',
  `launcher:\n  trainer: multihost\n${extra}`,
];

async function plan(
  configPath: string,
  options: SubmitInput['options'] = {},
  extra: Partial<SubmitInput> = {},
): Promise<SubmitPlan> {
  return planInSession({
    configPath,
    options,
    settings: SETTINGS,
    image: IMAGE,
    dryRun: true,
    cwd: path.dirname(configPath),
    env: NO_AWS_ENV,
    ...extra,
  });
}

async function problemsOf(promise: Promise<unknown>): Promise<ProblemsError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProblemsError);
  return err as ProblemsError;
}

describe('the plan of a multi-node job', () => {
  it('shows hosts × the split, the cost × hosts, and warns that the workers’ eval GPUs sit idle', async () => {
    const { configPath } = repo([withTrainer('  instance_count: 2\n')]);
    const p = await plan(configPath);
    expect(p.cluster).toEqual({
      hosts: 2,
      gpusPerHost: 8,
      totalGpus: 16,
      trainGpus: 12,
      evalGpus: 4,
      idleEvalGpus: 2,
    });
    const text = renderPlan(p);
    expect(text).toMatch(/instance +2 × ml\.p4de\.24xlarge +← template p4de-train-eval, count: config /);
    expect(text).toMatch(/\n {18}= 16 GPUs \(12 train, 4 eval\)\n/);
    expect(text).toMatch(/ray +one cluster of every host's train GPUs/);
    // The split each host gets, and how the hosts talk (p4de has EFA devices).
    expect(text).toMatch(
      /\n {2}cluster +2 hosts × \(6 train \+ 2 eval GPUs on each; the eval watcher on the head only\)\n {18}EFA between hosts: FI_PROVIDER=efa, NCCL through aws-ofi-nccl \(/,
    );

    const price = hourlyPrice('ml.p4de.24xlarge', 'us-west-2')!.perHour;
    expect(p.estimate).toMatchObject({ instances: 2, perInstanceHour: price });
    expect(p.estimate!.perHour).toBeCloseTo(2 * price, 6);
    expect(p.estimate!.maxRuntimeCost).toBeCloseTo(2 * price * 24, 6);
    expect(text).toMatch(/cost +\$[\d,.]+\/h \(2 × \$[\d,.]+\/h\), at most/);

    const idle = p.warnings.filter((w) => /eval watcher runs on the head only/.test(w.message));
    expect(idle).toHaveLength(1);
    expect(idle[0].message).toContain('the 2 eval GPUs on the 1 other host (eval_gpus 6,7 on each) sit idle');
    expect(idle[0].hint).toMatch(/fewer eval GPUs.*batch eval/);
    expect(text).toContain('eval watcher runs on the head only');

    const json = planJson(p);
    expect(json.cluster).toEqual(p.cluster);
    expect(json.createTrainingJobRequest.ResourceConfig?.InstanceCount).toBe(2);
  });

  it('keeps the same form on one host, with no head-only warning', async () => {
    const { configPath } = repo([withTrainer()]);
    const p = await plan(configPath, { instance_type: 'ml.g6e.48xlarge' });
    const text = renderPlan(p);
    expect(text).toMatch(/instance +1 × ml\.g6e\.48xlarge +← flag --instance-type, count: default\n/);
    expect(text).toMatch(/\n {18}= 8 GPUs \(6 train, 2 eval\)\n/);
    expect(p.warnings.some((w) => /head only/.test(w.message))).toBe(false);
    expect(p.estimate?.instances).toBe(1);
    expect(text).not.toMatch(/\/h \(1 × /);
  });

  it('has no head-only warning when the hosts set no GPU aside for eval', async () => {
    const { configPath } = repo([withTrainer('  instance_count: 3\n'), [/^ {2}eval_config: .*\n/m, '']]);
    const p = await plan(configPath, { train_gpus: '0-7', eval_gpus: '' });
    expect(p.cluster).toMatchObject({ hosts: 3, totalGpus: 24, trainGpus: 24, evalGpus: 0, idleEvalGpus: 0 });
    expect(p.warnings.some((w) => /head only/.test(w.message))).toBe(false);
    expect(renderPlan(p)).toMatch(/= 24 GPUs \(24 train, 0 eval\)/);
    // g5.12xlarge has no EFA: the hosts talk over TCP sockets, and the plan says so.
    const onG6e = renderPlan(
      await plan(
        repo([
          withTrainer('  instance_count: 2\n  instance_type: ml.g5.12xlarge\n'),
          [/^ {2}eval_config: .*\n/m, ''],
        ]).configPath,
        { train_gpus: '0-3', eval_gpus: '' },
      ),
    );
    expect(onG6e).toMatch(
      /cluster +2 hosts × \(4 train GPUs on each\)\n {18}TCP sockets between hosts \(ml\.g5\.12xlarge has no EFA\)/,
    );
  });

  it('refuses more than one host without Ray, at the instance count', async () => {
    const { configPath } = repo([withTrainer('  instance_count: 2\n  use_ray: false\n')]);
    const err = await problemsOf(plan(configPath));
    const text = gsm8kWith(withTrainer('  instance_count: 2\n  use_ray: false\n'));
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatchObject({
      where: 'launcher.instance_count',
      location: { line: lineOf(text, 'instance_count: 2') },
    });
    expect(err.problems[0].message).toMatch(
      /2 instances without Ray \(use_ray: false, config .*\): nothing would join the hosts into one cluster/,
    );
    expect(err.problems[0].hint).toMatch(/use_ray: true.*instance_count: 1/);

    // From flags: the problem names the flag.
    const { configPath: plain } = repo([withTrainer()]);
    const byFlag = await problemsOf(plan(plain, { instance_count: '4', use_ray: false }));
    expect(byFlag.problems.map((q) => [q.where, q.message])).toEqual([
      [
        '--instance-count',
        '4 instances without Ray (use_ray: false, --no-ray): nothing would join the hosts into one cluster',
      ],
    ]);
    // One host without Ray is fine.
    await expect(plan(plain, { use_ray: false })).resolves.toBeDefined();
  });

  it('a trainer with a shared folder is refused on 2 hosts without a shared file system, naming how to get one', async () => {
    const { configPath } = repo([['max_runtime: 24h', 'max_runtime: 24h\n  instance_count: 2']], false);
    const err = await problemsOf(plan(configPath));
    expect(err.problems).toHaveLength(1);
    const [problem] = err.problems;
    expect(problem.where).toBe('launcher.instance_count');
    expect(problem.message).toMatch(
      /grpo-sft writes its torchtitan job configs into \$RLVR_TITAN_CONFIG_DIR, which Ray actors on the other hosts read \(S\/titan_actor\.py:613-619\)/,
    );
    expect(problem.message).toMatch(
      /rank 0 of the model group, on any host, writes its export \(S\/model\.py:465/,
    );
    expect(problem.message).toMatch(/no shared file system is set \(fileSystemId\)/);
    expect(problem.hint).toContain(
      '-c rlvr:vpc=true -c rlvr:s3PrefixListId=<the S3 prefix list of the region> -c rlvr:sharedFileSystem=efs',
    );
    expect(problem.hint).toMatch(/--file-system-id fs-… \(or RLVR_FILE_SYSTEM_ID\)/);
  });

  it('a trainer that exports no checkpoint is refused for the shared folder only', async () => {
    const { configPath } = repo(
      [
        ['max_runtime: 24h', 'max_runtime: 24h\n  instance_count: 2'],
        ['launcher:\n', 'launcher:\n  trainer: grpo-minimal\n  acknowledge: [no-checkpoints]\n'],
      ],
      false,
    );
    const err = await problemsOf(plan(configPath));
    // grpo-minimal may be refused for other reasons too; the multi-node one has no rank-0 clause.
    const multi = err.problems.find((q) => q.where === 'launcher.instance_count');
    expect(multi?.message).toMatch(/grpo-minimal writes its torchtitan job configs/);
    expect(multi?.message).not.toMatch(/rank 0/);
  });

  it('`submit --dry-run --instance-count 2` of a trainer with a shared folder exits 2 naming the deploy flags', async () => {
    const { root } = repo([], false);
    const settingFlags = [
      '--bucket',
      SETTINGS.bucket,
      '--role-arn',
      SETTINGS.roleArn,
      '--region',
      'us-west-2',
    ];
    const args = ['submit', 'configs/gsm8k.yaml', '--dry-run', '--instance-count', '2', '--image', IMAGE];
    const { code, stderr } = await runCli([...args, ...settingFlags], { cwd: root });
    expect(code).toBe(2);
    expect(stderr).toMatch(/--instance-count: 2 instances: grpo-sft writes its torchtitan job configs/);
    expect(stderr).toContain('-c rlvr:sharedFileSystem=efs');
    // With a file system but no VPC to reach it: refused too, saying so.
    const noVpc = await runCli([...args, ...settingFlags, '--file-system-id', FS], { cwd: root });
    expect(noVpc.code).toBe(2);
    expect(noVpc.stderr).toMatch(
      /mount targets are reached only from a VPC, and the settings name no subnets/,
    );
    const ok = await runCli([...args, ...settingFlags, '--file-system-id', FS, ...VPC_FLAGS], {
      cwd: root,
    });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(
      `shared file system: ${FS} mounted rw at /opt/ml/input/data/shared on every host (2 hosts); $RLVR_TITAN_CONFIG_DIR and the trainer's run root in rlvr-jobs/`,
    );
  });

  it('`submit --dry-run --no-ray --instance-count 2` exits 2 naming the flag', async () => {
    const { root } = repo([withTrainer()]);
    const { code, stderr } = await runCli(
      ['submit', 'configs/gsm8k.yaml', '--dry-run', '--instance-count', '2', '--no-ray'],
      { cwd: root },
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(/--instance-count: 2 instances without Ray \(use_ray: false, --no-ray\)/);
  });
});

describe('the shared file system of a multi-host job', () => {
  const twoHosts = (): string =>
    repo([['max_runtime: 24h', 'max_runtime: 24h\n  instance_count: 2']], false).configPath;
  const withFs = { settings: { ...SETTINGS, ...VPC, fileSystemId: FS } };

  it('is mounted rw on every host as the `shared` channel, in the VPC, isolated by default (said in the plan)', async () => {
    const p = await plan(twoHosts(), {}, withFs);
    expect(p.sharedFileSystem).toEqual({
      channel: 'shared',
      fileSystemId: FS,
      directoryPath: '/',
      env: 'RLVR_TITAN_CONFIG_DIR',
      why: expect.stringMatching(/^grpo-sft writes its torchtitan job configs into \$RLVR_TITAN_CONFIG_DIR/),
      networkIsolation: { value: true, source: 'shared_fs_network_isolation true (default)' },
    });
    const shared = p.request.InputDataConfig!.find((c) => c.ChannelName === 'shared');
    expect(shared).toEqual({
      ChannelName: 'shared',
      InputMode: 'File',
      DataSource: {
        FileSystemDataSource: {
          FileSystemId: FS,
          FileSystemType: 'EFS',
          DirectoryPath: '/',
          FileSystemAccessMode: 'rw',
        },
      },
    });
    expect(p.request.VpcConfig).toEqual({ Subnets: [VPC.subnets], SecurityGroupIds: [VPC.securityGroups] });
    expect(p.request.EnableNetworkIsolation).toBe(true);
    expect(validateAgainstModel(model, 'CreateTrainingJob', p.request)).toEqual([]);
    const text = renderPlan(p);
    expect(text).toContain(
      `  shared file system: ${FS} mounted rw at /opt/ml/input/data/shared on every host (2 hosts); $RLVR_TITAN_CONFIG_DIR and the trainer's run root in rlvr-jobs/${p.jobName}/ ← S/titan_actor.py:613-619\n`,
    );
    expect(text).toMatch(/network +isolated +← default\n/);
    expect(text).toContain(
      'network isolation with a file-system channel is not documented by AWS either way (that it works, or that it does not); this job runs isolated ← shared_fs_network_isolation true (default)',
    );
    expect(JSON.parse(p.contractJson).networkIsolation).toEqual({
      value: true,
      reason: 'on: shared_fs_network_isolation true (default)',
    });
    expect(planJson(p).sharedFileSystem).toMatchObject({ channel: 'shared', fileSystemId: FS });
    expect(p.warnings.some((w) => /shared_fs_network_isolation/.test(w.message))).toBe(false);
  });

  it('shared_fs_network_isolation false turns isolation off for that job only, in the plan, its warnings and contract.json', async () => {
    const p = await plan(twoHosts(), { shared_fs_network_isolation: false }, withFs);
    expect(p.request.EnableNetworkIsolation).toBe(false);
    expect(p.sharedFileSystem?.networkIsolation).toEqual({
      value: false,
      source: 'shared_fs_network_isolation false (flag --no-shared-fs-network-isolation)',
    });
    const text = renderPlan(p);
    expect(text).toMatch(
      /network +off: shared_fs_network_isolation false \(a job mounting the shared file system\) +← flag --no-shared-fs-network-isolation\n/,
    );
    expect(text).toContain('is not documented by AWS either way');
    expect(p.warnings.map((w) => [w.where, w.message])).toContainEqual([
      '--no-shared-fs-network-isolation',
      expect.stringMatching(/^network isolation is off for this job: shared_fs_network_isolation false/),
    ]);
    expect(JSON.parse(p.contractJson).networkIsolation).toEqual({
      value: false,
      reason:
        'off: shared_fs_network_isolation false (flag --no-shared-fs-network-isolation) (a job mounting the shared file system)',
    });
    // A job without the channel keeps network_isolation.
    const { configPath: one } = repo([], false);
    const single = await plan(one, { shared_fs_network_isolation: false }, withFs);
    expect(single.sharedFileSystem).toBeUndefined();
    expect(single.request.EnableNetworkIsolation).toBe(true);
    expect(single.request.InputDataConfig!.some((c) => c.ChannelName === 'shared')).toBe(false);
    expect(JSON.parse(single.contractJson).networkIsolation).toBeUndefined();
    // From the config's launcher section too.
    const { configPath: fromConfig } = repo(
      [['max_runtime: 24h', 'max_runtime: 24h\n  instance_count: 2\n  shared_fs_network_isolation: false']],
      false,
    );
    const configured = await plan(fromConfig, {}, withFs);
    expect(configured.request.EnableNetworkIsolation).toBe(false);
    expect(configured.sharedFileSystem?.networkIsolation.source).toMatch(
      /^shared_fs_network_isolation false \(config .*gsm8k\.yaml:\d+:\d+\)$/,
    );
  });

  it('a local run (--local --instances 2) mounts a local volume: no file system id, no VPC', async () => {
    const p = await plan(twoHosts(), {}, { local: true });
    expect(p.sharedFileSystem).toMatchObject({ channel: 'shared', fileSystemId: 'local volume' });
    expect(p.request.InputDataConfig!.some((c) => c.ChannelName === 'shared')).toBe(false);
    expect(renderPlan(p)).toContain(
      'shared file system: local volume mounted rw at /opt/ml/input/data/shared',
    );
  });

  it('a dry-run without AWS or settings shows the file system as a placeholder, like its other settings', async () => {
    const p = await plan(twoHosts(), {}, { settings: {} });
    expect(p.placeholders).toContain('fileSystemId');
    expect(p.sharedFileSystem?.fileSystemId).toBe('fs-00000000000000000');
    const text = renderPlan(p);
    expect(text).toMatch(/fileSystemId +<UNRESOLVED fileSystemId>/);
    expect(text).toContain('shared file system: <UNRESOLVED fileSystemId> mounted rw');
    // No VPC either: said as a warning, as a submit would stop there.
    expect(p.warnings.some((w) => /settings name no subnets; a submit would stop here/.test(w.message))).toBe(
      true,
    );
  });
});
