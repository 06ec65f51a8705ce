import * as path from 'node:path';
import { bareEnv, runCli, runCommand } from '../helpers/cli';
import {
  exampleConfigs,
  GSM8K_EXAMPLE,
  gsm8kWith,
  lineOf,
  makeTrainerRepo,
  REPO_ROOT,
  tempDir,
  writeConfig,
} from '../helpers/fixtures';
import { loadBotocoreModel, validateAgainstModel } from '../helpers/botocore-model';
import { freePort } from '../helpers/moto';

const model = loadBotocoreModel('sagemaker');

describe('rlvr submit --dry-run on a machine without AWS', () => {
  it.each(exampleConfigs().map((f) => [path.relative(REPO_ROOT, f)]))(
    '%s: exit 0, placeholders marked, pre-flight not run',
    async (config) => {
      const { code, stdout, stderr } = await runCli(['submit', config, '--dry-run']);
      expect(stderr).not.toMatch(/error|Error|at .*\.ts/);
      expect(code).toBe(0);
      expect(stdout).toMatch(/Plan for annotations-adhoc-\d{8}-\d{6}/);
      expect(stdout).toMatch(/bucket +<UNRESOLVED bucket> +← unresolved/);
      expect(stdout).toMatch(/Pre-flight\n {2}not run: no region/);
      expect(stdout).toMatch(/models\/Qwen3-1.7B-Base\//);
    },
  );

  it('--json prints one JSON object and nothing else, with the exact request', async () => {
    const config = path.relative(REPO_ROOT, exampleConfigs()[0]);
    const { code, stdout } = await runCli(['submit', config, '--dry-run', '--json', '--region', 'us-west-2']);
    expect(code).toBe(0);
    const json = JSON.parse(stdout);
    expect(json.jobName).toMatch(/^annotations-adhoc-/);
    expect(json.createTrainingJobRequest.TrainingJobName).toBe(json.jobName);
    expect([...json.placeholders].sort()).toEqual(['bucket', 'image', 'repositoryUri', 'roleArn']);
    expect(json.preflight).toEqual({ ran: false, reason: 'no AWS credentials found', checks: [] });
    expect(json.uploads.map((u: { key: string }) => u.key)).toContain(
      `rlvr-experiments/jobs/${json.jobName}/config.yaml`,
    );
    expect(validateAgainstModel(model, 'CreateTrainingJob', json.createTrainingJobRequest)).toEqual([]);
  });

  it('`npm run -s submit -- … --json` prints nothing but the JSON on stdout', async () => {
    const config = path.relative(REPO_ROOT, exampleConfigs()[0]);
    const { code, stdout } = await runCommand(
      'npm',
      ['run', '-s', 'submit', '--', config, '--dry-run', '--json'],
      {
        env: bareEnv(),
      },
    );
    expect(code).toBe(0);
    expect(() => JSON.parse(stdout)).not.toThrow();
  });

  it('with settings in the environment, the request uses them', async () => {
    const config = path.relative(REPO_ROOT, exampleConfigs()[0]);
    const env = bareEnv({
      RLVR_BUCKET: 'my-bucket',
      RLVR_ROLE_ARN: 'arn:aws:iam::123456789012:role/exec',
      RLVR_REPOSITORY_URI: '123456789012.dkr.ecr.us-west-2.amazonaws.com/rlvr-experiments',
      AWS_REGION: 'us-west-2',
    });
    const { code, stdout } = await runCli(['submit', config, '--dry-run', '--json', '--image', 'img:1'], {
      env,
    });
    expect(code).toBe(0);
    const json = JSON.parse(stdout);
    expect(json.createTrainingJobRequest.RoleArn).toBe('arn:aws:iam::123456789012:role/exec');
    expect(json.createTrainingJobRequest.CheckpointConfig.S3Uri).toBe(
      `s3://my-bucket/rlvr-experiments/checkpoints/${json.jobName}/`,
    );
    expect(json.settings.bucket).toEqual({ value: 'my-bucket', source: 'env RLVR_BUCKET' });
    expect(json.placeholders).toEqual([]);
  });

  it('when S3 cannot be reached, prints the plan with the pre-flight marked as not run (exit 0)', async () => {
    const port = await freePort(); // nothing listens here
    const env = bareEnv({
      AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
      AWS_ACCESS_KEY_ID: 'x',
      AWS_SECRET_ACCESS_KEY: 'y',
      AWS_REGION: 'us-west-2',
      RLVR_BUCKET: 'b-unreachable',
      RLVR_ROLE_ARN: 'arn:aws:iam::123456789012:role/exec',
      RLVR_REPOSITORY_URI: '123456789012.dkr.ecr.us-west-2.amazonaws.com/r',
    });
    const { code, stdout } = await runCli(
      ['submit', path.relative(REPO_ROOT, exampleConfigs()[0]), '--dry-run', '--json'],
      { env },
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout).preflight).toMatchObject({
      ran: false,
      reason: expect.stringMatching(/^unreachable: /),
    });
  });

  it('a bad config exits 2 with file:line:column and no stack trace; --json carries the problems', async () => {
    const dir = tempDir();
    const text = gsm8kWith(['name: grpo', 'name: ppo']);
    const file = writeConfig(dir, 'bad.yaml', text);
    const plain = await runCli(['submit', file, '--dry-run']);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain(`${file}:${lineOf(text, 'name: ppo')}:`);
    expect(plain.stderr).not.toMatch(/\n\s+at /);
    const json = await runCli(['submit', file, '--dry-run', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).error.problems[0].where).toBe('loss.name');
  });

  it('a wrong flag exits 2', async () => {
    const { code, stderr } = await runCli(['submit', exampleConfigs()[0], '--dry-runn']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown option '--dry-runn'[\s\S]*Did you mean --dry-run\?/);
  });

  it('flags override the config and the plan shows where values came from', async () => {
    const { stdout, code } = await runCli([
      'submit',
      GSM8K_EXAMPLE,
      '--dry-run',
      '--train-gpus',
      '0-5',
      '--eval-gpus',
      '6',
      '--instance-type',
      'ml.g5.48xlarge',
    ]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/train GPUs +0,1,2,3,4,5 +← flag --train-gpus/);
    expect(stdout).toMatch(/instance +1 × ml.g5.48xlarge +← flag --instance-type/);
    expect(stdout).toMatch(/GPU 7 of ml.g5.48xlarge would sit idle/);
    expect(stdout).toMatch(/trainer +grpo-sft: .*← the prompts_per_\* schedule/);
    expect(stdout).toMatch(
      /command +python entrypoints\/train_grpo_sft\.py \{config\} +← default \(trainer grpo-sft/,
    );
  });

  it("states the trainer's run-time contract and ships it; --spot with a trainer that cannot resume is a warning", async () => {
    const weights = await runCli(['submit', GSM8K_EXAMPLE, '--dry-run', '--json', '--spot']);
    expect(weights.code).toBe(0);
    const plan = JSON.parse(weights.stdout);
    expect(plan.trainer.resume).toBe('weights');
    const notes = plan.trainer.runtime.join('\n');
    expect(notes).toMatch(
      /grpo-sft makes its own run folder qwen3-1\.7B-gsm8k-grpo_<timestamp>\/ under \$SM_MODEL_DIR/,
    );
    expect(notes).toContain('dataset channel gsm8k_train → /tmp/gsm8k_train_cache');
    expect(notes).toMatch(
      /spot restart: weights-only resume: optimizer state and data order restart \(.*roles\.0\.config\.model\.hf_assets_path, roles\.2\.config\.model; training\.resume_step/,
    );
    expect(notes).toMatch(/eval watcher: entrypoints\/eval_benchmarks\.py \{config\} --watch-path \{watch\}/);
    expect(plan.uploads.map((u: { key: string }) => u.key)).toContain(
      `rlvr-experiments/jobs/${plan.jobName}/contract.json`,
    );
    // Nothing about the trainer to warn of (a dry-run without settings notes only the image).
    expect(plan.warnings.map((w: { where: string }) => w.where)).toEqual(['image']);

    const dir = tempDir('rlvr-minimal-');
    const minimal = writeConfig(
      dir,
      'minimal.yaml',
      gsm8kWith(['launcher:\n', 'launcher:\n  trainer: grpo-minimal\n  acknowledge: [no-checkpoints]\n'])
        .replace(/^ {2}trainer_src: .*\n/m, `  trainer_src: ${path.join(REPO_ROOT, 'examples', 'trainer')}\n`)
        .replace(/^ {2}eval_config: .*\n/m, ''),
    );
    const none = await runCli(['submit', minimal, '--dry-run', '--json', '--spot']);
    expect(none.code).toBe(0);
    expect(JSON.parse(none.stdout).warnings.map((w: { message: string }) => w.message)).toContain(
      'grpo-minimal cannot resume: after a spot interruption the restarted job fails rather than train again from the base model (its earlier checkpoints are kept)',
    );
  });

  it('shows the findings a config allows, with their reasons, in the plan and its JSON', async () => {
    const dir = tempDir('rlvr-allow-');
    const withSeed = (allow: string) =>
      writeConfig(
        dir,
        `seed${allow ? '-allowed' : ''}.yaml`,
        gsm8kWith(
          ['  n: 8\n', '  n: 8\n  seed: 7\n'],
          ...(allow ? [[/^launcher:\n/m, `launcher:\n${allow}`] as [RegExp, string]] : []),
        )
          .replace(
            /^ {2}trainer_src: .*\n/m,
            `  trainer_src: ${path.join(REPO_ROOT, 'examples', 'trainer')}\n`,
          )
          .replace(/^ {2}eval_config: .*\n/m, ''),
      );
    const refused = await runCli(['submit', withSeed(''), '--dry-run']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/sampling seed/);
    const allowed = withSeed('  allow:\n    RLVR120: "sampler determinism test"\n');
    const text = await runCli(['submit', allowed, '--dry-run']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /Allowed by launcher\.allow[^\n]*\n {2}RLVR120 sampling-seed: a fixed sampling seed[^\n]*\n {4}reason: sampler determinism test/,
    );
    const json = JSON.parse((await runCli(['submit', allowed, '--dry-run', '--json'])).stdout);
    expect(json.allowed.map((a: { rule: string; reason: string }) => [a.rule, a.reason])).toEqual([
      ['RLVR120', 'sampler determinism test'],
    ]);
  });

  it('lists the credential files withheld from the source, in the plan and its JSON', async () => {
    const repo = makeTrainerRepo({ files: { '.env': 'HF_TOKEN=hf_x\n', 'keys/deploy.pem': 'x' } });
    const text = await runCli(['submit', 'configs/gsm8k.yaml', '--dry-run'], { cwd: repo.root });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/withheld +\.env +← an environment file \(\.env\): credentials never leave/);
    expect(text.stdout).toMatch(/withheld +keys\/deploy\.pem +← a key or certificate store/);
    const json = JSON.parse(
      (await runCli(['submit', 'configs/gsm8k.yaml', '--dry-run', '--json'], { cwd: repo.root })).stdout,
    );
    expect(json.source.withheld.map((w: { path: string }) => w.path).sort()).toEqual([
      '.env',
      'keys/deploy.pem',
    ]);
  });

  it('refuses roles that need more GPUs than the job trains on, naming the instance count that fits', async () => {
    const { stderr, code } = await runCli([
      'submit',
      GSM8K_EXAMPLE,
      '--dry-run',
      '--train-gpus',
      '0-3',
      '--eval-gpus',
      '4,5',
    ]);
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /roles: the roles need 6 GPUs \(trainer 2, reference 1, rollout 3\) but the job trains on 4[\s\S]*--instance-count 2/,
    );
  });

  it.each(exampleConfigs().map((f) => [path.basename(f), f]))(
    'dry-runs the example %s with its trainer and its channels',
    async (_name, file) => {
      const { stdout, code } = await runCli(['submit', file, '--dry-run', '--json']);
      expect(code).toBe(0);
      const plan = JSON.parse(stdout);
      const expected: Record<string, string> = {
        'qwen3-1.7B-gsm8k-sft-only.yaml': 'sft-only',
        'qwen3-1.7B-gsm8k-grpo-gkd-teacher.yaml': 'grpo-gkd',
      };
      expect(plan.trainer.id).toBe(expected[_name] ?? 'grpo-sft');
      const channels = plan.createTrainingJobRequest.InputDataConfig.map(
        (c: { ChannelName: string }) => c.ChannelName,
      );
      expect(channels).toContain('model');
      if (_name.includes('gkd-teacher')) expect(channels).toContain('model-teacher');
      if (_name.includes('sft')) expect(channels).toContain('gsm8k_sft_hard.jsonl');
    },
  );
});
