import { loadTrainingConfig, ruleOf, YamlFile, type TrainingConfig } from '../../lib/config';
import { TRAINING_RULES } from '../../lib/config/rules';
import { trainingConfigSchema } from '../../lib/config/training-schema';
import { checkTrainingConfig, RULE_DOCS } from '../../lib/config/checks';
import { ProblemsError, formatProblem } from '../../lib/errors';
import { BUILT_IN_PROFILES } from '../../lib/trainers';
import { gsm8kWith, lineOf, tempDir, writeConfig } from '../helpers/fixtures';

/* `launcher.allow: {RLVR…: reason}`: silences a rule's findings for one config, with a reason. */

const SEED: [string, string] = ['  n: 8\n', '  n: 8\n  seed: 7\n'];
const CHAT_TEMPLATE: [string, string] = ['skip_chat_template: true', 'skip_chat_template: false'];
const withLauncher = (lines: string): [string, string] => [
  '  max_runtime: 24h\n',
  `  max_runtime: 24h\n${lines}`,
];

function problemsOf(fn: () => unknown): ProblemsError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProblemsError) return err;
    throw err;
  }
  throw new Error('expected a ProblemsError');
}

function check(text: string, strict = false) {
  const file = YamlFile.parse(text, 'case.yaml');
  const config = trainingConfigSchema.parse(file.toJS()) as TrainingConfig;
  const grpoSft = BUILT_IN_PROFILES.find((p) => p.id === 'grpo-sft')!;
  return checkTrainingConfig(config, file, {
    selection: { profile: grpoSft, how: 'launcher.trainer', reason: 'test' },
    profiles: BUILT_IN_PROFILES,
    strict,
  });
}

