import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../helpers/cli';
import { EVAL_DIR, gsm8kWith, lineOf, tempDir, writeConfig } from '../helpers/fixtures';

/* `rlvr lint` findings a hostile reading turned up: near-duplicate keys, misspelt keys of the chosen trainer, --rules with configs, findings without an id. */

interface JsonProblem {
  readonly where: string;
  readonly message: string;
  readonly hint?: string;
  readonly rule?: string;
}
interface JsonReport {
  readonly file: string;
  readonly errors: JsonProblem[];
  readonly warnings: JsonProblem[];
}

const lintJson = async (...files: string[]) => {
  const { code, stdout } = await runCli(['lint', '--json', ...files]);
  return { code, reports: JSON.parse(stdout).reports as JsonReport[] };
};

describe('rlvr lint: keys', () => {
  const dir = tempDir('rlvr-lint-');

  it('finds a near-duplicate key beside the key it resembles (chekpoint_interval beside checkpoint_interval)', async () => {
    const text = gsm8kWith([
      '  checkpoint_interval: 20\n',
      '  checkpoint_interval: 20\n  chekpoint_interval: 5\n',
    ]);
    const file = writeConfig(dir, 'beside.yaml', text);
    const { code, stdout } = await runCli(['lint', file]);
    // An error: the trainer reads checkpoint_interval, so one of the two values is not read and the job
    // may run on the other (allowable with a reason, as any RLVR102).
    expect(code).toBe(2);
    expect(stdout).toContain(
      `error RLVR102: ${file}:${lineOf(text, 'chekpoint_interval')}:3: training.chekpoint_interval:`,
    );
    expect(stdout).toMatch(
      /"chekpoint_interval" is a likely misspelling of "checkpoint_interval", which is also set/,
    );
  });

  it('refuses a misspelling beside the key it resembles (max_stalenes: 0 beside max_staleness: 1 runs on 1); keys the trainer reads are never flagged against each other', async () => {
    const text = gsm8kWith(['  max_staleness: 1\n', '  max_staleness: 1\n  max_stalenes: 0\n']);
    const r = await runCli(['lint', writeConfig(dir, 'stale-beside.yaml', text)]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(
      /error RLVR102: .*training\.max_stalenes: "max_stalenes" is a likely misspelling of "max_staleness", which is also set/,
    );
    // The example sets top_k and top_p, which differ by a letter and are both read: no finding.
    const both = gsm8kWith();
    expect(both).toMatch(/top_p: .*\n {2}top_k: /);
    const ok = await runCli(['lint', writeConfig(dir, 'top-kp.yaml', both)]);
    expect(ok.stdout).not.toMatch(/RLVR102/);
  });

  it('refuses a misspelling of a key the chosen trainer reads, though the trainer has a default for it', async () => {
    // grpo-legacy reads training.max_staleness with a default: the job would run on it, unnoticed.
    const legacy = (extra = '') =>
      gsm8kWith(
        ['  max_staleness: 1\n', '  max_stalenes: 0\n'],
        ['launcher:\n', `launcher:\n  trainer: grpo-legacy\n${extra}`],
      );
    const file = writeConfig(dir, 'stale.yaml', legacy());
    const { code, stdout } = await runCli(['lint', file]);
    expect(code).toBe(2);
    expect(stdout).toMatch(
      /error RLVR102: .*training\.max_stalenes: unknown key "max_stalenes" — did you mean "max_staleness"\?/,
    );
    expect(stdout).toMatch(/train_grpo_LEGACY_DO_NOT_USE\.py reads "max_staleness", not "max_stalenes"/);
    expect(stdout).toMatch(/launcher\.allow: \{RLVR102: "<why>"\}/);
    // Allowed, with a reason: not an error.
    const allowed = writeConfig(
      dir,
      'stale-allowed.yaml',
      legacy('  allow: {RLVR102: "read by our fork"}\n'),
    );
    const ok = await runCli(['lint', allowed]);
    expect(ok.stdout).toMatch(/allowed RLVR102: .*max_stalenes/);
    expect(ok.code).toBe(0);
  });

  it('keeps a misspelling of a key only another trainer reads a warning', async () => {
    // jsd_alpha is read by the distillation trainers, not by train_grpo_sft.py.
    const text = gsm8kWith(['  alpha_sft: 0.0\n', '  alpha_sft: 0.0\n  jsd_alphaa: 0.5\n']);
    const { code, reports } = await lintJson(writeConfig(dir, 'other.yaml', text));
    expect(code).toBe(0);
    expect(reports[0].warnings.map((w) => [w.rule, w.where])).toEqual([['RLVR102', 'training.jsd_alphaa']]);
  });
});

describe('rlvr lint --rules', () => {
  it('takes no config: exit 2 saying so, rather than passing over it', async () => {
    const dir = tempDir('rlvr-lint-');
    const bad = writeConfig(
      dir,
      'bad.yaml',
      gsm8kWith(['skip_chat_template: true', 'skip_chat_template: false']),
    );
    const { code, stdout, stderr } = await runCli(['lint', '--rules', bad]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--rules lists the rules and takes no config/);
    expect(stdout).not.toMatch(/RLVR101/);
  });

  it('lists the ids of what reading a file finds', async () => {
    const { stdout } = await runCli(['lint', '--rules']);
    expect(stdout).toMatch(/^RLVR100 +error +config-schema +\S/m);
    expect(stdout).toMatch(/^RLVR200 +error +eval-config-schema +\S/m);
    expect(stdout).toMatch(/^RLVR123 +error +launcher-allow +\S/m);
  });
});

describe('rlvr lint: every finding has a rule id', () => {
  it('on a set of bad training and eval configs', async () => {
    const dir = tempDir('rlvr-lint-');
    const launcher = (lines: string): [string, string] => ['launcher:\n', `launcher:\n${lines}`];
    const lmEval = fs.readFileSync(path.join(EVAL_DIR, 'lm_eval_watch.yaml'), 'utf8');
    const configs: Record<string, string> = {
      'not-yaml.yaml': 'roles: [\n',
      'a-list.yaml': '- roles\n',
      'twice-different.yaml': gsm8kWith(['  max_steps: 200\n', '  max_steps: 200\n  max_steps: 300\n']),
      'twice-same.yaml': gsm8kWith(['  max_steps: 200\n', '  max_steps: 200\n  max_steps: 200\n']),
      'wrong-type.yaml': gsm8kWith(['max_runtime: 24h', 'max_runtime: forever']),
      'unknown-launcher-key.yaml': gsm8kWith(launcher('  instance_cout: 2\n')),
      'unknown-trainer.yaml': gsm8kWith(launcher('  trainer: nope\n')),
      'allow-unknown.yaml': gsm8kWith(launcher('  allow: {RLVR999: "why"}\n')),
      'allow-116.yaml': gsm8kWith(launcher('  allow: {RLVR116: "why"}\n')),
      'allow-no-reason.yaml': gsm8kWith(launcher('  allow: {RLVR120: ""}\n')),
      'acknowledge-unknown.yaml': gsm8kWith(launcher('  acknowledge: [sampling-sed]\n')),
      'acknowledge.yaml': gsm8kWith(
        ['  n: 8\n', '  n: 8\n  seed: 7\n'],
        launcher('  acknowledge: [sampling-seed]\n'),
      ),
      'rules.yaml': gsm8kWith(
        ['skip_chat_template: true', 'skip_chat_template: false'],
        ['  alpha_grpo: 1.0\n', ''],
        ['  checkpoint_interval: 20\n', '  checkpoint_interval: 20\n  chekpoint_interval: 5\n'],
        ['data_parallel_shard_degree: 2', 'dp_shard: 2'],
      ),
      'eval-wrong-type.yaml':
        lmEval.replace(/^(\s*)tensor_parallel_size: .*$/m, '$1tensor_parallel_size: [1]') +
        '\nwatch_typo: 1\n',
      'eval-twice.yaml': `${lmEval}\n${lmEval.split('\n').find((l) => /^\w/.test(l))}\n`,
    };
    const files = Object.entries(configs).map(([name, text]) => writeConfig(dir, name, text));
    const { code, reports } = await lintJson(...files);
    expect(code).toBe(2);
    const findings = reports.flatMap((r) =>
      [...r.errors, ...r.warnings].map((p) => ({ file: path.basename(r.file), ...p })),
    );
    // Every config above makes at least one finding.
    expect(new Set(findings.map((f) => f.file))).toEqual(new Set(Object.keys(configs)));
    expect(findings.filter((f) => !/^RLVR\d{3}$/.test(f.rule ?? ''))).toEqual([]);
  });
});
