import * as fs from 'node:fs';
import * as path from 'node:path';
import { CreateTrainingJobCommand, type SageMakerClient } from '@aws-sdk/client-sagemaker';
import { createProgram, leafCommands, optionsOf } from '../../bin/program';
import { parseSweepFlag, planSweep, submitSweep } from '../../lib/training';
import { openSubmitSession } from '../../lib/submission';
import { SweepIncomplete } from '../../lib/training/sweep-submit';
import { runCli } from '../helpers/cli';
import { IMAGE, jobNames } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { gsm8kWith, lineOf, makeTrainerRepo, tempDir } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable } from '../helpers/moto';
import { assertNothingCreated, snapshot } from '../helpers/nothing-created';

/*
 * Issue 19, the CLI's part: no flag slip or hostile input launches a job. Every row runs the real CLI
 * against moto in a fresh trainer repository and asserts the exit code, a fragment of the message,
 * the config position where there is one, and that nothing was created (no job, no object, no open
 * multipart upload, no local file in the repository or the watched folders).
 */

const CONFIG = 'configs/gsm8k.yaml';
const JOB = 'annotations-adhoc-20260101-000000';

/** Values for a command's positional arguments, by the argument's name. */
const ARGUMENTS: Record<string, string[]> = {
  config: [CONFIG],
  job: [JOB],
  kind: ['model'],
  'local-path': ['configs'],
  'job-or-fragment': ['annotations'],
};

/** After the option under test: another option of the same command (a boolean one when it has one). */
function follower(
  options: readonly { long?: string; required?: boolean; optional?: boolean }[],
  not: string,
) {
  const longs = options.filter((o) => o.long && o.long !== not);
  for (const preferred of ['--dry-run', '--json', '--debug'])
    if (longs.some((o) => o.long === preferred)) return preferred;
  return (longs.find((o) => !o.required && !o.optional) ?? longs[0]).long!;
}

/**
 * One row for every value-taking option of every command, followed by another of that command's
 * options: generated from the commands themselves, so a new option is covered as it is added.
 */
function valueOptionRows(): { name: string; args: string[]; option: string }[] {
  const rows: { name: string; args: string[]; option: string }[] = [];
  for (const { path: words, command } of leafCommands(createProgram([]))) {
    const positionals = command.registeredArguments
      .filter((a) => a.required)
      .flatMap((a) => ARGUMENTS[a.name()] ?? ['x']);
    const options = optionsOf(command);
    for (const option of options.filter((o) => o.required)) {
      const long = option.long!;
      const image = words[0] === 'submit' && long !== '--image' ? ['--image', IMAGE] : [];
      const next = follower(options, long);
      rows.push({
        name: `${words.join(' ')} ${long} ${next}`,
        args: [...words, ...positionals, ...image, long, next],
        option: long,
      });
    }
  }
  return rows;
}

interface Case {
  readonly name: string;
  readonly args: readonly string[];
  /** The training config's text (else the GSM8K example), as text or bytes. */
  readonly config?: string | Buffer;
  readonly files?: Record<string, string | Buffer>;
  readonly env?: Record<string, string>;
  readonly message: RegExp;
  /**
   * The position the message names: the file (from the repository's root; else the training config),
   * a needle of its line, and the column when it matters.
   */
  readonly at?: { readonly file?: string; readonly needle: string; readonly column?: number };
  /** Within this many milliseconds (the CLI's start included). */
  readonly withinMs?: number;
}

