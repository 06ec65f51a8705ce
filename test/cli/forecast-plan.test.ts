import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../helpers/cli';
import { GSM8K_EXAMPLE, REPO_ROOT, tempDir } from '../helpers/fixtures';
import { writePastRun } from '../helpers/past-runs';

/*
 * The forecast in a plan, from a results folder of generated runs in the trainer's trace format: three
 * similar runs our jobs recorded (30, 33 and 36 s a step, each step ±10%), one of their own from before
 * shapes were recorded (its shape told from run.json and its config, 34 s), and one on other instances
 * (90 s) that must not count.
 */

const RATES = [30, 33, 36];
const THEIRS = 34;
const STEPS = 120;
const STARTUP = 300;

/** The example config, runnable from a temp folder, with `edits` applied. */
function exampleConfig(dir: string, edits: [string, string][] = []): string {
  let text = fs.readFileSync(GSM8K_EXAMPLE, 'utf8');
  text = text
    .replace(
      'trainer_src: ../../examples/trainer',
      `trainer_src: ${path.join(REPO_ROOT, 'examples', 'trainer')}`,
    )
    .replace(
      'eval_config: ../eval/lm_eval_watch.yaml',
      `eval_config: ${path.join(REPO_ROOT, 'configs', 'eval', 'lm_eval_watch.yaml')}`,
    );
  for (const [from, to] of edits) {
    expect(text).toContain(from);
    text = text.replace(from, to);
  }
  const file = path.join(dir, `config-${Math.random().toString(36).slice(2, 8)}.yaml`);
  fs.writeFileSync(file, text);
  return file;
}

async function plannedShape(config: string, resultsDir: string): Promise<Record<string, string>> {
  const { code, stdout, stderr } = await runCli([
    'submit',
    config,
    '--dry-run',
    '--json',
    '--results-dir',
    resultsDir,
  ]);
  expect(stderr).not.toMatch(/error/i);
  expect(code).toBe(0);
  return JSON.parse(stdout).forecast.shape;
}

