import * as fs from 'node:fs';
import * as path from 'node:path';
import { bareEnv, runCli } from '../helpers/cli';
import { tempDir } from '../helpers/fixtures';

/** `rlvr eval` on a machine without AWS: what is refused before anything is looked up. */
describe('rlvr eval --dry-run without AWS', () => {
  const base = ['eval', '--checkpoints', 's3://bucket-a/ckpt/', '--benchmarks', 'gsm8k_cot:8', '--dry-run'];

  it.each([
    [['--max-retries', '0'], /--max-retries: 0: a retry count from 1 to 30/],
    [['--max-runtime', '29d'], /--max-runtime: 29d is longer than SageMaker's limit of 28 days/],
  ])('%p is refused as submit refuses it (exit 2)', async (extra, message) => {
    const r = await runCli([...base, ...extra], { env: bareEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });

  it('--spot --max-runtime below the expected wall time is warned about', async () => {
    // A cache of its own: durations learned on this machine would change the estimate.
    const cache = tempDir('rlvr-eval-cache-');
    const r = await runCli([...base, '--spot', '--max-runtime', '1m'], {
      env: bareEnv({ XDG_CACHE_HOME: cache }),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--max-runtime 1m is below the expected wall time ~10m/);
  });

  it('an unknown task is warned about with the nearest known one', async () => {
    const r = await runCli(
      ['eval', '--checkpoints', 's3://bucket-a/ckpt/', '--benchmarks', 'gsm8k_cott:8', '--dry-run'],
      { env: bareEnv() },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/gsm8k_cott: .*did you mean gsm8k_cot\?/);
  });

  it.each([
    [['--benchmarks', 'gsm8k_cot:99999'], /at most 64/],
    [['--deviate', 'max_gen_toks.nosuch=5'], /--deviate max_gen_toks\.nosuch: .*gsm8k_cot/],
    [['--local', '--gpus', '0', '--spot'], /--spot: .*--local/],
    [['--local', '--gpus', '3-0'], /--gpus 3-0: 3-0 is a reversed range/],
    [['--local', '--gpus', '0,0'], /GPU 0 is given twice/],
  ])('%p: exit 2 saying what is wrong', async (extra, message) => {
    const r = await runCli([...base, ...extra], { env: bareEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});

describe('rlvr eval results with a path that is not a run folder', () => {
  it.each(['./nosuchdir', '../nosuchdir', 'runs/nosuchdir'])(
    '%s (missing): exit 2 naming it',
    async (arg) => {
      const cwd = tempDir('rlvr-eval-res-');
      const r = await runCli(['eval', 'results', arg], { cwd, env: bareEnv() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(arg);
      expect(r.stderr).toMatch(/no folder/);
      expect(r.stderr).not.toMatch(/No AWS region/);
    },
  );

  it('a file: exit 2, not an empty table', async () => {
    const cwd = tempDir('rlvr-eval-res-');
    fs.writeFileSync(path.join(cwd, 'file.yaml'), 'a: 1\n');
    const r = await runCli(['eval', 'results', './file.yaml'], { cwd, env: bareEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\.\/file\.yaml is a file/);
    expect(r.stdout).not.toMatch(/No evaluation results found/);
  });
});
