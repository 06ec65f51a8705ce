import * as fs from 'node:fs';
import * as path from 'node:path';
import { EVAL_RULES, ruleOf, YamlFile, type TrainingConfig } from '../../lib/config';
import { TRAINING_RULES, type Severity } from '../../lib/config/rules';
import { trainingConfigSchema } from '../../lib/config/training-schema';
import { checkEvalConfig, checkTrainingConfig, type CheckResult } from '../../lib/config/checks';
import { evalConfigSchema, type EvalConfig } from '../../lib/config/eval-schema';
import { BUILT_IN_PROFILES, type TrainerProfile } from '../../lib/trainers';
import { EVAL_DIR, gsm8kWith } from '../helpers/fixtures';

/*
 * Every rule, by id: configs it must pass (a near miss where there is one) and configs it must flag,
 * as the severity it declares. The registry test below fails when a rule has no pair here.
 */

type Replacement = [string | RegExp, string];
/** A training config: the GSM8K example with replacements, run by a built-in profile (or a given one). */
interface TrainingCase {
  readonly edits?: Replacement[];
  readonly trainer?: string | TrainerProfile;
  readonly strict?: boolean;
  /** The finding's severity when it is not the rule's (a rule whose findings differ). */
  readonly severity?: Severity;
}
interface RulePair<C> {
  readonly good: C[];
  readonly bad: C[];
}

const profile = (id: string): TrainerProfile => BUILT_IN_PROFILES.find((p) => p.id === id)!;
/** A trainer profile that saves checkpoints but does not force the trainer role's `checkpoint.enable` on. */
const unforced: TrainerProfile = {
  ...profile('grpo-sft'),
  checkpoints: { ...profile('grpo-sft').checkpoints, titanEnableForced: undefined },
};
const mixed = (mode: string): Replacement => [
  'dataset: gsm8k\n',
  `dataset: mixed\n  ${mode}datasets:\n    - {name: gsm8k, weight: 0.5}\n    - {name: math, weight: 0.5}\n`,
];
const disableCheckpoints: Replacement = ['enable: true\n        folder', 'enable: false\n        folder'];

