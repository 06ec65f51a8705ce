import * as path from 'node:path';
import { EVAL_RULES } from '../../lib/config';
import { TRAINING_RULES } from '../../lib/config/rules';
import { runCli } from '../helpers/cli';
import { exampleConfigs, gsm8kWith, lineOf, REPO_ROOT, tempDir, writeConfig } from '../helpers/fixtures';

describe('rlvr lint', () => {
  it('passes every example training config and eval config, naming the trainer', async () => {
    const evalConfigs = ['configs/eval/lm_eval_watch.yaml', 'configs/eval/olmes_watch.yaml'];
    const files = [...exampleConfigs().map((f) => path.relative(REPO_ROOT, f)), ...evalConfigs];
    const { code, stdout } = await runCli(['lint', ...files, '--json']);
    expect(code).toBe(0);
    const json = JSON.parse(stdout);
    expect(json.ok).toBe(true);
    expect(json.reports.map((r: { kind: string }) => r.kind)).toEqual([
      ...exampleConfigs().map(() => 'training'),
      'eval',
      'eval',
    ]);
    expect(json.reports[0].trainer.id).toBe('grpo-sft');
  });

  it('exits 2 with file:line:column for a bad config, and still reports the good ones', async () => {
    const dir = tempDir('rlvr-lint-');
    const text = gsm8kWith(['skip_chat_template: true', 'skip_chat_template: false']);
    const bad = writeConfig(dir, 'bad.yaml', text);
    const { code, stdout } = await runCli(['lint', bad, exampleConfigs()[0]]);
    expect(code).toBe(2);
    expect(stdout).toContain(`${bad}: training config, 1 error(s)`);
    expect(stdout).toContain(`error RLVR119: ${bad}:${lineOf(text, 'skip_chat_template')}:`);
    expect(stdout).toMatch(/Base model/);
    expect(stdout).toContain(`${exampleConfigs()[0]}: training config, ok`);
  });

  it('lists the rules a config can acknowledge', async () => {
    const { code, stdout } = await runCli(['lint', '--rules']);
    expect(code).toBe(0);
    for (const id of ['base-chat-template', 'sampling-seed', 'gsm8k-stop', 'no-checkpoints'])
      expect(stdout).toMatch(new RegExp(`^${id} +\\S`, 'm'));
  });

  it('lists every rule by id with its severity, whether it can be allowed, its name and its doc line', async () => {
    const { code, stdout } = await runCli(['lint', '--rules']);
    expect(code).toBe(0);
    for (const r of [...TRAINING_RULES, ...EVAL_RULES])
      expect(stdout).toContain(`${r.id}  ${r.strictSeverity ? `${r.severity}*` : r.severity}`);
    expect(stdout).toMatch(
      /^RLVR119 +error +allow +base-model-chat-template +a Base model with the chat template/m,
    );
    expect(stdout).toMatch(/^RLVR104 +error +required-key +\S/m);
    expect(stdout).toMatch(/^sampling-seed += RLVR120 sampling-seed$/m);
    const json = JSON.parse((await runCli(['lint', '--rules', '--json'])).stdout);
    expect(json.rules.find((r: { id: string }) => r.id === 'RLVR120')).toEqual({
      id: 'RLVR120',
      name: 'sampling-seed',
      config: 'training',
      severity: 'error',
      allowable: true,
      acknowledge: 'sampling-seed',
      doc: 'rollouts sampled with a fixed seed: every completion of a prompt comes out the same',
    });
  });

  it("applies launcher.allow: the finding is shown as allowed with the config's reason, not as a problem", async () => {
    const dir = tempDir('rlvr-lint-');
    const allowing = (allow: string) =>
      gsm8kWith(['  n: 8\n', '  n: 8\n  seed: 7\n'], ['  max_runtime: 24h\n', `  max_runtime: 24h\n${allow}`])
        .replace(/^ {2}trainer_src: .*\n/m, `  trainer_src: ${path.join(REPO_ROOT, 'examples', 'trainer')}\n`)
        .replace(/^ {2}eval_config: .*\n/m, '');
    const text = allowing('  allow: {RLVR120: "checking the sampler"}\n');
    const ok = writeConfig(dir, 'allowed.yaml', text);
    const { code, stdout } = await runCli(['lint', ok]);
    expect(code).toBe(0);
    expect(stdout).toContain(`${ok}: training config, ok, 1 allowed, trainer grpo-sft`);
    expect(stdout).toContain(
      `  allowed RLVR120: ${ok}:${lineOf(text, '  seed: 7')}:3: sampling.seed: a fixed sampling seed`,
    );
    expect(stdout).toContain('    reason: checking the sampler');
    const json = JSON.parse((await runCli(['lint', ok, '--json'])).stdout);
    expect(json.reports[0].allowed).toEqual([
      expect.objectContaining({ rule: 'RLVR120', reason: 'checking the sampler' }),
    ]);

    const badText = allowing('  allow: {RLVR104: "no"}\n');
    const bad = writeConfig(dir, 'refused.yaml', badText);
    const refused = await runCli(['lint', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toContain(`${bad}:${lineOf(badText, 'RLVR104')}:`);
    expect(refused.stdout).toMatch(/RLVR104 \(required-key\) cannot be allowed/);
    expect(refused.stdout).toMatch(/error RLVR120: .*a fixed sampling seed/);
  });
});
