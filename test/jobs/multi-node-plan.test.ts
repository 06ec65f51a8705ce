import * as path from 'node:path';
import { ProblemsError } from '../../lib/errors';
import { type SubmitInput, type SubmitPlan } from '../../lib/jobs';
import { hourlyPrice } from '../../lib/job-options';
import { planJson, renderPlan } from '../../bin/plan-output';
import { runCli } from '../helpers/cli';
import { gsm8kWith, lineOf, makeTrainerRepo, planInSession } from '../helpers/fixtures';

const IMAGE = `123456789012.dkr.ecr.us-west-2.amazonaws.com/rlvr-experiments@sha256:${'a'.repeat(64)}`;
const NO_AWS_ENV = { HOME: '/nonexistent', AWS_EC2_METADATA_DISABLED: 'true' };
const SETTINGS = {
  bucket: 'sagemaker-us-west-2-123456789012',
  roleArn: 'arn:aws:iam::123456789012:role/rlvr-sagemaker-execution',
  region: 'us-west-2',
};

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

async function plan(configPath: string, options: SubmitInput['options'] = {}): Promise<SubmitPlan> {
  return planInSession({
    configPath,
    options,
    settings: SETTINGS,
    image: IMAGE,
    dryRun: true,
    cwd: path.dirname(configPath),
    env: NO_AWS_ENV,
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

  it('a trainer with a shared folder is refused on 2 hosts, with the rank-0 export as the second reason', async () => {
    const { configPath } = repo([['max_runtime: 24h', 'max_runtime: 24h\n  instance_count: 2']], false);
    const err = await problemsOf(plan(configPath));
    expect(err.problems).toHaveLength(1);
    const [problem] = err.problems;
    expect(problem.where).toBe('launcher.instance_count');
    expect(problem.message).toMatch(
      /grpo-sft writes its torchtitan job configs into \$RLVR_TITAN_CONFIG_DIR, which Ray actors on the other hosts read \(S\/titan_actor\.py:613-619\)/,
    );
    expect(problem.message).toMatch(
      /its checkpoint export is written by rank 0 of the model group only \(S\/model\.py:465, in export_to_hf\), which Ray may place on any host, so a checkpoint could land on a worker's disk where the head's checks and eval watcher never see it/,
    );
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