describe('the forecast in a plan (a results folder of generated runs)', () => {
  const dir = tempDir('rlvr-forecast-');
  const results = path.join(dir, 'results');
  let shape: Record<string, string>;

  beforeAll(async () => {
    fs.mkdirSync(results);
    shape = await plannedShape(exampleConfig(dir), path.join(dir, 'empty'));
    RATES.forEach((rate, i) =>
      writePastRun(results, {
        job: `annotations-adhoc-20261101-00000${i}`,
        shape,
        trace: { steps: STEPS, stepSeconds: rate, stepJitter: 0.1, startTs: STARTUP },
      }),
    );
    // Theirs: no recorded shape; its config names the model by the path their cluster used.
    writePastRun(results, {
      job: 'their-run-before-shapes',
      config: fs
        .readFileSync(GSM8K_EXAMPLE, 'utf8')
        .replace('path: Qwen/Qwen3-1.7B-Base', 'path: /efs/rlvr-experiments/assets/hf/Qwen3-1.7B-Base'),
      trace: { steps: STEPS, stepSeconds: THEIRS, stepJitter: 0.1, startTs: STARTUP },
    });
    writePastRun(results, {
      job: 'annotations-adhoc-20261102-000000',
      shape: { ...shape, instanceType: 'ml.p5.48xlarge' },
      instanceType: 'ml.p5.48xlarge',
      trace: { steps: STEPS, stepSeconds: 90, startTs: STARTUP },
    });
  }, 60_000);

  it('records the shape it matches on: trainer, model, instances, GPU split, batch', () => {
    expect(shape).toEqual({
      trainer: 'grpo-sft',
      model: 'Qwen3-1.7B-Base',
      instanceType: 'ml.p4de.24xlarge',
      instanceCount: '1',
      trainGpus: '6',
      evalGpus: '2',
      batch: expect.stringMatching(/^\d+×8×\d+$/),
    });
  });

  it('forecasts a fourth similar config within 10% of the similar runs’ rate, and not from the other one', async () => {
    const { code, stdout } = await runCli([
      'submit',
      exampleConfig(dir, [['lr: 1.0e-6', 'lr: 2.0e-6']]),
      '--dry-run',
      '--json',
      '--results-dir',
      results,
    ]);
    expect(code).toBe(0);
    const f = JSON.parse(stdout).forecast;
    const expected = [...RATES, THEIRS].reduce((a, b) => a + b, 0) / 4;
    expect(f.similar.map((s: { id: string }) => s.id).sort()).toEqual([
      'annotations-adhoc-20261101-000000',
      'annotations-adhoc-20261101-000001',
      'annotations-adhoc-20261101-000002',
      'their-run-before-shapes',
    ]);
    expect(Math.abs(f.secondsPerStep.median - expected) / expected).toBeLessThan(0.1);
    expect(f.maxSteps).toBe(200);
    expect(Math.abs(f.wallSeconds - (STARTUP + 200 * expected)) / (STARTUP + 200 * expected)).toBeLessThan(
      0.1,
    );
    expect(f.cost).toBeGreaterThan(0);
  });

  it('prints the forecast lines, and warns that 24 h would pay long for a hung run', async () => {
    const { code, stdout } = await runCli([
      'submit',
      exampleConfig(dir),
      '--dry-run',
      '--results-dir',
      results,
    ]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Forecast \(similar runs: the same trainer, model, instance type/m);
    expect(stdout).toMatch(/^ {2}similar runs +4 \(4 in .*results\): /m);
    expect(stdout).toMatch(
      /^ {2}per step +3\d\.\d s \(the runs' average step, checkpoints included; 10–90% of steps: \d+\.\d s–\d+\.\d s\)$/m,
    );
    expect(stdout).toMatch(/^ {2}to step 200 +\dh\d+m \(startup \d+m\d*s? \+ 200 × 3\d\.\d s\)$/m);
    expect(stdout).toMatch(/^ {2}cost +\$\d+(\.\d+)? on demand to the last step$/m);
    expect(stdout).toMatch(/^ {2}max runtime +24h covers it many times over/m);
    expect(stdout).toMatch(
      /launcher\.max_runtime: max runtime 24h is over \d+× the forecast \(200 steps at 3\d\.\d s\/step \(4 similar runs\) take about \dh\d+m\): a run that hangs is paid for until then\n +Give it --max-runtime \dh\d*m? \(the forecast, 15% more for slower steps and the 30m eval wait\)\./,
    );
  });

  it('a max runtime that cannot cover it exits 2 naming the step it would be cut at, and the runtime that fits', async () => {
    const { code, stdout, stderr } = await runCli([
      'submit',
      exampleConfig(dir),
      '--dry-run',
      '--max-runtime',
      '1h',
      '--results-dir',
      results,
    ]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    const step = Number(/would stop training at about step (\d+) of 200/.exec(stderr)?.[1]);
    // (3600 s − the runs' startup) / ~33 s a step
    expect(step).toBeGreaterThan(90);
    expect(step).toBeLessThan(110);
    expect(stderr).toMatch(/--max-runtime: max runtime 1h would stop/);
    expect(stderr).toMatch(
      /Give it --max-runtime 2h\d*m? \(the forecast, 15% more for slower steps and the 30m eval wait\), lower training\.max_steps, or allow it with a reason: launcher\.allow: \{RLVR124: "<why>"\}\./,
    );
    expect(stderr).not.toMatch(/at .*\.ts:\d+/);
  });

  it('launcher.allow lets it through with its reason, shown in the plan', async () => {
    const config = exampleConfig(dir, [
      [
        'launcher:\n',
        'launcher:\n  allow: {RLVR124: "a 100-step probe: the checkpoint at 50 is all we need"}\n',
      ],
    ]);
    const { code, stdout } = await runCli([
      'submit',
      config,
      '--dry-run',
      '--max-runtime',
      '1h',
      '--results-dir',
      results,
    ]);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /Allowed by launcher.allow[^\n]*\n {2}RLVR124 runtime-forecast: max runtime 1h would stop training at about step \d+ of 200/,
    );
    expect(stdout).toMatch(/max runtime +1h DOES NOT cover it: training stops at about step \d+/);
  });

  it('a resumed job is forecast from its resume step: a runtime that covers the steps left passes', async () => {
    const config = exampleConfig(dir, [['  max_steps: 200\n', '  max_steps: 200\n  resume_step: 180\n']]);
    const { code, stdout, stderr } = await runCli([
      'submit',
      config,
      '--dry-run',
      '--max-runtime',
      '1h',
      '--results-dir',
      results,
    ]);
    expect(stderr).not.toMatch(/RLVR124|would stop training/);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^ {2}180 → 200 +\d+m\d*s? \(startup \d+m\d*s? \+ 20 × 3\d\.\d s, resumed at step 180\)$/m,
    );
  });

  it('another instance type forecasts from the run on it alone', async () => {
    const { code, stdout } = await runCli([
      'submit',
      exampleConfig(dir),
      '--dry-run',
      '--json',
      '--instance-type',
      'ml.p5.48xlarge',
      '--results-dir',
      results,
    ]);
    expect(code).toBe(0);
    const f = JSON.parse(stdout).forecast;
    expect(f.similar.map((s: { id: string }) => s.id)).toEqual(['annotations-adhoc-20261102-000000']);
    expect(f.secondsPerStep.median).toBeCloseTo(90, 3);
  });

  it('a config with no similar run says so, names the nearest, and gives no number', async () => {
    const config = exampleConfig(dir, [['  n: 8\n', '  n: 16\n']]);
    const { code, stdout } = await runCli(['submit', config, '--dry-run', '--results-dir', results]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/similar runs +none: no similar run among the 5 seen/);
    expect(stdout).toMatch(/annotations-adhoc-20261101-000000 differs in batch/);
    expect(stdout).toMatch(/no forecast: the plan gives no number it has not measured/);
    const forecastSection = stdout.slice(stdout.indexOf('\nForecast'), stdout.indexOf('\nInputs'));
    expect(forecastSection).not.toMatch(/s\/step|per step|to step/);
  });

  it("a sweep's plan forecasts each job", async () => {
    const { code, stdout } = await runCli([
      'submit',
      exampleConfig(dir),
      '--dry-run',
      '--sweep',
      'sampling.n=8,16',
      '--results-dir',
      results,
    ]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/FORECAST/);
    expect(stdout).toMatch(/sampling\.n=8 +\dh\d+m, \$\d+/);
    expect(stdout).toMatch(/sampling\.n=16 +no similar run/);
  });
});