const TRAINING_CASES: Record<string, RulePair<TrainingCase>> = {
  RLVR101: { good: [{}], bad: [{ edits: [['lr: 1.0e-6', 'lr: 1e-6']] }] },
  RLVR102: {
    good: [{ edits: [['  alpha_sft: 0.0\n', '  alpha_sft: 0.0\n  rollout_timeout_s: 600\n']] }],
    bad: [
      // A key the chosen trainer reads: an error.
      { edits: [['  alpha_sft: 0.0\n', '  alpha_sft: 0.0\n  rollout_timeout_ss: 600\n']], severity: 'error' },
      { edits: [['  alpha_sft: 0.0\n', '  alpha_sft: 0.0\n  rollout_timeout_ss: 600\n']], strict: true },
      // Beside the key it resembles, which the chosen trainer reads: one of the two values is not read.
      {
        edits: [['checkpoint_interval: 20', 'checkpoint_interval: 20\n  chekpoint_interval: 50']],
        severity: 'error',
      },
      // A key only another trainer reads (jsd_alpha: the distillation trainers): a warning.
      { edits: [['  alpha_sft: 0.0\n', '  alpha_sft: 0.0\n  jsd_alphaa: 0.5\n']] },
      { edits: [['  alpha_sft: 0.0\n', '  alpha_sft: 0.0\n  jsd_alphaa: 0.5\n']], strict: true },
    ],
  },
  RLVR103: { good: [{}], bad: [{ edits: [['verifier:\n  num_workers: 8\n', '']] }] },
  RLVR104: { good: [{}], bad: [{ edits: [['checkpoint_interval: 20', 'checkpoint_intervall: 20']] }] },
  RLVR105: { good: [{}], bad: [{ edits: [['- name: reference', '- name: rollout']] }] },
  RLVR106: { good: [{}], bad: [{ edits: [['- name: trainer', '- name: learner']] }] },
  RLVR107: { good: [{}], bad: [{ edits: [['kind: titan', 'kind: vllm']] }] },
  RLVR108: {
    good: [
      {
        edits: [
          ['lr: 1.0e-6', 'lr: 0'],
          ['trainable: true', 'trainable: false'],
        ],
      },
    ],
    bad: [{ edits: [['lr: 1.0e-6', 'lr: 0']] }],
  },
  RLVR109: {
    good: [{}],
    bad: [{ edits: [['data_parallel_shard_degree: 2', 'dp_shard: 2']] }],
  },
  RLVR110: {
    good: [{ edits: [['name: grpo', 'name: dapo']] }],
    bad: [{ edits: [['name: grpo', 'name: ppo']] }],
  },
  RLVR111: {
    good: [{ edits: [mixed('')] }],
    bad: [
      { edits: [['dataset: gsm8k', 'dataset: gsm8kk']] },
      { edits: [mixed(''), ['{name: math,', '{name: maths,']] },
    ],
  },
  RLVR112: {
    good: [{ edits: [mixed('')] }],
    bad: [{ edits: [['dataset: gsm8k', 'dataset: mixed']] }],
  },
  RLVR113: {
    good: [{ edits: [mixed('mode: weighted\n  ')] }],
    bad: [{ edits: [mixed('mode: shuffled\n  ')] }],
  },
  RLVR114: { good: [{}], bad: [{ edits: [['  max_steps: 200\n', '']] }] },
  RLVR115: {
    good: [{ edits: [['  max_steps: 200\n', '  max_steps: 200\n  num_epochs: 2\n']], trainer: 'grpo-gkd' }],
    bad: [{ edits: [['  max_steps: 200\n', '  max_steps: 200\n  num_epochs: 2\n']] }],
  },
  RLVR116: {
    good: [{ edits: [disableCheckpoints] }],
    bad: [{ trainer: 'grpo-minimal' }, { edits: [disableCheckpoints], trainer: unforced }],
  },
  RLVR117: {
    good: [{ edits: [disableCheckpoints], trainer: unforced }],
    bad: [{ edits: [disableCheckpoints] }],
  },
  RLVR118: {
    good: [{ edits: [['checkpoint_interval: 20', 'checkpoint_interval: 200']] }],
    bad: [
      { edits: [['checkpoint_interval: 20', 'checkpoint_interval: 0']] },
      { edits: [['checkpoint_interval: 20', 'checkpoint_interval: 500']] },
    ],
  },
  RLVR119: {
    good: [
      {},
      {
        edits: [
          [/Qwen3-1\.7B-Base/g, 'Qwen3-1.7B'],
          ['skip_chat_template: true', 'skip_chat_template: false'],
        ],
      },
    ],
    bad: [{ edits: [['skip_chat_template: true', 'skip_chat_template: false']] }],
  },
  RLVR120: {
    good: [{ edits: [['run:\n', 'run:\n  seed: 7\n']] }],
    bad: [{ edits: [['  n: 8\n', '  n: 8\n  seed: 7\n']] }],
  },
  RLVR121: {
    good: [
      {
        edits: [
          ['temperature: 1.0', 'temperature: 0'],
          ['  n: 8\n', '  n: 1\n'],
        ],
      },
    ],
    bad: [{ edits: [['temperature: 1.0', 'temperature: 0']] }],
  },
  RLVR122: {
    good: [{}],
    bad: [
      { edits: [['stop: ["[Question]", "Question:", "Q:", "\\n\\n\\n", "\\n\\n"]', 'stop: ["\\n\\n"]']] },
    ],
  },
  RLVR123: {
    good: [{}, { edits: [['launcher:\n', 'launcher:\n  allow: {RLVR120: "seed sweep"}\n']] }],
    bad: [
      { edits: [['launcher:\n', 'launcher:\n  allow: {RLVR999: "why"}\n']] },
      { edits: [['launcher:\n', 'launcher:\n  allow: {RLVR116: "why"}\n']] },
      { edits: [['launcher:\n', 'launcher:\n  acknowledge: [sampling-sed]\n']] },
      // The older form still works, with a warning that says what to write now.
      { edits: [['launcher:\n', 'launcher:\n  acknowledge: [sampling-seed]\n']], severity: 'warning' },
    ],
  },
};

const LM_EVAL = fs.readFileSync(path.join(EVAL_DIR, 'lm_eval_watch.yaml'), 'utf8');
const OLMES = fs.readFileSync(path.join(EVAL_DIR, 'olmes_watch.yaml'), 'utf8');
/** An eval config: an example's text with replacements. */
interface EvalCase {
  readonly base?: string;
  readonly edits?: Replacement[];
}

const EVAL_CASES: Record<string, RulePair<EvalCase>> = {
  RLVR201: { good: [{}], bad: [{ edits: [['seed: 42', 'seed: 42\nlearning: 1e-6']] }] },
  RLVR202: {
    good: [{ edits: [['output_dir: evals', 'output_dir: evals2']] }],
    bad: [{ edits: [['output_dir: evals', 'output_dirr: evals']] }],
  },
  RLVR203: {
    good: [{}, { base: OLMES }],
    bad: [
      { edits: [['tensor_parallel_size: 1', 'tensor_parallel_size: 2']] },
      { base: OLMES, edits: [['    tensor_parallel_size: 1', '    tensor_parallel_size: 2']] },
    ],
  },
  RLVR204: {
    good: [{ base: OLMES }],
    bad: [{ base: OLMES, edits: [[/^olmes:\n( {2}.*\n)+/m, '']] }],
  },
  RLVR205: {
    good: [{ edits: [['  enable: true\n', '  enable: true\n  s3_prefix: s3://b/ckpts/\n']] }],
    bad: [
      { edits: [['  enable: true\n', '  enable: true\n  s3_prefix: s3://b/ckpts/\n  local_dir: /ckpts\n']] },
    ],
  },
  RLVR206: { good: [{}], bad: [{ edits: [['seed: 42', 'seed: 7']] }] },
  RLVR207: { good: [{}], bad: [{ edits: [['temperature: 0', 'temperature: 0.7']] }] },
  RLVR208: { good: [{}], bad: [{ edits: [['max_model_len: 4096', 'max_model_len: 8192']] }] },
};

