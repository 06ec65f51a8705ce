import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { stringify } from 'yaml';
import { runEntrypoint } from '../../lib/container/entrypoint';
import { BUILT_IN_PROFILES, buildJobContract } from '../../lib/trainers';
import { safetensorsWith, tempDir } from '../helpers/fixtures';

jest.setTimeout(120_000);

/*
 * Issue 18: their trainer as it really behaves (test/fixtures/their-trainer: its own run folder under
 * $SM_MODEL_DIR named after the config file, exports written in place with no done marker, datasets
 * from /tmp/<name>_<split>_cache, weights from the roles' paths, resume_step for the counter only) and
 * their eval script (positional config, --watch-path, a watch loop that never ends), run through the
 * real entrypoint with real child processes.
 */
const FIXTURES = path.join(__dirname, '..', 'fixtures', 'their-trainer');
const GRPO_SFT = BUILT_IN_PROFILES.find((p) => p.id === 'grpo-sft')!;
const CONFIG_NAME = 'qwen3-1.7B-gsm8k.yaml';

/** A whole safetensors file of `elems` 2-byte values (the shared fixture helper). */
const safetensors = (elems: number): Buffer => safetensorsWith(Buffer.alloc(2 * elems, 7));

interface Job {
  root: string;
  tmp: string;
  base: string;
  env: NodeJS.ProcessEnv;
  out: PassThrough;
  text: () => string;
}

function job(options: {
  maxSteps: number;
  interval: number;
  evalConfig?: Record<string, unknown>;
  mode?: object;
}): Job {
  const root = tempDir('rlvr-ml-');
  const tmp = tempDir('rlvr-tmp-');
  const data = path.join(root, 'input', 'data');
  const base = path.join(data, 'model');
  fs.mkdirSync(base, { recursive: true });
  fs.writeFileSync(path.join(base, 'config.json'), '{"model_type": "qwen3"}');
  fs.mkdirSync(path.join(data, 'gsm8k_train'), { recursive: true });
  fs.writeFileSync(path.join(data, 'gsm8k_train', 'dataset_info.json'), '{}');
  const code = path.join(root, 'code', 'entrypoints');
  fs.mkdirSync(code, { recursive: true });
  for (const f of ['train_grpo_sft.py', 'eval_benchmarks.py'])
    fs.copyFileSync(path.join(FIXTURES, f), path.join(code, f));
  if (options.mode)
    fs.writeFileSync(path.join(root, 'code', 'fixture-mode.json'), JSON.stringify(options.mode));
  const config = {
    run: { name: 'qwen3_gsm8k' },
    model: { path: base },
    training: { max_steps: options.maxSteps, checkpoint_interval: options.interval },
    data: { dataset: 'gsm8k' },
    roles: [
      {
        name: 'trainer',
        kind: 'titan',
        config: { model: { hf_assets_path: base }, checkpoint: { folder: 'checkpoint' } },
      },
      { name: 'reference', kind: 'vllm', config: { model: base } },
      { name: 'rollout', kind: 'vllm', config: { model: base } },
    ],
  };
  const configDir = path.join(data, 'config');
  fs.mkdirSync(configDir, { recursive: true });
  fs.writeFileSync(path.join(configDir, 'resolved-config.yaml'), stringify(config));
  const contract = buildJobContract({
    profile: GRPO_SFT,
    config,
    configName: CONFIG_NAME,
    expectCheckpoints: true,
    cachedDatasets: [{ channel: 'gsm8k_train', folder: 'gsm8k_train' }],
    evalConfig: options.evalConfig,
  });
  fs.writeFileSync(path.join(configDir, 'contract.json'), JSON.stringify(contract));
  if (options.evalConfig)
    fs.writeFileSync(path.join(configDir, 'eval-config.yaml'), stringify(options.evalConfig));
  fs.mkdirSync(path.join(root, 'input', 'config'), { recursive: true });
  fs.writeFileSync(
    path.join(root, 'input', 'config', 'resourceconfig.json'),
    JSON.stringify({ current_host: 'algo-1', hosts: ['algo-1'], current_instance_type: 'ml.g5.12xlarge' }),
  );
  // `python` is node here, as in the test image: the fixtures are JavaScript.
  const bin = path.join(tmp, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'python'), `#!/bin/sh\nexec ${process.execPath} "$@"\n`, { mode: 0o755 });
  const env: NodeJS.ProcessEnv = {
    PATH: `${bin}:${process.env.PATH}`,
    RLVR_CONFIG: path.join(configDir, 'resolved-config.yaml'),
    RLVR_RUN_NAME: 'qwen3_gsm8k',
    RLVR_TRAIN_GPUS: '0,1',
    RLVR_EVAL_GPUS: options.evalConfig ? '2' : '',
    RLVR_USE_RAY: '0',
    RLVR_TRAINER_COMMAND: GRPO_SFT.command,
    ...(options.evalConfig ? { RLVR_EVAL_CONFIG: path.join(configDir, 'eval-config.yaml') } : {}),
    FIXTURE_TMP: tmp,
    FIXTURE_EVAL_MS: '50',
  };
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  return { root, tmp, base, env, out, text: () => text };
}