describe('launcher.allow', () => {
  const dir = tempDir();

  it('silences an allowed finding and returns it, with the reason, where it is and what it says', () => {
    const text = gsm8kWith(
      SEED,
      withLauncher('  allow:\n    RLVR120: "checking the sampler is deterministic"\n'),
    );
    const file = writeConfig(dir, 'allowed.yaml', text);
    const loaded = loadTrainingConfig(file);
    expect(loaded.warnings.map(formatProblem).join()).not.toMatch(/sampling seed/);

    const result = check(text);
    expect(result.errors).toEqual([]);
    expect(result.allowed).toEqual([
      {
        rule: 'RLVR120',
        name: 'sampling-seed',
        reason: 'checking the sampler is deterministic',
        where: 'sampling.seed',
        message: 'a fixed sampling seed makes all n rollouts of a prompt identical (zero GRPO advantage)',
        location: { file: 'case.yaml', line: lineOf(text, '  seed: 7'), column: 3 },
      },
    ]);
  });

  it('silences only the rule it names', () => {
    const text = gsm8kWith(SEED, CHAT_TEMPLATE, withLauncher('  allow: {RLVR120: "sampler test"}\n'));
    const result = check(text);
    expect(result.errors.map(ruleOf)).toEqual(['RLVR119']);
    expect(result.allowed.map((a) => a.rule)).toEqual(['RLVR120']);
  });

  it('silences warnings too, and a likely typo under --strict', () => {
    const text = gsm8kWith(
      ['checkpoint_interval: 20', 'checkpoint_interval: 0'],
      ['  alpha_sft: 0.0\n', '  alpha_sft: 0.0\n  rollout_timeout_ss: 600\n'],
      withLauncher('  allow:\n    RLVR118: only the final model matters\n    RLVR102: read by our fork\n'),
    );
    const result = check(text, true);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.allowed.map((a) => a.rule).sort()).toEqual(['RLVR102', 'RLVR118']);
    const without = check(gsm8kWith(['checkpoint_interval: 20', 'checkpoint_interval: 0']));
    expect(without.warnings.map(ruleOf)).toEqual(['RLVR118']);
    expect(without.allowed).toEqual([]);
  });

  it('outranks launcher.acknowledge, its older form: still accepted, with a warning that says what to write', () => {
    const acknowledged = check(gsm8kWith(SEED, withLauncher('  acknowledge: [sampling-seed]\n')));
    expect(acknowledged.errors).toEqual([]);
    expect(acknowledged.warnings.map((w) => [ruleOf(w), w.message])).toEqual([
      [
        'RLVR123',
        'launcher.acknowledge is the older form of launcher.allow (no reason): still accepted, each acknowledged error stays a warning',
      ],
      [
        'RLVR120',
        'a fixed sampling seed makes all n rollouts of a prompt identical (zero GRPO advantage) (acknowledged: sampling-seed)',
      ],
    ]);
    expect(acknowledged.warnings[0].hint).toMatch(/^Write launcher\.allow: \{RLVR120: "<why>"\} instead/);
    const both = check(
      gsm8kWith(SEED, withLauncher('  acknowledge: [sampling-seed]\n  allow: {RLVR120: "sampler test"}\n')),
    );
    expect(both.warnings.map(ruleOf)).toEqual(['RLVR123']);
    expect(both.allowed.map((a) => a.rule)).toEqual(['RLVR120']);
  });

  it('speaks of launcher.allow alone: no hint of a rule finding names launcher.acknowledge', () => {
    // RLVR119, RLVR120 and RLVR122 at once; RLVR116 with a trainer that saves no checkpoints.
    const stops: [string, string] = [
      'stop: ["[Question]", "Question:", "Q:", "\\n\\n\\n", "\\n\\n"]',
      'stop: ["\\n\\n"]',
    ];
    const incidents = check(gsm8kWith(SEED, CHAT_TEMPLATE, stops));
    expect(incidents.errors.map(ruleOf).sort()).toEqual(['RLVR119', 'RLVR120', 'RLVR122']);
    for (const e of incidents.errors) {
      expect(e.hint).toContain(`launcher.allow: {${ruleOf(e)!}: "<why>"}`);
      expect(e.hint).not.toMatch(/acknowledge/);
    }
    const text = gsm8kWith(withLauncher('  trainer: grpo-minimal\n  allow: {RLVR116: "no checkpoints"}\n'));
    const err = problemsOf(() => loadTrainingConfig(writeConfig(dir, 'no-checkpoints.yaml', text)));
    const all = err.problems.filter((p) => ['RLVR116', 'RLVR123'].includes(ruleOf(p) ?? ''));
    expect(all.map(ruleOf).sort()).toEqual(['RLVR116', 'RLVR123']);
    for (const p of all) expect(`${p.message} ${p.hint ?? ''}`).not.toMatch(/acknowledge/);
  });

  const refused: [string, string, string, RegExp][] = [
    [
      'an unknown id',
      '  allow:\n    RLVR999: why\n',
      'RLVR999',
      /launcher\.allow\.RLVR999: no rule "RLVR999"$/m,
    ],
    [
      "a rule's name instead of its id",
      '  allow:\n    sampling-seed: why\n',
      'sampling-seed: why',
      /no rule "sampling-seed" — did you mean RLVR120 \(sampling-seed\)\?/,
    ],
    ['an eval rule', '  allow:\n    RLVR203: why\n', 'RLVR203', /no rule "RLVR203"/],
    ['a missing reason', '  allow:\n    RLVR120:\n', 'RLVR120', /launcher\.allow\.RLVR120: needs a reason/],
    [
      'a blank reason',
      '  allow:\n    RLVR120: "  "\n',
      'RLVR120',
      /launcher\.allow\.RLVR120: needs a reason/,
    ],
    [
      'a rule whose findings fail the job',
      '  allow:\n    RLVR104: why\n',
      'RLVR104',
      /RLVR104 \(required-key\) cannot be allowed: .*\n.*stay errors/,
    ],
    [
      'a rule whose findings lose the work',
      '  allow:\n    RLVR116: why\n',
      'RLVR116',
      /RLVR116 \(no-checkpoints\) cannot be allowed.*\n.*stay errors: fix the config\.$/,
    ],
    [
      'a list instead of a mapping',
      '  allow: [RLVR120]\n',
      'allow: [RLVR120]',
      /launcher\.allow: expected a mapping/,
    ],
  ];

  it.each(refused)('refuses %s at its file:line:column', (_what, lines, needle, message) => {
    const text = gsm8kWith(SEED, withLauncher(lines));
    const file = writeConfig(dir, `${_what.replace(/\W+/g, '-')}.yaml`, text);
    const err = problemsOf(() => loadTrainingConfig(file));
    expect(err.exitCode).toBe(2);
    const problem = err.problems.find((p) => message.test(formatProblem(p)));
    expect(problem).toBeDefined();
    expect(problem!.location).toEqual({ file, line: lineOf(text, needle), column: expect.any(Number) });
    // A refused allowance silences nothing.
    expect(err.problems.map(formatProblem).join()).toMatch(/a fixed sampling seed/);
  });

  it('allows only rules whose findings do not fail the job or lose its work', () => {
    const allowable = TRAINING_RULES.filter((r) => r.allowable).map((r) => r.name);
    expect(allowable).not.toContain('no-checkpoints');
    expect(allowable).not.toContain('required-key');
    expect(allowable).not.toContain('nothing-ends-training');
    expect(allowable).toContain('sampling-seed');
    expect(allowable).toContain('likely-typo');
  });

  it("keeps launcher.acknowledge's ids, each the doc line of the rule it names", () => {
    expect(Object.keys(RULE_DOCS).sort()).toEqual([
      'base-chat-template',
      'gsm8k-stop',
      'no-checkpoints',
      'sampling-seed',
    ]);
    for (const rule of TRAINING_RULES.filter((r) => r.acknowledge))
      expect(RULE_DOCS[rule.acknowledge!]).toBe(rule.doc);
  });

  it('tags every problem a rule found with its id, and schema problems with RLVR100', () => {
    const text = gsm8kWith(CHAT_TEMPLATE, ['max_runtime: 24h', 'max_runtime: forever']);
    const err = problemsOf(() => loadTrainingConfig(writeConfig(dir, 'tags.yaml', text)));
    expect(err.problems.map((p) => [p.where, ruleOf(p)])).toEqual([
      ['data_iter.skip_chat_template', 'RLVR119'],
      ['launcher.max_runtime', 'RLVR100'],
    ]);
  });
});