function edited(text: string, edits: Replacement[] = []): string {
  for (const [from, to] of edits) {
    const next = text.replace(from, to);
    if (next === text && from !== to) throw new Error(`case edit did not match: ${String(from)}`);
    text = next;
  }
  return text;
}

/** The schema's value when it parses, else the raw value (as a load checks both). */
function parsed<T>(schema: { safeParse(v: unknown): { success: boolean; data?: T } }, raw: unknown): T {
  const result = schema.safeParse(raw);
  return (result.success ? result.data : raw) as T;
}

function runTraining(c: TrainingCase): CheckResult {
  const file = YamlFile.parse(gsm8kWith(...(c.edits ?? [])), 'case.yaml');
  const chosen = typeof c.trainer === 'object' ? c.trainer : profile(c.trainer ?? 'grpo-sft');
  return checkTrainingConfig(parsed<TrainingConfig>(trainingConfigSchema, file.toJS()), file, {
    selection: { profile: chosen, how: 'launcher.trainer', reason: 'test' },
    profiles: BUILT_IN_PROFILES,
    strict: c.strict,
  });
}

function runEval(c: EvalCase): CheckResult {
  const file = YamlFile.parse(edited(c.base ?? LM_EVAL, c.edits), 'case.yaml');
  return checkEvalConfig(parsed<EvalConfig>(evalConfigSchema, file.toJS()), file);
}

const rulesIn = (problems: CheckResult['errors']) => problems.map(ruleOf);

describe('the config rules', () => {
  it('has a compliant and a non-compliant case for every rule in the registry, and none for a rule it lacks', () => {
    // A rule whose findings the plan makes (it needs past runs) is tested with the plan.
    const configRules = TRAINING_RULES.filter((r) => !r.madeByPlan);
    expect(Object.keys(TRAINING_CASES).sort()).toEqual(configRules.map((r) => r.id).sort());
    expect(Object.keys(EVAL_CASES).sort()).toEqual(EVAL_RULES.map((r) => r.id).sort());
    for (const pair of [...Object.values(TRAINING_CASES), ...Object.values(EVAL_CASES)]) {
      expect(pair.good.length).toBeGreaterThan(0);
      expect(pair.bad.length).toBeGreaterThan(0);
    }
  });

  it('numbers the rules in the order they run, each with a unique kebab-case name and a one-line doc', () => {
    const ids = (rules: readonly { id: string }[], first: number) =>
      rules.forEach((r, i) => expect(r.id).toBe(`RLVR${first + i}`));
    ids(TRAINING_RULES, 101);
    ids(EVAL_RULES, 201);
    const all = [...TRAINING_RULES, ...EVAL_RULES];
    expect(new Set(all.map((r) => r.name)).size).toBe(all.length);
    for (const r of all) {
      expect(r.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(r.doc).toMatch(/^\S.*\S$/);
      expect(r.doc).not.toContain('\n');
    }
  });

  describe.each(TRAINING_RULES.filter((r) => !r.madeByPlan).map((r) => [`${r.id} ${r.name}`, r] as const))(
    '%s',
    (_label, rule) => {
      const pair = TRAINING_CASES[rule.id];
      it.each((pair?.good ?? []).map((c, i) => [i, c]))('passes compliant config %i', (_i, c) => {
        const { errors, warnings } = runTraining(c);
        expect([...rulesIn(errors), ...rulesIn(warnings)]).not.toContain(rule.id);
      });
      it.each((pair?.bad ?? []).map((c, i) => [i, c]))('flags non-compliant config %i', (_i, c) => {
        const { errors, warnings } = runTraining(c);
        const severity = (c.strict && rule.strictSeverity) || c.severity || rule.severity;
        expect(rulesIn(severity === 'error' ? errors : warnings)).toContain(rule.id);
        expect(rulesIn(severity === 'error' ? warnings : errors)).not.toContain(rule.id);
      });
    },
  );

  describe.each(EVAL_RULES.map((r) => [`${r.id} ${r.name}`, r] as const))('%s', (_label, rule) => {
    const pair = EVAL_CASES[rule.id];
    it.each((pair?.good ?? []).map((c, i) => [i, c]))('passes compliant config %i', (_i, c) => {
      const { errors, warnings } = runEval(c);
      expect([...rulesIn(errors), ...rulesIn(warnings)]).not.toContain(rule.id);
    });
    it.each((pair?.bad ?? []).map((c, i) => [i, c]))('flags non-compliant config %i', (_i, c) => {
      const { errors, warnings } = runEval(c);
      expect(rulesIn(rule.severity === 'error' ? errors : warnings)).toContain(rule.id);
      expect(rulesIn(rule.severity === 'error' ? warnings : errors)).not.toContain(rule.id);
    });
  });
});