const BOMB = [
  'a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
  ...Array.from({ length: 9 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(9).fill(`*a${i}`).join(', ')}]`),
].join('\n');

/** The GSM8K example with its `lr` line's value replaced by raw bytes. */
function withBytes(bytes: number[]): Buffer {
  const [before, after] = gsm8kWith().split('lr: 1.0e-6');
  return Buffer.concat([Buffer.from(`${before}lr: "é`), Buffer.from(bytes), Buffer.from(`"${after}`)]);
}

const tooBig = `${gsm8kWith()}\n${'# padding padding padding padding padding padding padding\n'.repeat(20000)}`;

const CASES: Case[] = [
  // 1. The issue's two slips, by name (the generated rows below cover every other option).
  {
    name: '--image --dry-run (the value forgotten)',
    args: ['submit', CONFIG, '--image', '--dry-run'],
    message: /--image needs a value/,
  },
  {
    name: '--description --dry-run',
    args: ['submit', CONFIG, '--image', IMAGE, '--description', '--dry-run'],
    message: /--description needs a value/,
  },
  // 2. Image references.
  {
    name: "--image 'not an image'",
    args: ['submit', CONFIG, '--image', 'not an image'],
    message: /--image "not an image": .*expected repository\[:tag\] or repository@sha256:<64 hex digits>/,
  },
  {
    name: '--image foo@sha256:xyz',
    args: ['submit', CONFIG, '--image', 'foo@sha256:xyz'],
    message: /--image "foo@sha256:xyz": its digest "sha256:xyz" is not sha256:.*expected repository\[:tag\]/,
  },
  {
    name: '--image with upper case in the repository',
    args: ['submit', CONFIG, '--image', 'Acme/Trainer:1'],
    message: /--image "Acme\/Trainer:1": .*lower case/,
  },
  {
    name: 'launcher.image: foo@sha256:xyz',
    args: ['submit', CONFIG],
    config: gsm8kWith(['  max_runtime: 24h', '  max_runtime: 24h\n  image: foo@sha256:xyz']),
    message: /launcher\.image: its digest "sha256:xyz".*expected repository\[:tag\] or repository@sha256/,
    at: { needle: 'image: foo@sha256:xyz', column: 10 },
  },
  // 3. Sweeps over the limit.
  {
    name: 'a sweep of 1,000 combinations',
    args: [
      'submit',
      CONFIG,
      '--image',
      IMAGE,
      '--sweep',
      `optimizer.lr=${Array.from({ length: 10 }, (_, i) => `${i + 1}e-6`).join(',')}`,
      '--sweep',
      `loss.beta=${Array.from({ length: 10 }, (_, i) => `${(i + 1) / 1000}`).join(',')}`,
      '--sweep',
      `loss.eps=${Array.from({ length: 10 }, (_, i) => `${(i + 1) / 10}`).join(',')}`,
    ],
    message: /10 × 10 × 10 = 1000 combinations would create 1000 jobs, more than the 64 .*--max-jobs 1000/,
  },
  {
    name: 'a sweep over a lowered --max-jobs',
    args: ['submit', CONFIG, '--image', IMAGE, '--sweep', 'optimizer.lr=1e-6,2e-6,3e-6', '--max-jobs', '2'],
    message: /3 combinations would create 3 jobs, more than the 2 a sweep may create/,
  },
  {
    name: '--max-jobs 0',
    args: ['submit', CONFIG, '--image', IMAGE, '--sweep', 'optimizer.lr=1e-6,2e-6', '--max-jobs', '0'],
    message: /--max-jobs 0: a positive whole number/,
  },
  // 4. Local paths the submit writes, checked before the job is created.
  {
    name: 'the job log is a folder',
    args: ['submit', CONFIG, '--image', IMAGE, '--job-log', 'configs'],
    message: /--job-log: the job log \S*\/configs cannot be written: it is a folder/,
  },
  {
    name: 'the job log (RLVR_JOB_LOG) is a folder',
    args: ['submit', CONFIG, '--image', IMAGE],
    env: { RLVR_JOB_LOG: 'configs' },
    message: /RLVR_JOB_LOG: the job log \S*\/configs cannot be written: it is a folder/,
  },
  {
    name: 'the job log is under /proc',
    args: ['submit', CONFIG, '--image', IMAGE, '--job-log', '/proc/self/job_log.md'],
    message: /the job log \/proc\/self\/job_log\.md cannot be written: it is under \/proc, a system folder/,
    withinMs: 20000,
  },
  {
    name: 'the job log is under /sys',
    args: ['submit', CONFIG, '--image', IMAGE, '--job-log', '/sys/kernel/job_log.md'],
    message: /the job log \/sys\/kernel\/job_log\.md cannot be written: it is under \/sys/,
  },
  {
    name: 'the job log is below a file (its folder cannot be made)',
    args: ['submit', CONFIG, '--image', IMAGE, '--job-log', 'pyproject.toml/job_log.md'],
    message: /the job log \S*pyproject\.toml\/job_log\.md cannot be written: \S*pyproject\.toml is a file/,
  },
  // 5. What the launcher reads as YAML: the training config, the eval config, rlvr-trainers.yaml.
  {
    name: 'a config with bytes that are not UTF-8',
    args: ['submit', CONFIG, '--image', IMAGE],
    config: withBytes([0xff, 0xfe]),
    message: /is not UTF-8 text[\s\S]*bytes that are not UTF-8 \(ff fe/,
    at: { needle: 'lr: "', column: 15 },
  },
  {
    name: 'a config with a truncated UTF-8 sequence',
    args: ['submit', CONFIG, '--image', IMAGE],
    config: withBytes([0xe2, 0x82]),
    message: /bytes that are not UTF-8 \(e2 82/,
    at: { needle: 'lr: "', column: 15 },
  },
  {
    name: 'a config with a NUL',
    args: ['submit', CONFIG, '--image', IMAGE],
    config: gsm8kWith(['max_steps: 200', 'max_steps: 2\u000000']),
    message: /a NUL character \(U\+0000\)/,
    at: { needle: 'max_steps: 2', column: 15 },
  },
  {
    name: 'an alias bomb (billion laughs) in the config',
    args: ['submit', CONFIG, '--image', IMAGE],
    config: `${gsm8kWith()}\n${BOMB}\n`,
    message: /aliases expand to more than 10000 values/,
    at: { needle: 'a4: &a4', column: 10 },
    withinMs: 20000,
  },
  {
    name: 'a config over 1 MiB',
    args: ['submit', CONFIG, '--image', IMAGE],
    config: tooBig,
    message: /too large for a config[\s\S]*passes the limit of 1 MiB here/,
  },
  {
    name: 'an eval config with a NUL',
    args: ['submit', CONFIG, '--image', IMAGE],
    files: { 'configs/eval/lm_eval_watch.yaml': 'seed: 42\noutput_dir: evals\u0000\n' },
    message: /a NUL character/,
    at: { file: 'configs/eval/lm_eval_watch.yaml', needle: 'output_dir', column: 18 },
  },
  {
    name: 'an alias bomb in rlvr-trainers.yaml',
    args: ['submit', CONFIG, '--image', IMAGE],
    files: { 'rlvr-trainers.yaml': `${BOMB}\n` },
    message: /aliases expand to more than 10000 values/,
    at: { file: 'rlvr-trainers.yaml', needle: 'a4: &a4', column: 10 },
  },
  // 6. Tags.
  {
    name: '--tag foo (no =value)',
    args: ['submit', CONFIG, '--image', IMAGE, '--tag', 'foo'],
    message: /--tag foo: expected the form --tag key=value/,
  },
  {
    name: '--tag =value (no key)',
    args: ['submit', CONFIG, '--image', IMAGE, '--tag', '=annotations'],
    message: /--tag =annotations: expected the form --tag key=value/,
  },
  // 7. A trainer command whose script the job would not ship.
  {
    name: '--trainer-command naming a script not in the source',
    args: ['submit', CONFIG, '--image', IMAGE, '--trainer-command', 'python entrypoints/nope.py {config}'],
    message:
      /--trainer-command: the trainer command .* runs entrypoints\/nope\.py, which is not in the shipped source/,
  },
  {
    name: 'launcher.trainer_command naming a script not in the source',
    args: ['submit', CONFIG, '--image', IMAGE],
    config: gsm8kWith([
      '  max_runtime: 24h',
      '  max_runtime: 24h\n  trainer_command: python entrypoints/nope.py {config}',
    ]),
    message: /runs entrypoints\/nope\.py, which is not in the shipped source/,
    at: { needle: 'trainer_command: python' },
  },
];

const GENERATED = valueOptionRows();

describeWithPeer('moto_server', motoAvailable())('bad input to the CLI creates nothing', () => {
  const emulator = useEmulator();

  /** A fresh trainer repository with the case's files, and a folder outside it the test watches. */
  function setUp(c: Pick<Case, 'config' | 'files'>) {
    const repo = makeTrainerRepo({ config: typeof c.config === 'string' ? c.config : undefined });
    const write = (rel: string, body: string | Buffer) => fs.writeFileSync(path.join(repo.root, rel), body);
    if (Buffer.isBuffer(c.config)) write(CONFIG, c.config);
    for (const [rel, body] of Object.entries(c.files ?? {})) write(rel, body);
    return repo;
  }

  it.each(CASES.map((c) => [c.name, c] as const))('%s: exit 2, nothing created', async (_name, c) => {
    const repo = setUp(c);
    const results = tempDir('rlvr-results-');
    const before = await snapshot(emulator.moto.endpoint, [repo.root, results]);
    const started = Date.now();
    const { code, stderr } = await runCli([...c.args], { env: emulator.cliEnv(c.env), cwd: repo.root });
    const elapsed = Date.now() - started;
    expect(stderr).toMatch(c.message);
    expect(code).toBe(2);
    expect(stderr).not.toMatch(/\n\s+at .*:\d+:\d+\)?\n/);
    if (c.at) {
      const file = c.at.file ?? CONFIG;
      const line = lineOf(fs.readFileSync(path.join(repo.root, file), 'latin1'), c.at.needle);
      expect(stderr).toContain(`${file}:${line}:${c.at.column ?? ''}`);
    }
    if (c.withinMs) expect(elapsed).toBeLessThan(c.withinMs);
    await assertNothingCreated(emulator.moto.endpoint, before);
  });

  it.each(GENERATED.map((r) => [r.name, r] as const))(
    '%s: the value forgotten, exit 2, nothing created',
    async (_name, row) => {
      const repo = setUp({});
      const before = await snapshot(emulator.moto.endpoint, [repo.root]);
      const { code, stderr } = await runCli(row.args, { env: emulator.cliEnv(), cwd: repo.root });
      expect(stderr).toContain(`${row.option} needs a value`);
      expect(code).toBe(2);
      await assertNothingCreated(emulator.moto.endpoint, before);
    },
  );

  it('covers every value-taking option of every command (generated from the commands)', () => {
    const options = new Set(GENERATED.map((r) => `${r.args[0]} ${r.option}`));
    for (const must of ['submit --image', 'submit --description', 'submit --tag', 'submit --max-jobs']) {
      expect(options).toContain(must);
    }
    expect(GENERATED.some((r) => r.args[0] === 'image' && r.args[1] === 'push')).toBe(true);
  });

  it('takes a value written as --option=value even when it looks like an option', async () => {
    const repo = setUp({});
    const before = await snapshot(emulator.moto.endpoint, [repo.root]);
    const { code, stdout, stderr } = await runCli(
      ['submit', CONFIG, `--image=${IMAGE}`, '--description=--json', '--dry-run'],
      { env: emulator.cliEnv(), cwd: repo.root },
    );
    expect(stderr).not.toMatch(/^error/m);
    expect(code).toBe(0);
    expect(stdout).toMatch(/dry run: nothing was created/);
    expect(stdout).toContain('--json');
    await assertNothingCreated(emulator.moto.endpoint, before);
  });

  it('a dry run warns of a job log a submit could not write (and creates nothing)', async () => {
    const repo = setUp({});
    const before = await snapshot(emulator.moto.endpoint, [repo.root]);
    const args = ['submit', CONFIG, '--image', IMAGE, '--job-log', 'configs', '--dry-run'];
    const { code, stdout } = await runCli(args, { env: emulator.cliEnv(), cwd: repo.root });
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /--job-log: the job log \S*\/configs cannot be written: it is a folder.*a submit would stop here/,
    );
    await assertNothingCreated(emulator.moto.endpoint, before);
  });

  it("a sweep's plan states its count", async () => {
    const repo = setUp({});
    const args = ['submit', CONFIG, '--image', IMAGE, '--sweep', 'optimizer.lr=1e-6,2e-6,3e-6', '--dry-run'];
    const text = await runCli(args, { env: emulator.cliEnv(), cwd: repo.root });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Sweep sweep-\d{8}-\d{6}: 3 jobs \(dry run: nothing was created\)/m);
    const asJson = await runCli([...args, '--json'], { env: emulator.cliEnv(), cwd: repo.root });
    expect(JSON.parse(asJson.stdout)).toMatchObject({ jobCount: 3 });
  });

  /** Every CreateTrainingJob after the first `allowed` fails, as a refused request would. */
  function failCreatesAfter(allowed: number) {
    let calls = 0;
    return (client: unknown) => {
      if ((client as { constructor: { name: string } }).constructor.name !== 'SageMakerClient') return;
      (client as SageMakerClient).middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === CreateTrainingJobCommand.name && ++calls > allowed) {
            throw Object.assign(new Error('ValidationException injected by the test'), {
              name: 'ValidationException',
              $fault: 'client',
              $metadata: { httpStatusCode: 400 },
            });
          }
          return next(args);
        },
        { step: 'deserialize', name: 'fail-creates-after' },
      );
    };
  }

  it('a sweep that fails midway names the jobs it created and how to stop them (exit 1)', async () => {
    const repo = setUp({});
    const input = emulator.submitInput(repo.configPath, { configureClients: failCreatesAfter(2) });
    const session = openSubmitSession(input);
    const err = await (async () => {
      const axes = [parseSweepFlag('optimizer.lr=1e-6,2e-6,3e-6,4e-6')];
      const sweep = await planSweep(repo.configPath, input, axes, session);
      return submitSweep(sweep, session);
    })()
      .catch((e: unknown) => e)
      .finally(() => session.close());
    const created = await jobNames(emulator.moto.endpoint);
    expect(created).toHaveLength(2);
    expect(err).toBeInstanceOf(SweepIncomplete);
    expect((err as SweepIncomplete).exitCode).toBe(1);
    expect((err as SweepIncomplete).created.map((r) => r.jobName).sort()).toEqual(created);
    const message = (err as Error).message;
    expect(message).toMatch(/^The sweep stopped at job 3 of 4: .*ValidationException/);
    for (const job of created) expect(message).toContain(`  rlvr stop ${job}\n`);
  });
});
