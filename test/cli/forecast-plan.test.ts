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
    expect(stdout).toMatch(/^ {2}similar runs +4 \(4 in .*results\)$/m);
    // each run with what it measured: none recorded its end (written before jobs did)
    expect(stdout).toMatch(
      /^ {4,}annotations-adhoc-20261101-000000 \d\d\.\d s\/step over 120 steps, checkpoints not known, its end not recorded$/m,
    );
    expect(stdout).toMatch(
      /^ {2}caveat +the checkpoint after the last step is not counted: no similar run completed with its trainer’s end recorded$/m,
    );
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

/*
 * Forecasts that say what they measured. Three complete runs of the shape in the Done-when's numbers:
 * 300 s from the container's start to the first step (40 s setup, 20 s before the trainer's tracer,
 * 240 s in it), 30 s steps, a 300 s export every 10 steps as their trainers do it (after the step's
 * counters; the 200th is the export after the last step): 300 + 200 × 30 + 20 × 300 = 12,300 s.
 */
describe('forecasts that say what they measured', () => {
  const dir = tempDir('rlvr-forecast-ends-');
  const complete = path.join(dir, 'complete');
  const early = path.join(dir, 'early');
  const both = path.join(dir, 'both');
  const TRUE_WALL = 12_300;
  let shape: Record<string, string>;

  const completeRun = (resultsDir: string, i: number) =>
    writePastRun(resultsDir, {
      job: `annotations-adhoc-20261103-00000${i}`,
      shape,
      trace: { steps: 200, stepSeconds: 30, startTs: 240, exportEvery: 10, exportSeconds: 300 },
      ending: {
        status: 'Completed',
        maxSteps: 200,
        checkpoints: 20,
        setupSeconds: 40,
        tracerStartSeconds: 20,
        afterLastStepSeconds: 300,
      },
    });
  /** Stopped at step 8 of 200, before its first checkpoint (at 10). */
  const stoppedEarly = (resultsDir: string) =>
    writePastRun(resultsDir, {
      job: 'annotations-adhoc-20261104-000000',
      shape,
      trace: { steps: 8, stepSeconds: 29.5, startTs: 240, exportEvery: 10, exportSeconds: 300 },
      ending: {
        status: 'Stopped',
        maxSteps: 200,
        checkpoints: 0,
        setupSeconds: 40,
        tracerStartSeconds: 20,
        afterLastStepSeconds: 10,
      },
    });

  beforeAll(async () => {
    shape = await plannedShape(exampleConfig(dir), path.join(dir, 'empty'));
    for (const d of [complete, early, both]) fs.mkdirSync(d);
    for (const i of [0, 1, 2]) {
      completeRun(complete, i);
      completeRun(both, i);
    }
    stoppedEarly(early);
    stoppedEarly(both);
  }, 60_000);

  const plan = async (resultsDir: string, extra: string[] = []) =>
    runCli(['submit', exampleConfig(dir), '--dry-run', '--results-dir', resultsDir, ...extra]);

  it('from three complete runs: within 1% of the true 12,300 s, the start-up and the final checkpoint as measured', async () => {
    const { code, stdout } = await plan(complete, ['--json']);
    expect(code).toBe(0);
    const f = JSON.parse(stdout).forecast;
    expect(f.basis).toBe('measured');
    expect(f.outsideMeasured).toBe(true);
    expect(f.caveats).toEqual([]);
    expect(Math.abs(f.wallSeconds - TRUE_WALL) / TRUE_WALL).toBeLessThan(0.01);
    expect(f.similar[0]).toMatchObject({
      steps: 200,
      plannedSteps: 200,
      checkpoints: 20,
      ended: 'Completed',
      used: true,
    });
    const text = await plan(complete);
    expect(text.stdout).toMatch(
      /^ {4,}annotations-adhoc-20261103-000000 58\.6 s\/step over 200 of 200 steps, 20 checkpoints, completed$/m,
    );
    expect(text.stdout).toMatch(
      /^ {2}to step 200 +3h25m \(\d+m\d*s? start-up and final checkpoint \+ 200 × 58\.6 s\)$/m,
    );
  });

  it('from one run stopped at step 8: no number without its caveat, and no runtime called sufficient', async () => {
    const { code, stdout, stderr } = await plan(early, ['--max-runtime', '2h30m']);
    expect(code).toBe(0);
    const section = stdout.slice(stdout.indexOf('\nForecast'), stdout.indexOf('\nInputs'));
    expect(section).toMatch(
      /annotations-adhoc-20261104-000000 29\.5 s\/step over 8 of 200 steps, no checkpoint, stopped; not enough alone: no checkpoint, so no checkpoint’s time is in its steps; 8 of its 200 steps$/m,
    );
    expect(section).toMatch(/^ {2}per step +29\.5 s \(.*\), rough$/m);
    expect(section).toMatch(/^ {2}caveat +rough: no similar run is enough alone/m);
    expect(section).toMatch(/^ {2}to step 200 +at least \dh\d+m \(.*\), rough$/m);
    expect(section).toMatch(/^ {2}cost +at least \$/m);
    expect(section).toMatch(/^ {2}max runtime +2h30m is not known to cover it \(rough forecast\)/m);
    expect(section).not.toMatch(/covers it|sufficient/);
    // every line with a number in the section says it is rough, or is the run it came from
    // A duration or a price; the folder the forecast looked in is a path, whose random temporary name
    // (`…-P5ha7F`) may hold a digit and an h.
    const numbered = section
      .split('\n')
      .filter((l) => !/^\s*looked in\b/.test(l))
      .filter((l) => /\d+(\.\d+)? s\b|(?<![\w-])\d+h|\$\d/.test(l));
    expect(numbered.length).toBeGreaterThan(2);
    for (const line of numbered) expect(line).toMatch(/rough|at least|annotations-adhoc-20261104-000000/);
    expect(stdout + stderr).toMatch(
      /the forecast cannot say whether max runtime 2h30m covers the job: 200 steps at 29\.5 s\/step \(1 similar run\) take at least/,
    );
    const json = JSON.parse((await plan(early, ['--max-runtime', '2h30m', '--json'])).stdout).forecast;
    expect(json).toMatchObject({ basis: 'rough', verdict: 'unproven' });
  });

  it('a runtime short even of the rough floor is a warning naming the step, not a refusal on 8 steps', async () => {
    const { code, stdout, stderr } = await plan(early, ['--max-runtime', '1h']);
    expect(code).toBe(0);
    expect(stdout + stderr).toMatch(
      /max runtime 1h would stop training at about step \d+ of 200 even on a rough forecast/,
    );
  });

  it('beside complete runs, the stopped one is listed and not used', async () => {
    const { code, stdout } = await plan(both, ['--json']);
    expect(code).toBe(0);
    const f = JSON.parse(stdout).forecast;
    expect(f.basis).toBe('measured');
    expect(f.similar.find((s: { id: string }) => s.id === 'annotations-adhoc-20261104-000000')).toMatchObject(
      { used: false },
    );
    expect(Math.abs(f.wallSeconds - TRUE_WALL) / TRUE_WALL).toBeLessThan(0.01);
  });
});
