import * as fs from 'node:fs';
import * as path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import {
  CreateTrainingJobCommand,
  DescribeTrainingJobCommand,
  ListTagsCommand,
  type SageMakerClient,
} from '@aws-sdk/client-sagemaker';
import { PutParameterCommand } from '@aws-sdk/client-ssm';
import { RuntimeFailure } from '../../lib/errors';
import { submit } from '../../lib/training/submit';
import { jobNameCandidate, templateParameterName } from '../../lib/layout';
import { runCli, bareEnv } from '../helpers/cli';
import {
  allKeys,
  BUCKET,
  clients,
  IMAGE,
  jobNames,
  publishSettings,
  ROLE_ARN,
  SEEDED_KEYS,
} from '../helpers/emulator-data';
import { gsm8kWith, lineOf, makeTrainerRepo } from '../helpers/fixtures';
import { useEmulator } from '../helpers/emulator-suite';
import { describeWithPeer, motoAvailable } from '../helpers/moto';

describeWithPeer('moto_server', motoAvailable())('submit against a real emulator (moto_server)', () => {
  const emulator = useEmulator();
  const cliEnv = emulator.cliEnv;
  const inProcess = emulator.submitInput;
  const moto = {
    get endpoint() {
      return emulator.moto.endpoint;
    },
    get env() {
      return emulator.moto.env;
    },
  };

  it('creates exactly one job with the expected checkpoint URI, channels, image, role and tags, and one log row', async () => {
    const repo = makeTrainerRepo();
    const { code, stdout, stderr } = await runCli(
      ['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--description', 'gsm8k lr1e-6 baseline'],
      { env: cliEnv(), cwd: repo.root },
    );
    expect(stderr).not.toMatch(/^error/m);
    expect(code).toBe(0);
    const names = await jobNames(moto.endpoint);
    expect(names).toHaveLength(1);
    const job = names[0];
    expect(job).toMatch(/^annotations-adhoc-\d{8}-\d{6}$/);
    expect(stdout).toContain(`Submitted ${job}`);
    expect(stdout).toContain(`s3://${BUCKET}/rlvr-experiments/checkpoints/${job}/`);
    expect(stdout).toContain(
      `https://us-west-2.console.aws.amazon.com/sagemaker/home?region=us-west-2#/jobs/${job}`,
    );

    const { sagemaker, s3 } = clients(moto.endpoint);
    const described = await sagemaker.send(new DescribeTrainingJobCommand({ TrainingJobName: job }));
    expect(described.CheckpointConfig).toEqual({
      S3Uri: `s3://${BUCKET}/rlvr-experiments/checkpoints/${job}/`,
      LocalPath: '/opt/ml/checkpoints',
    });
    expect(described.AlgorithmSpecification?.TrainingImage).toBe(IMAGE);
    expect(described.RoleArn).toBe(ROLE_ARN);
    const sourceKey = (await allKeys(moto.endpoint)).find((k) => k.startsWith('rlvr-experiments/source/'))!;
    expect(described.InputDataConfig?.map((c) => [c.ChannelName, c.DataSource?.S3DataSource?.S3Uri])).toEqual(
      [
        ['config', `s3://${BUCKET}/rlvr-experiments/jobs/${job}/`],
        ['code', `s3://${BUCKET}/${sourceKey}`],
        ['model', `s3://${BUCKET}/rlvr-experiments/models/Qwen3-1.7B-Base/`],
        ['gsm8k_train', `s3://${BUCKET}/rlvr-experiments/datasets/gsm8k_train/`],
      ],
    );
    const tags = await sagemaker.send(new ListTagsCommand({ ResourceArn: described.TrainingJobArn }));
    const tagMap = Object.fromEntries((tags.Tags ?? []).map((t) => [t.Key, t.Value]));
    expect(tagMap).toMatchObject({ 'rlvr:config': 'configs/gsm8k.yaml', 'rlvr:template': 'p4de-train-eval' });
    expect(tagMap['rlvr:git-commit']).toMatch(/^[0-9a-f]{40}$/);

    // Exactly the expected uploads: the source once, and the job's files.
    const uploaded = (await allKeys(moto.endpoint)).filter((k) => !SEEDED_KEYS.includes(k));
    const jobFiles = [
      'config.yaml',
      'contract.json',
      'eval-config.yaml',
      'patches/git_commit.txt',
      'patches/git_diff.patch',
      'patches/git_diff_cached.patch',
      'patches/git_status.txt',
      'patches/git_untracked.txt',
      'request.json',
      'reservation.json',
      'resolved-config.yaml',
    ].map((f) => `rlvr-experiments/jobs/${job}/${f}`);
    expect(uploaded).toEqual([...jobFiles, sourceKey].sort());
    expect(sourceKey).toMatch(/^rlvr-experiments\/source\/[0-9a-f]{64}\.tar\.gz$/);
    const asWritten = await s3.send(
      new GetObjectCommand({ Bucket: BUCKET, Key: `rlvr-experiments/jobs/${job}/config.yaml` }),
    );
    expect(await asWritten.Body!.transformToString()).toBe(fs.readFileSync(repo.configPath, 'utf8'));
    const resolved = await s3.send(
      new GetObjectCommand({ Bucket: BUCKET, Key: `rlvr-experiments/jobs/${job}/resolved-config.yaml` }),
    );
    expect(await resolved.Body!.transformToString()).toMatch(/path: \/opt\/ml\/input\/data\/model/);
    // What the entrypoint follows at run time: the trainer's run folder, resume, dataset copies, eval script.
    const contract = JSON.parse(
      await (
        await s3.send(
          new GetObjectCommand({ Bucket: BUCKET, Key: `rlvr-experiments/jobs/${job}/contract.json` }),
        )
      ).Body!.transformToString(),
    );
    expect(contract).toMatchObject({
      trainer: 'grpo-sft',
      configName: 'gsm8k.yaml',
      runFolder: { kind: 'own', rootEnv: 'SM_MODEL_DIR', marker: 'run.json' },
      expectCheckpoints: true,
      resume: {
        kind: 'weights',
        loadPaths: [
          ['roles', 0, 'config', 'model', 'hf_assets_path'],
          ['roles', 2, 'config', 'model'],
        ],
        stepKey: ['training', 'resume_step'],
      },
      datasetCaches: [
        { channel: 'gsm8k_train', path: '/tmp/gsm8k_train_cache', marker: 'dataset_info.json' },
      ],
      eval: {
        command: '{python} entrypoints/eval_benchmarks.py {config} --watch-path {watch}',
        resultKeys: ['gsm8k_cot_8shot', 'ifeval_0shot', 'minerva_math_4shot'],
      },
    });

    const log = fs.readFileSync(path.join(repo.root, 'docs', 'job_log.md'), 'utf8');
    const rows = log.split('\n').filter((l) => l.startsWith('| annotations-adhoc-'));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(
      new RegExp(
        `^\\| ${job} \\| configs/gsm8k.yaml \\| gsm8k lr1e-6 baseline \\| \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC \\|`,
      ),
    );
    expect(log).toMatch(/^\| Job Name \| Config \| Description \| Submitted \|/m);
  });

  describe('bad input exits 2 with file:line:column and leaves nothing behind', () => {
    const cases: {
      kind: string;
      edit: [string | RegExp, string][];
      at: string;
      message: RegExp;
      files?: Record<string, string>;
    }[] = [
      {
        kind: 'misspelt key',
        edit: [['checkpoint_interval: 20', 'checkpoint_intervall: 20']],
        at: 'checkpoint_intervall',
        message: /"checkpoint_intervall" a misspelling/,
      },
      {
        kind: 'wrong type',
        edit: [['lr: 1.0e-6', 'lr: fast']],
        at: 'lr: fast',
        message: /expected a number/,
      },
      {
        kind: 'out of range',
        edit: [['temperature: 1.0', 'temperature: -1']],
        at: 'temperature: -1',
        message: /must be ≥ 0/,
      },
      {
        kind: 'unknown loss',
        edit: [['name: grpo', 'name: ppo']],
        at: 'name: ppo',
        message: /has no loss/,
      },
      {
        kind: 'no trainer role',
        edit: [['- name: trainer', '- name: learner']],
        at: 'roles:',
        message: /looks up the role "trainer"/,
      },
      {
        kind: 'chat template on a Base model',
        edit: [['skip_chat_template: true', 'skip_chat_template: false']],
        at: 'skip_chat_template',
        message: /Base model/,
      },
      {
        kind: 'GSM8K stop missing',
        edit: [['"Q:", ', '']],
        at: 'stop:',
        message: /lacks "Q:"/,
      },
      {
        kind: 'YAML syntax',
        edit: [['max_steps: 200', 'max_steps: 200: 300']],
        at: 'max_steps: 200: 300',
        message: /not valid YAML/,
      },
      {
        kind: 'GPU overlap',
        edit: [['max_runtime: 24h', 'max_runtime: 24h\n  train_gpus: 0-6']],
        at: 'train_gpus',
        message: /GPU 6 is given to both/,
      },
      {
        kind: 'unknown instance type',
        edit: [['max_runtime: 24h', 'max_runtime: 24h\n  instance_type: ml.p4de.48xlarge']],
        at: 'instance_type',
        message: /not an instance type SageMaker training accepts/,
      },
      {
        kind: 'unknown template',
        edit: [['template: p4de-train-eval', 'template: p4-train-eval']],
        at: 'template: p4-train-eval',
        message: /no job template named "p4-train-eval"/,
      },
      {
        kind: 'model not in S3',
        edit: [[/Qwen\/Qwen3-1.7B-Base/g, 'Qwen/Qwen3-4B-Base']],
        at: 'path: Qwen',
        message:
          /no model at s3:\/\/.*models\/Qwen3-4B-Base\/[\s\S]*huggingface-cli download Qwen\/Qwen3-4B-Base/,
      },
      {
        kind: 'dataset not in S3',
        edit: [['  split: train', '  split: hard']],
        at: 'dataset: gsm8k',
        message: /no dataset at s3:\/\/.*datasets\/gsm8k_hard\//,
      },
      {
        kind: "dataset copy the trainer's loader would not take (a DatasetDict)",
        edit: [['  split: train', '  split: test']],
        at: 'dataset: gsm8k',
        message:
          /datasets\/gsm8k_test\/ has no dataset_info\.json at its top: the trainer's loader reads \/tmp\/gsm8k_test_cache only when it does/,
      },
      {
        kind: 'order file not in S3',
        edit: [
          [
            '  split: train\n',
            `  split: train\n  order: s3://${BUCKET}/rlvr-experiments/curricula/missing.txt\n`,
          ],
        ],
        at: 'order:',
        message: /no order file at/,
      },
      {
        kind: 'Hub-only dataset in a network-isolated job',
        edit: [
          ['dataset: gsm8k', 'dataset: humaneval'],
          ['max_runtime: 24h', 'max_runtime: 24h\n  network_isolation: true'],
        ],
        at: 'dataset: humaneval',
        message:
          /"humaneval" loader only downloads from the Hugging Face Hub.*a network-isolated job cannot load it/,
      },
      {
        kind: 'multi-node without a shared folder for the trainer',
        edit: [['max_runtime: 24h', 'max_runtime: 24h\n  instance_count: 2']],
        at: 'instance_count',
        message: /2 instances: grpo-sft writes its torchtitan job configs into \$RLVR_TITAN_CONFIG_DIR/,
      },
      {
        kind: 'order file left out of the source',
        edit: [['  split: train\n', '  split: train\n  order: data/order.txt\n']],
        at: 'order:',
        message: /not shipped with the job/,
        files: { 'data/order.txt': '1\n' },
      },
    ];

    it.each(cases.map((c) => [c.kind, c]))('%s', async (_kind, c) => {
      const text = gsm8kWith(...c.edit);
      const repo = makeTrainerRepo({ config: text });
      for (const [rel, body] of Object.entries(c.files ?? {})) {
        fs.mkdirSync(path.dirname(path.join(repo.root, rel)), { recursive: true });
        fs.writeFileSync(path.join(repo.root, rel), body);
      }
      const written = fs.readFileSync(repo.configPath, 'utf8');
      const { code, stderr } = await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE], {
        env: cliEnv(),
        cwd: repo.root,
      });
      expect(stderr).toMatch(c.message);
      expect(code).toBe(2);
      expect(stderr).toContain(`configs/gsm8k.yaml:${lineOf(written, c.at)}:`);
      expect(stderr).not.toMatch(/\n\s+at .*:\d+:\d+\)?\n/);
      expect(await jobNames(moto.endpoint)).toEqual([]);
      expect(await allKeys(moto.endpoint)).toEqual([...SEEDED_KEYS].sort());
      expect(fs.existsSync(path.join(repo.root, 'docs', 'job_log.md'))).toBe(false);
    });

    it('eval config with tensor parallelism 2 (position in the eval config)', async () => {
      const repo = makeTrainerRepo({ files: {} });
      const evalFile = path.join(repo.root, 'configs', 'eval', 'lm_eval_watch.yaml');
      const evalText = fs
        .readFileSync(evalFile, 'utf8')
        .replace('tensor_parallel_size: 1', 'tensor_parallel_size: 2');
      fs.writeFileSync(evalFile, evalText);
      const { code, stderr } = await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE], {
        env: cliEnv(),
        cwd: repo.root,
      });
      expect(code).toBe(2);
      expect(stderr).toContain(
        `configs/eval/lm_eval_watch.yaml:${lineOf(evalText, 'tensor_parallel_size: 2')}:`,
      );
      expect(await jobNames(moto.endpoint)).toEqual([]);
      expect(await allKeys(moto.endpoint)).toEqual([...SEEDED_KEYS].sort());
    });

    it('missing settings', async () => {
      const repo = makeTrainerRepo();
      const env = bareEnv({ ...moto.env }); // no RLVR_* and no published parameter
      const { code, stderr } = await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE], {
        env,
        cwd: repo.root,
      });
      expect(code).toBe(2);
      expect(stderr).toMatch(
        /setting bucket: not set\n\s+Pass --bucket, set RLVR_BUCKET, or deploy the infrastructure stack[\s\S]*\/rlvr-infra\/settings does not exist in us-west-2/,
      );
      expect(await allKeys(moto.endpoint)).toEqual([...SEEDED_KEYS].sort());
    });
  });

  it('finds its settings and templates in the parameters the stack publishes', async () => {
    await publishSettings(moto.endpoint);
    const { ssm } = clients(moto.endpoint);
    await ssm.send(
      new PutParameterCommand({
        Name: templateParameterName('p4de-train-eval'),
        Type: 'String',
        Value: JSON.stringify({
          instance_type: 'ml.p4d.24xlarge',
          train_gpus: '0-5',
          eval_gpus: '6-7',
          max_runtime: '12h',
        }),
      }),
    );
    const repo = makeTrainerRepo();
    const { code, stdout } = await runCli(
      ['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--dry-run', '--json'],
      {
        env: bareEnv({ ...moto.env }),
        cwd: repo.root,
      },
    );
    expect(code).toBe(0);
    const json = JSON.parse(stdout);
    expect(json.settings.bucket).toEqual({ value: BUCKET, source: 'parameter /rlvr-infra/settings' });
    expect(json.createTrainingJobRequest.RoleArn).toBe(ROLE_ARN);
    expect(json.template).toEqual({ name: 'p4de-train-eval', from: 'parameter' });
    expect(json.createTrainingJobRequest.ResourceConfig.InstanceType).toBe('ml.p4d.24xlarge');
    expect(json.preflight.ran).toBe(true);
    expect(json.preflight.checks.every((c: { ok: boolean }) => c.ok)).toBe(true);
    expect(await allKeys(moto.endpoint)).toEqual([...SEEDED_KEYS].sort()); // a dry-run writes nothing
  });

  it('a dry-run that reaches S3 runs the pre-flight, and a failure exits 2', async () => {
    const repo = makeTrainerRepo({ config: gsm8kWith([/Qwen\/Qwen3-1.7B-Base/g, 'Qwen/Qwen3-8B-Base']) });
    const { code, stderr } = await runCli(['submit', 'configs/gsm8k.yaml', '--dry-run'], {
      env: cliEnv(),
      cwd: repo.root,
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(/Pre-flight failed[\s\S]*no model at/);
  });

  it('concurrent submits in the same second get distinct names, one source upload and intact log rows', async () => {
    const repo = makeTrainerRepo();
    const now = () => new Date(Date.UTC(2026, 10, 22, 12, 0, 0));
    const results = await Promise.all(
      [1, 2, 3, 4].map((i) => submit(inProcess(repo.configPath, { now, description: `run ${i}` }))),
    );
    const names = results.map((r) => r.jobName).sort();
    const base = jobNameCandidate('annotations-adhoc', now(), 1);
    expect(names).toEqual([base, `${base}-2`, `${base}-3`, `${base}-4`]);
    expect(await jobNames(moto.endpoint)).toEqual(names);
    const keys = await allKeys(moto.endpoint);
    expect(keys.filter((k) => k.startsWith('rlvr-experiments/source/'))).toHaveLength(1);
    for (const name of names) {
      const config = await clients(moto.endpoint).s3.send(
        new GetObjectCommand({ Bucket: BUCKET, Key: `rlvr-experiments/jobs/${name}/reservation.json` }),
      );
      const reservation = JSON.parse(await config.Body!.transformToString());
      const result = results.find((r) => r.jobName === name)!;
      expect(reservation.submitId).toBe(result.plan.submitId);
    }
    const log = fs.readFileSync(path.join(repo.root, 'docs', 'job_log.md'), 'utf8');
    const rows = log.split('\n').filter((l) => l.startsWith('| annotations-adhoc-'));
    expect(rows.map((r) => r.split(' | ')[0].slice(2)).sort()).toEqual(names);
    expect(rows.every((r) => r.split('|').length === 9)).toBe(true);
    expect(log.match(/\| Job Name \|/g)).toHaveLength(1);
  });

  it('concurrent CLI processes never garble the job log', async () => {
    const repo = makeTrainerRepo();
    const runs = await Promise.all(
      [1, 2, 3].map((i) =>
        runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--description', `cli ${i}`], {
          env: cliEnv(),
          cwd: repo.root,
        }),
      ),
    );
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0]);
    const names = await jobNames(moto.endpoint);
    expect(new Set(names).size).toBe(3);
    const rows = fs
      .readFileSync(path.join(repo.root, 'docs', 'job_log.md'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('| annotations-adhoc-'));
    expect(rows.map((r) => r.split(' | ')[0].slice(2)).sort()).toEqual(names);
    expect(rows.map((r) => r.split(' | ')[2]).sort()).toEqual(['cli 1', 'cli 2', 'cli 3']);
  });

  it('skips a name already taken in SageMaker (names are never reused)', async () => {
    const repo = makeTrainerRepo();
    const now = () => new Date(Date.UTC(2026, 10, 22, 13, 0, 0));
    const base = jobNameCandidate('annotations-adhoc', now(), 1);
    const first = await submit(inProcess(repo.configPath, { now }));
    expect(first.jobName).toBe(base);
    const second = await submit(inProcess(repo.configPath, { now }));
    expect(second.jobName).toBe(`${base}-2`);
  });

  /** An SDK middleware that answers the first `times` CreateTrainingJob calls with an error. */
  function failCreate(name: string, times: number, counter: { calls: number }) {
    return (client: unknown) => {
      if ((client as { constructor: { name: string } }).constructor.name !== 'SageMakerClient') return;
      (client as SageMakerClient).middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === CreateTrainingJobCommand.name) {
            counter.calls++;
            if (counter.calls <= times) {
              throw Object.assign(new Error(`${name} injected by the test`), {
                name,
                $fault: 'client',
                $metadata: { httpStatusCode: 400 },
              });
            }
          }
          return next(args);
        },
        { step: 'deserialize', name: 'inject-fault' },
      );
    };
  }

  it('retries throttling on CreateTrainingJob with backoff and still succeeds', async () => {
    const repo = makeTrainerRepo();
    const counter = { calls: 0 };
    const result = await submit(
      inProcess(repo.configPath, { configureClients: failCreate('ThrottlingException', 2, counter) }),
    );
    expect(counter.calls).toBe(3);
    expect(await jobNames(moto.endpoint)).toEqual([result.jobName]);
  });

  it('on ResourceInUse takes the next name and removes the uploads made under the taken one', async () => {
    const repo = makeTrainerRepo();
    const now = () => new Date(Date.UTC(2026, 10, 22, 14, 0, 0));
    const counter = { calls: 0 };
    const result = await submit(
      inProcess(repo.configPath, { now, configureClients: failCreate('ResourceInUse', 1, counter) }),
    );
    const base = jobNameCandidate('annotations-adhoc', now(), 1);
    expect(result.jobName).toBe(`${base}-2`);
    expect(await jobNames(moto.endpoint)).toEqual([`${base}-2`]);
    const keys = await allKeys(moto.endpoint);
    expect(keys.filter((k) => k.includes(`/jobs/${base}/`))).toEqual([
      `rlvr-experiments/jobs/${base}/reservation.json`,
    ]);
    const rows = fs
      .readFileSync(path.join(repo.root, 'docs', 'job_log.md'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('| annotations'));
    expect(rows).toHaveLength(1);
  });

  it('reports ResourceLimitExceeded with the quota name, without retrying, and cleans up', async () => {
    const repo = makeTrainerRepo();
    const counter = { calls: 0 };
    const err = await submit(
      inProcess(repo.configPath, { configureClients: failCreate('ResourceLimitExceeded', 99, counter) }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RuntimeFailure);
    expect((err as RuntimeFailure).exitCode).toBe(1);
    expect((err as Error).message).toMatch(
      /quota "ml.p4de.24xlarge for training job usage" in us-west-2 is used up/,
    );
    expect(counter.calls).toBe(1);
    expect(await jobNames(moto.endpoint)).toEqual([]);
    const keys = await allKeys(moto.endpoint);
    expect(keys.filter((k) => k.includes('/jobs/'))).toEqual([]);
    expect(fs.existsSync(path.join(repo.root, 'docs', 'job_log.md'))).toBe(false);
  });

  it('a run-time failure exits 1 with the cause and no stack trace', async () => {
    const repo = makeTrainerRepo();
    const env = cliEnv({ RLVR_BUCKET: 'no-such-bucket-here' });
    const { code, stderr } = await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE], {
      env,
      cwd: repo.root,
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: Could not run the pre-flight checks in S3: .*NoSuchBucket/m);
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
