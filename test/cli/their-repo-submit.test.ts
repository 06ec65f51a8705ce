import * as fs from 'node:fs';
import * as path from 'node:path';
import { bareEnv, runCli } from '../helpers/cli';
import { GSM8K_EXAMPLE } from '../helpers/fixtures';
import { theirRepository } from '../helpers/python';

/**
 * A submit's plan of their repository (test/fixtures/their-repo) without AWS: where its package is
 * imported from, and what the plan says of the image for a multi-host job on an EFA instance type. Their
 * modules assign NCCL's interface at import, so their configs hold the platform's values (else RLVR125).
 */
const config = (launcher = '') =>
  fs
    .readFileSync(GSM8K_EXAMPLE, 'utf8')
    .replace(/^ {2}trainer_src: .*\n/m, '')
    .replace(/^ {2}eval_config: .*\n/m, '')
    .replace('launcher:\n', `launcher:\n  hold_platform_env: true\n${launcher}`);

const dryRun = async (root: string, ...args: string[]) => {
  const r = await runCli(
    ['submit', path.join(root, 'configs', 'gsm8k.yaml'), '--dry-run', '--json', ...args],
    {
      env: bareEnv({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' }),
    },
  );
  expect(r.stderr).not.toMatch(/\n\s+at /);
  return r;
};

describe('submit --dry-run of their repository', () => {
  it('ships src/ as the import root the trainer and its Ray workers import from', async () => {
    const root = theirRepository({ 'configs/gsm8k.yaml': config() });
    const r = await dryRun(root);
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.trainer.runtime[0]).toBe(
      'import roots: src/ (rlvr_experiments) ← pyproject.toml: a package in a src layout; first on PYTHONPATH for the trainer, its eval script and Ray on every host',
    );
    // The image is the one its lock describes (none is pushed here: its labels are the build's).
    expect(plan.image.labels).toMatchObject({ 'rlvr.torch': '2.9.0', 'rlvr.vllm': '0.11.2' });
  });

  it('refuses a source whose entrypoint imports a package that ships on no import root (exit 2, the line named)', async () => {
    // A profile that says the code is imported from the root: their entrypoint's line 16 would fail.
    const root = theirRepository({
      'configs/gsm8k.yaml': config(),
      'rlvr-trainers.yaml': 'trainers:\n  - id: grpo-sft\n    runtime: {import_roots: [entrypoints]}\n',
      'pyproject.toml':
        '[project]\nname = "rlvr-experiments"\n[tool.setuptools]\npackage-dir = {"" = "lib"}\n',
    });
    const r = await dryRun(root);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'entrypoints/train_grpo_sft.py:16 imports rlvr_experiments, which ships in src/ but is on no import root (entrypoints/, lib/)',
    );
    expect(r.stderr).toContain(
      'import root lib/ (pyproject.toml [tool.setuptools] package-dir) is not in the shipped source',
    );
  });

  it("refuses an eval task whose data the job's image does not hold (no network to fetch it), at the task's line", async () => {
    const evalConfig = fs
      .readFileSync(path.join(path.dirname(GSM8K_EXAMPLE), '..', 'eval', 'lm_eval_watch.yaml'), 'utf8')
      .replace('        - {task: minerva_math, num_fewshot: 4}', '        - {task: aime24, num_fewshot: 0}');
    const root = theirRepository({
      'configs/gsm8k.yaml': config('  eval_config: eval/watch.yaml\n'),
      'configs/eval/watch.yaml': evalConfig,
    });
    const line = evalConfig.split('\n').findIndex((l) => l.includes('aime24')) + 1;
    const r = await dryRun(root);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `configs/eval/watch.yaml:${line}:18: watch.task_groups[1].benchmarks[0].task: aime24: the image does not hold its dataset (the image caches lm_eval data for gsm8k, gsm8k_cot, minerva_math, hendrycks_math, ifeval, mbpp, humaneval), and the job has no network to fetch it`,
    );
    expect(r.stderr).toContain(
      '--build-arg LM_EVAL_TASKS="gsm8k gsm8k_cot minerva_math hendrycks_math ifeval mbpp humaneval aime24"',
    );
    // Built with it, the plan goes through; ifeval without NLTK's punkt_tab is refused too.
    expect((await dryRun(root, '--build-arg', 'LM_EVAL_TASKS=gsm8k_cot aime24 ifeval')).code).toBe(0);
    const nltk = await dryRun(
      root,
      '--build-arg',
      'LM_EVAL_TASKS=gsm8k_cot aime24 ifeval',
      '--build-arg',
      'NLTK_DATA_PACKAGES=punkt',
    );
    expect(nltk.code).toBe(2);
    expect(nltk.stderr).toContain('ifeval: the image does not hold NLTK punkt_tab (the image holds punkt)');
  });

  it('warns when a multi-host job on an EFA instance type would run an image without the EFA stack', async () => {
    const root = theirRepository({
      'configs/gsm8k.yaml': config('  instance_count: 2\n'),
      'rlvr-trainers.yaml': 'trainers:\n  - id: grpo-sft\n    runtime: {shared_folder: false}\n',
    });
    const efaWarning =
      /2 × ml\.p4de\.24xlarge talk over EFA, but the image has no EFA stack \(label rlvr\.efa=none\)/;
    const without = await dryRun(root, '--build-arg', 'EFA_INSTALLER_VERSION=');
    expect(without.code).toBe(0);
    expect(JSON.stringify(JSON.parse(without.stdout).warnings)).toMatch(efaWarning);
    const withEfa = await dryRun(root);
    expect(withEfa.code).toBe(0);
    expect(JSON.parse(withEfa.stdout).image.labels['rlvr.efa']).toBe('aws-efa-installer 1.43.2');
    expect(JSON.stringify(JSON.parse(withEfa.stdout).warnings)).not.toMatch(/talk over EFA/);
    // An image named by reference whose labels nothing here can read: said, not assumed.
    const named = await dryRun(
      root,
      '--image',
      '123456789012.dkr.ecr.us-west-2.amazonaws.com/theirs@sha256:' + 'a'.repeat(64),
    );
    expect(JSON.stringify(JSON.parse(named.stdout).warnings)).toMatch(
      /whether the image has the EFA stack cannot be told/,
    );
  });
});