const run = (j: Job, extra: Partial<Parameters<typeof runEntrypoint>[0]> = {}) =>
  runEntrypoint({
    root: j.root,
    tmpRoot: j.tmp,
    env: j.env,
    out: j.out,
    pollMs: 50,
    stableMs: 2000,
    evalPollMaxS: 0.1,
    evalTermGraceMs: 2000,
    ...extra,
  });

const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));

/** The trainer's run folders in the job's run folder (those with their run.json). */
function trainerFolders(root: string): string[] {
  const dir = path.join(root, 'checkpoints');
  return fs
    .readdirSync(dir)
    .filter((f) => fs.existsSync(path.join(dir, f, 'run.json')))
    .sort();
}

describe("their trainer's contract, through the entrypoint", () => {
  it('streams the run folder the trainer makes for itself, named after the config file, with the datasets where its loader looks', async () => {
    const j = job({ maxSteps: 4, interval: 2 });
    expect(await run(j)).toBe(0);
    const [folder] = trainerFolders(j.root);
    expect(folder).toMatch(/^qwen3-1\.7B-gsm8k_\d{8}-\d{6}$/);
    const theirs = path.join(j.root, 'checkpoints', folder);
    // Inside /opt/ml/checkpoints (streamed), not on the instance's disk or in /opt/ml/model.
    expect(fs.readdirSync(path.join(theirs, 'checkpoints')).sort()).toEqual([
      `${folder}_final`,
      `${folder}_step2`,
      `${folder}_step4`,
    ]);
    expect(
      fs
        .readFileSync(path.join(theirs, 'traces', 'trace.jsonl'), 'utf8')
        .trim()
        .split('\n'),
    ).toHaveLength(4);
    const fixtureEnv = readJson(path.join(theirs, 'fixture-env.json'));
    expect(fixtureEnv.SM_MODEL_DIR).toBe(path.join(j.root, 'checkpoints'));
    expect(fixtureEnv.datasetsRead).toEqual([path.join(j.tmp, 'gsm8k_train_cache')]);
    expect(fs.realpathSync(path.join(j.tmp, 'gsm8k_train_cache'))).toBe(
      fs.realpathSync(path.join(j.root, 'input', 'data', 'gsm8k_train')),
    );
    // Their files and ours side by side: two run.json, neither overwritten.
    const ours = readJson(path.join(j.root, 'checkpoints', 'run.json'));
    expect(ours.trainerRun).toEqual({
      folder,
      runName: folder,
      checkpoints: `${folder}/checkpoints`,
      traces: `${folder}/traces`,
    });
    expect(ours.attempts).toEqual([expect.objectContaining({ trainerRun: folder, status: 'Completed' })]);
    expect(readJson(path.join(theirs, 'run.json')).run_name).toBe(folder);
    // The trainer role's checkpoint.folder is theirs to keep (runtime.py: overriding it breaks initial_load_in_hf).
    expect(fs.readFileSync(path.join(theirs, 'config.yaml'), 'utf8')).toContain('folder: checkpoint\n');
    const summary = readJson(path.join(j.root, 'checkpoints', 'summary.json'));
    expect(summary).toMatchObject({ status: 'Completed', trainerRun: folder });
    expect(summary.checkpoints).toEqual([`${folder}_step2`, `${folder}_step4`, `${folder}_final`]);
  });

  it('the eval watcher gets their command line, evaluates every complete checkpoint including _final, and the job ends seconds after the last result', async () => {
    const j = job({
      maxSteps: 6,
      interval: 2,
      mode: { exportPauseMs: 400 },
      evalConfig: {
        benchmarks: [{ task: 'gsm8k_cot', num_fewshot: 8 }, { task: 'ifeval' }],
        vllm: { tensor_parallel_size: 1 },
        // Another run's checkpoints, as 10 of their 13 eval configs name: replaced.
        watch: {
          enable: true,
          local_dir: '/efs/rlvr-experiments/results/old/checkpoints',
          pattern: 'old_step*',
          poll_interval_s: 300,
        },
      },
    });
    expect(await run(j)).toBe(0);
    const ended = Date.now();
    const [folder] = trainerFolders(j.root);
    const evals = path.join(j.root, 'checkpoints', 'evals');
    const env = readJson(path.join(evals, 'fixture-eval-env.json'));
    expect(env.argv).toEqual([
      path.join(evals, 'eval-config.yaml'),
      '--watch-path',
      path.join(j.tmp, 'rlvr-eval-view', '*'),
    ]);
    expect(env.CUDA_VISIBLE_DEVICES).toBe('2');
    const names = [`${folder}_step2`, `${folder}_step4`, `${folder}_step6`, `${folder}_final`];
    const results: { file: string; complete: boolean; mtime: number }[] = [];
    for (const n of names) {
      for (const key of ['gsm8k_cot_8shot', 'ifeval_0shot']) {
        const dir = path.join(evals, n, key);
        const [file] = fs.readdirSync(dir);
        const body = readJson(path.join(dir, file));
        results.push({
          file,
          complete: body.fixture.weightsComplete,
          mtime: fs.statSync(path.join(dir, file)).mtimeMs,
        });
      }
    }
    // Their script takes a checkpoint as soon as model.safetensors exists; it was only ever shown whole ones.
    expect(results.every((r) => r.complete)).toBe(true);
    expect(ended - Math.max(...results.map((r) => r.mtime))).toBeLessThan(5000);
    const summary = readJson(path.join(j.root, 'checkpoints', 'summary.json'));
    expect(summary.eval).toMatchObject({ evaluated: names, missing: [], timedOut: false });
    // The watcher never ends by itself: it was stopped (SIGTERM), not left running past the job.
    expect(summary.eval.exitCode).not.toBe(0);
    expect(j.text()).toMatch(/eval watcher stopped: evaluated .*_final/);
    // Their script links model-00001-of-00001.safetensors beside model.safetensors: in the view only.
    expect(
      fs.readdirSync(path.join(j.root, 'checkpoints', folder, 'checkpoints', `${folder}_final`)).sort(),
    ).toEqual(['config.json', 'model.safetensors', 'tokenizer.json']);
    expect(j.text()).toContain('watch.pattern (old_step*) replaced');
  });

  it('a restart over step20 and a half-written step40 resumes from step20: policy load paths rewritten, reference untouched, resume_step 20', async () => {
    const j = job({ maxSteps: 24, interval: 2 });
    // The earlier attempt, as SageMaker copies it back from S3.
    const runDir = path.join(j.root, 'checkpoints');
    const earlier = 'qwen3-1.7B-gsm8k_20261123-010203';
    const ckpts = path.join(runDir, earlier, 'checkpoints');
    fs.mkdirSync(path.join(ckpts, `${earlier}_step20`), { recursive: true });
    fs.writeFileSync(path.join(ckpts, `${earlier}_step20`, 'model.safetensors'), safetensors(1024));
    fs.writeFileSync(path.join(ckpts, `${earlier}_step20`, 'config.json'), '{"model_type": "qwen3"}');
    // Cut off between its weights and the config files their export copies after them.
    fs.mkdirSync(path.join(ckpts, `${earlier}_step30`));
    fs.writeFileSync(path.join(ckpts, `${earlier}_step30`, 'model.safetensors'), safetensors(1024));
    fs.mkdirSync(path.join(ckpts, `${earlier}_step40`));
    fs.writeFileSync(
      path.join(ckpts, `${earlier}_step40`, 'model.safetensors'),
      safetensors(1024).subarray(0, 900),
    );
    fs.writeFileSync(path.join(runDir, earlier, 'run.json'), JSON.stringify({ run_name: earlier }));
    fs.writeFileSync(
      path.join(runDir, 'run.json'),
      JSON.stringify({
        trainerRun: { folder: earlier },
        attempts: [{ startedAt: '2026-11-23T01:02:03Z', trainerRun: earlier }],
      }),
    );

    expect(await run(j)).toBe(0);
    const folders = trainerFolders(j.root);
    expect(folders).toHaveLength(2);
    const now = folders.find((f) => f !== earlier)!;
    const fixtureEnv = readJson(path.join(runDir, now, 'fixture-env.json'));
    const step20 = path.join(ckpts, `${earlier}_step20`);
    expect(fixtureEnv.loadPaths).toEqual({ trainer: step20, rollout: step20, reference: j.base });
    expect(fixtureEnv.resumeStep).toBe(20);
    expect(fs.readdirSync(path.join(runDir, now, 'checkpoints')).sort()).toEqual([
      `${now}_final`,
      `${now}_step22`,
      `${now}_step24`,
    ]);
    const ours = readJson(path.join(runDir, 'run.json'));
    expect(ours.resume).toMatchObject({
      kind: 'weights',
      from: `${earlier}_step20`,
      step: 20,
      note: 'weights-only resume: optimizer state and data order restart',
    });
    expect(ours.attempts).toHaveLength(2);
    expect(ours.attempts[1]).toMatchObject({ trainerRun: now, resume: { from: `${earlier}_step20` } });
    expect(j.text()).toMatch(
      new RegExp(
        `restart: ${earlier}_step40 is not complete \\(model.safetensors has 900 of its \\d+ bytes\\)`,
      ),
    );
    expect(j.text()).toContain(
      `restart: ${earlier}_step30 is not complete (no config.json (yet)): passed over`,
    );
  });

  it('a checkpoint cut off mid-export is never counted: the job fails with the trainer, keeping only whole checkpoints', async () => {
    const j = job({ maxSteps: 6, interval: 2, mode: { crashDuringExportOfStep: 4 } });
    expect(await run(j)).toBe(1);
    const [folder] = trainerFolders(j.root);
    const summary = readJson(path.join(j.root, 'checkpoints', 'summary.json'));
    expect(summary.status).toBe('Failed');
    expect(summary.checkpoints).toEqual([`${folder}_step2`]);
    expect(
      fs.existsSync(
        path.join(j.root, 'checkpoints', folder, 'checkpoints', `${folder}_step4`, 'model.safetensors'),
      ),
    ).toBe(true);
    expect(fs.readFileSync(path.join(j.root, 'output', 'failure'), 'utf8')).toMatch(
      /^trainer exited with code 137/,
    );
  });
});
