import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  formatTrainerFloat,
  isPyyamlFloatTrap,
  loadEvalConfig,
  loadTrainingConfig,
  ruleOf,
  stringifyForTrainer,
} from '../../lib/config';
import { ProblemsError, formatProblem } from '../../lib/errors';
import { EVAL_DIR, exampleConfigs, gsm8kWith, lineOf, tempDir, writeConfig } from '../helpers/fixtures';
import { itWithPeer } from '../helpers/moto';
import { pythonAvailable } from '../helpers/python';

function problemsOf(fn: () => unknown): ProblemsError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProblemsError) return err;
    throw err;
  }
  throw new Error('expected a ProblemsError');
}

describe('loading training configs', () => {
  it.each(exampleConfigs().map((f) => [path.basename(f), f]))('accepts the example %s', (_name, file) => {
    const loaded = loadTrainingConfig(file);
    expect(loaded.value.roles.some((r) => r.name === 'trainer')).toBe(true);
    expect(loaded.text).toBe(fs.readFileSync(file, 'utf8'));
  });

  it.each(fs.readdirSync(EVAL_DIR).map((f) => [f]))('accepts the eval example %s', (f) => {
    expect(loadEvalConfig(path.join(EVAL_DIR, f)).value.vllm?.tensor_parallel_size).toBe(1);
  });

  const dir = tempDir();
  const cases: [string, string, string, RegExp][] = [
    [
      'misspelt key',
      gsm8kWith(['checkpoint_interval: 20', 'checkpoint_intervall: 20']),
      'checkpoint_intervall: 20',
      /reads training\.checkpoint_interval without a default .* is "checkpoint_intervall" a misspelling of it\?/,
    ],
    [
      'wrong type',
      gsm8kWith(['lr: 1.0e-6', 'lr: fast']),
      'lr: fast',
      /roles\[0\]\.config\.optimizer\.lr: expected a number, got the string "fast"/,
    ],
    [
      'out of range',
      gsm8kWith(['temperature: 1.0', 'temperature: -0.5']),
      'temperature: -0.5',
      /sampling\.temperature: must be ≥ 0/,
    ],
    [
      'not a positive integer',
      gsm8kWith(['checkpoint_interval: 20', 'checkpoint_interval: 2.5']),
      'checkpoint_interval: 2.5',
      /training\.checkpoint_interval: expected an integer|training\.checkpoint_interval/,
    ],
    [
      'enum',
      gsm8kWith(['name: grpo', 'name: ppo']),
      'name: ppo',
      /loss\.name: train_grpo_sft\.py has no loss "ppo"\n\s+Use one of grpo, drgrpo, dapo/,
    ],
    [
      'no trainer role',
      gsm8kWith(['- name: trainer', '- name: learner']),
      'roles:',
      /train_grpo_sft\.py looks up the role "trainer", which the config does not have/,
    ],
    [
      'Base model fed a chat template',
      gsm8kWith(['skip_chat_template: true', 'skip_chat_template: false']),
      'skip_chat_template: false',
      /is a Base model but data_iter\.skip_chat_template is not true/,
    ],
    [
      'GSM8K without the Question: stop',
      gsm8kWith(['stop: ["[Question]", "Question:", "Q:", "\\n\\n\\n", "\\n\\n"]', 'stop: ["\\n\\n"]']),
      'stop: ["\\n\\n"]',
      /GSM8K data but sampling\.stop lacks "Q:"/,
    ],
    [
      'fixed sampling seed',
      gsm8kWith(['  n: 8\n', '  n: 8\n  seed: 7\n']),
      '  seed: 7',
      /a fixed sampling seed makes all n rollouts/,
    ],
    [
      'trainer that saves no checkpoints',
      gsm8kWith(['  template:', '  trainer: grpo-minimal\n  template:']),
      'trainer: grpo-minimal',
      /train_grpo_minimal\.py saves no checkpoints: the job would finish "Completed" with none in S3/,
    ],
    [
      'string learning rate',
      gsm8kWith(['lr: 1.0e-6', 'lr: "1e-6"']),
      'lr: "1e-6"',
      /optimizer\.lr: expected a number, got the string "1e-6"/,
    ],
    [
      'fractional checkpoint interval',
      gsm8kWith(['checkpoint_interval: 20', 'checkpoint_interval: 2.5']),
      'checkpoint_interval: 2.5',
      /training\.checkpoint_interval: expected an integer/,
    ],
    [
      'missing model',
      gsm8kWith(['model:\n  path: Qwen/Qwen3-1.7B-Base', 'model: {}']),
      'model: {}',
      /model\.path: missing required key "path"/,
    ],
    [
      'unknown dataset loader',
      gsm8kWith(['dataset: gsm8k', 'dataset: gsm8kk']),
      'dataset: gsm8kk',
      /has no dataset "gsm8kk" in data — did you mean "gsm8k"\?/,
    ],
    [
      'unknown trainer',
      gsm8kWith(['  template:', '  trainer: grpo-sfft\n  template:']),
      'trainer: grpo-sfft',
      /no trainer profile named "grpo-sfft"/,
    ],
    [
      'unknown acknowledgement',
      gsm8kWith(['  template:', '  acknowledge: [gsm8k-stops]\n  template:']),
      '  acknowledge:',
      /no rule named "gsm8k-stops" — did you mean "gsm8k-stop"\?/,
    ],
    [
      'wrong role kind',
      gsm8kWith(['kind: titan', 'kind: torch']),
      'kind: torch',
      /kind must be one of "titan", "vllm"/,
    ],
    [
      'bad launcher value',
      gsm8kWith(['max_runtime: 24h', 'max_runtime: forever']),
      'max_runtime: forever',
      /"forever" is not a duration/,
    ],
  ];

  it.each(cases)('reports a %s with file:line:column and what is wrong', (_kind, text, line, message) => {
    const file = writeConfig(dir, `${_kind.replace(/\W+/g, '-')}.yaml`, text);
    const err = problemsOf(() => loadTrainingConfig(file));
    const problem = err.problems.find((p) => message.test(formatProblem(p)));
    expect(problem).toBeDefined();
    expect(problem!.location).toEqual({ file, line: lineOf(text, line), column: expect.any(Number) });
    expect(err.message).toContain(`${file}:${lineOf(text, line)}:`);
  });

  it('reports every problem in a file at once, in file order', () => {
    const text = gsm8kWith(
      ['checkpoint_interval: 20', 'checkpoint_intervall: 20'],
      ['name: grpo', 'name: ppo'],
      ['temperature: 1.0', 'temperature: -1'],
      ['skip_chat_template: true', 'skip_chat_template: false'],
    );
    const err = problemsOf(() => loadTrainingConfig(writeConfig(dir, 'many.yaml', text)));
    const lines = err.problems.map((p) => p.location!.line);
    expect(err.problems.length).toBeGreaterThanOrEqual(4);
    expect(lines).toEqual([...lines].sort((a, b) => a - b));
    const text2 = err.problems.map(formatProblem).join('\n');
    expect(text2).toMatch(/"checkpoint_intervall" a misspelling/);
    expect(text2).toMatch(/loss\.name/);
    expect(text2).toMatch(/sampling\.temperature/);
    expect(text2).toMatch(/skip_chat_template/);
  });

  it('reports YAML syntax errors with their position', () => {
    const file = writeConfig(dir, 'syntax.yaml', 'run:\n  name: x\nmodel: {path: "unterminated\n');
    const err = problemsOf(() => loadTrainingConfig(file));
    expect(err.problems[0].location?.file).toBe(file);
    expect(err.problems[0].location?.line).toBeGreaterThanOrEqual(3);
  });

  it('refuses a key written twice with different values, and warns when the values agree', () => {
    const text = gsm8kWith(['max_steps: 200', 'max_steps: 200\n  max_steps: 300']);
    const err = problemsOf(() => loadTrainingConfig(writeConfig(dir, 'dup.yaml', text)));
    expect(formatProblem(err.problems[0])).toMatch(/"max_steps" is written twice with different values/);
    expect(err.problems[0].location!.line).toBe(lineOf(text, 'max_steps: 300'));
    // PyYAML keeps the last of two equal sections: harmless, said once.
    const same = gsm8kWith([
      'verifier:\n  num_workers: 8\n',
      'verifier:\n  num_workers: 8\n\nverifier:\n  num_workers: 8\n',
    ]);
    const loaded = loadTrainingConfig(writeConfig(dir, 'dup-same.yaml', same));
    expect(loaded.warnings.map(formatProblem).join('\n')).toMatch(
      /"verifier" is written twice with the same value/,
    );
  });

  it('says so when the file does not exist', () => {
    expect(() => loadTrainingConfig(path.join(dir, 'nope.yaml'))).toThrow(/no such file/);
  });

  it('never changes max_staleness (an experimental variable)', () => {
    const file = writeConfig(dir, 'staleness.yaml', gsm8kWith(['max_staleness: 1', 'max_staleness: 7']));
    expect(loadTrainingConfig(file).value.training.max_staleness).toBe(7);
  });
});

