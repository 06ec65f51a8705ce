import * as path from 'node:path';
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
    expect(stdout).toContain(`${bad}:${lineOf(text, 'skip_chat_template')}:`);
    expect(stdout).toMatch(/Base model/);
    expect(stdout).toContain(`${exampleConfigs()[0]}: training config, ok`);
  });

  it('lists the rules a config can acknowledge', async () => {
    const { code, stdout } = await runCli(['lint', '--rules']);
    expect(code).toBe(0);
    for (const id of ['base-chat-template', 'sampling-seed', 'gsm8k-stop', 'no-checkpoints'])
      expect(stdout).toMatch(new RegExp(`^${id} +\\S`, 'm'));
  });
});