describe("the trainer's own keys", () => {
  const dir = tempDir();
  it('refuses a likely typo of a key the chosen trainer reads, even an optional one', () => {
    const text = gsm8kWith(['  alpha_sft: 0.0\n', '  alpha_sft: 0.0\n  rollout_timeout_ss: 600\n']);
    const file = writeConfig(dir, 'typo.yaml', text);
    const err = problemsOf(() => loadTrainingConfig(file));
    const problem = err.problems.find((p) => /rollout_timeout_ss/.test(p.message));
    expect(formatProblem(problem!)).toMatch(
      /unknown key "rollout_timeout_ss" — did you mean "rollout_timeout_s"\?[\s\S]*train_grpo_sft\.py reads "rollout_timeout_s"/,
    );
    expect(problem!.location!.line).toBe(lineOf(text, 'rollout_timeout_ss'));
  });

  it('warns about a likely typo of a key only another trainer reads, and refuses it under --strict', () => {
    // jsd_alpha is read by the distillation trainers, not by train_grpo_sft.py.
    const text = gsm8kWith(['  alpha_sft: 0.0\n', '  alpha_sft: 0.0\n  jsd_alphaa: 0.5\n']);
    const file = writeConfig(dir, 'other.yaml', text);
    const loaded = loadTrainingConfig(file);
    const warning = loaded.warnings.find((w) => /jsd_alphaa/.test(w.message));
    expect(formatProblem(warning!)).toMatch(/did you mean "jsd_alpha"\?/);
    const err = problemsOf(() => loadTrainingConfig(file, file, { strict: true }));
    expect(err.problems.map(formatProblem).join()).toMatch(/jsd_alphaa/);
  });

  it('passes keys it has never seen, far from any known one, without a word', () => {
    const text = gsm8kWith(
      ['  alpha_sft: 0.0\n', '  alpha_sft: 0.0\n  curiosity_bonus_schedule: {kind: cosine}\n'],
      ['buffer:\n', 'brand_new_section:\n  anything: [1, 2]\n\nbuffer:\n'],
    );
    const loaded = loadTrainingConfig(writeConfig(dir, 'new-keys.yaml', text), undefined, { strict: true });
    expect(loaded.warnings.map(formatProblem).join()).not.toMatch(/curiosity|brand_new/);
    expect((loaded.value as Record<string, unknown>).brand_new_section).toEqual({ anything: [1, 2] });
  });

  it('reads the current and the older parallelism names, and says which the trainer reads', () => {
    const text = gsm8kWith(['data_parallel_shard_degree: 2', 'dp_shard: 2']);
    const loaded = loadTrainingConfig(writeConfig(dir, 'old-names.yaml', text));
    expect(loaded.warnings.map(formatProblem).join()).toMatch(/"dp_shard" is the older name/);
  });

  it('accepts per-bucket micro-batch sizes, an unbounded buffer and num_epochs where the trainer reads it', () => {
    const text = gsm8kWith([
      'completions_per_micro_batch: 32',
      'completions_per_micro_batch: {768: 32, 1280: 16}',
    ]);
    const loaded = loadTrainingConfig(writeConfig(dir, 'buckets.yaml', text));
    expect(loaded.value.training.completions_per_micro_batch).toEqual({ 768: 32, 1280: 16 });
    expect(loaded.value.buffer?.maxsize).toBe(0);
  });

  it('turns an acknowledged incident rule into a warning that names it', () => {
    const text = gsm8kWith(
      ['stop: ["[Question]", "Question:", "Q:", "\\n\\n\\n", "\\n\\n"]', 'stop: ["\\n\\n"]'],
      ['  template:', '  acknowledge: [gsm8k-stop]\n  template:'],
    );
    const loaded = loadTrainingConfig(writeConfig(dir, 'ack.yaml', text));
    expect(loaded.warnings.map(formatProblem).join()).toMatch(/lacks "Q:".*\(acknowledged: gsm8k-stop\)/);
  });

  it('tells a config written for the former train_grpo.py what to do', () => {
    const text = gsm8kWith(['  alpha_grpo: 1.0\n  alpha_sft: 0.0\n', '']);
    const err = problemsOf(() => loadTrainingConfig(writeConfig(dir, 'legacy.yaml', text)));
    const all = err.problems.map(formatProblem).join('\n');
    expect(all).toMatch(/reads training\.alpha_sft without a default \(E\/train_grpo_sft\.py:463/);
    expect(all).toMatch(/launcher\.trainer: grpo-legacy/);
  });

  it('does not call a config with both alphas one written for the former train_grpo.py', () => {
    // Both alphas set, max_steps missing: only max_steps is asked for.
    const text = gsm8kWith(['  max_steps: 200\n', '']);
    const err = problemsOf(() => loadTrainingConfig(writeConfig(dir, 'no-max-steps.yaml', text)));
    const missing = err.problems.filter((p) => ruleOf(p) === 'RLVR104');
    expect(missing.map((p) => p.message)).toEqual([
      expect.stringMatching(/reads training\.max_steps without a default/),
    ]);
    expect(missing[0].hint).toBe('Add training.max_steps.');
    // Only one alpha missing: the hint still says what the config was written for.
    const one = gsm8kWith(['  alpha_grpo: 1.0\n', '']);
    const oneErr = problemsOf(() => loadTrainingConfig(writeConfig(dir, 'one-alpha.yaml', one)));
    expect(oneErr.problems.map(formatProblem).join('\n')).toMatch(/launcher\.trainer: grpo-legacy/);
  });
});

describe('loading eval configs', () => {
  const dir = tempDir();
  it('refuses tensor parallelism above 1', () => {
    const text = fs
      .readFileSync(path.join(EVAL_DIR, 'lm_eval_watch.yaml'), 'utf8')
      .replace('tensor_parallel_size: 1', 'tensor_parallel_size: 2');
    const file = writeConfig(dir, 'tp.yaml', text);
    const err = problemsOf(() => loadEvalConfig(file));
    expect(formatProblem(err.problems[0])).toMatch(
      /vllm\.tensor_parallel_size: is 2: evaluation with tensor parallelism > 1/,
    );
    expect(err.problems[0].location?.line).toBe(lineOf(text, 'tensor_parallel_size: 2'));
  });

  it('warns about settings off the team standard without refusing them', () => {
    const text = fs
      .readFileSync(path.join(EVAL_DIR, 'lm_eval_watch.yaml'), 'utf8')
      .replace('seed: 42', 'seed: 1');
    const loaded = loadEvalConfig(writeConfig(dir, 'seed.yaml', text));
    expect(loaded.warnings.map(formatProblem).join()).toMatch(/seed: is 1; the team's standard is 42/);
  });
});

describe('YAML the trainer reads (PyYAML, YAML 1.1)', () => {
  const dir = tempDir();
  it('refuses float literals PyYAML reads as strings, with the safe spelling', () => {
    const text = gsm8kWith(['lr: 1.0e-6', 'lr: 1e-6']);
    const err = problemsOf(() => loadTrainingConfig(writeConfig(dir, 'float.yaml', text)));
    expect(err.problems).toHaveLength(1);
    expect(formatProblem(err.problems[0])).toMatch(
      /roles\[0\]\.config\.optimizer\.lr: 1e-6 is a number here, but the trainer's YAML reader \(PyYAML, YAML 1\.1\) reads it as the string "1e-6"\n\s+Write 1\.0e-6/,
    );
    expect(err.problems[0].location!.line).toBe(lineOf(text, 'lr: 1e-6'));
  });

  itWithPeer('python3.11', pythonAvailable())(
    'writes strings PyYAML would read as something else quoted: the trainer reads back every value written',
    () => {
      const value = {
        run: { name: 'yes', tag: 'off', n: '1_000', t: '1:30', d: '2024-01-01', plain: 'gsm8k-seed7' },
        data: { system_prompt: 'Think step by step.\nThen answer.', stop: ['Question:', '\n\n', 'No'] },
        lr: 1e-6,
        steps: 200,
      };
      const text = stringifyForTrainer(value);
      expect(text).toContain('name: "yes"');
      expect(text).toContain('plain: gsm8k-seed7\n');
      const read = spawnSync(
        'python3',
        ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin.read())))'],
        { input: text, encoding: 'utf8' },
      );
      expect(read.status).toBe(0);
      expect(JSON.parse(read.stdout)).toEqual(value);
    },
  );

  it('writes floats in a form both YAML versions read as the same number', () => {
    expect(stringifyForTrainer({ a: 1e-7, b: 5e-5, c: 0.001, d: 1.5, e: 3, f: 2.5e-20 })).toBe(
      'a: 1.0e-7\nb: 5.0e-5\nc: 0.001\nd: 1.5\ne: 3\nf: 2.5e-20\n',
    );
    for (const v of [1e-7, 5e-5, 7e-6, 2.5e-20, 0.001, 123.5]) {
      expect(isPyyamlFloatTrap(formatTrainerFloat(v))).toBe(false);
      expect(Number(formatTrainerFloat(v))).toBe(v);
    }
  });
});
