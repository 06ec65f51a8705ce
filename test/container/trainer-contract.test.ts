import * as fs from 'node:fs';
import * as path from 'node:path';
import { runEntrypoint } from '../../lib/container/entrypoint';
import { safetensorsWith } from '../helpers/fixtures';
import { describeWithPeer } from '../helpers/moto';
import { pythonAvailable } from '../helpers/python';
import { theirJob, type TheirJob } from '../helpers/their-job';

jest.setTimeout(120_000);

/*
 * Their trainer as it really behaves (test/fixtures/their-repo, real Python: a src-layout package
 * imported at the top of the entrypoint, Ray actors of that package, its own run folder under
 * $SM_MODEL_DIR named after the config file, exports written in place by rank 0 with no done marker,
 * datasets from /tmp/<name>_<split>_cache, weights from the roles' paths, resume_step for the counter
 * only) and their eval script (positional config, --watch-path, a watch loop that never ends), run
 * through the real entrypoint with real child processes and the stand-in Ray (test/fixtures/fake-ray).
 */

/** A whole safetensors file of `elems` 2-byte values (the shared fixture helper). */
const safetensors = (elems: number): Buffer => safetensorsWith(Buffer.alloc(2 * elems, 7));

const run = (j: TheirJob, extra: Partial<Parameters<typeof runEntrypoint>[0]> = {}) =>
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

describeWithPeer('python3.11', pythonAvailable())("their trainer's contract, through the entrypoint", () => {
  it('streams the run folder the trainer makes for itself, named after the config file, with the datasets where its loader looks', async () => {
    const j = await theirJob({ maxSteps: 4, interval: 2 });
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
    const j = await theirJob({
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
    const j = await theirJob({ maxSteps: 24, interval: 2 });
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
    const j = await theirJob({ maxSteps: 6, interval: 2, mode: { crashDuringExportOfStep: 4 } });
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
    // The export's process (rank 0's actor) was killed: the trainer dies with it, as theirs does.
    const failure = fs.readFileSync(path.join(j.root, 'output', 'failure'), 'utf8');
    expect(failure).toMatch(/^trainer exited with code 1\n/);
    expect(failure).toMatch(/RayActorError: .*exited \(137\)/);
  });

  it('their package comes from the shipped src/: first on PYTHONPATH for the trainer and for the Ray workers that host its actors', async () => {
    const j = await theirJob({ maxSteps: 2, interval: 2 });
    expect(await run(j)).toBe(0);
    const [folder] = trainerFolders(j.root);
    const env = readJson(path.join(j.root, 'checkpoints', folder, 'fixture-env.json'));
    const src = path.join(j.root, 'code', 'src');
    expect(env.PYTHONPATH.split(':')[0]).toBe(src);
    // No /opt/ml/code/src here, so their runtime_env adds nothing: the actor found the package through
    // the environment `ray start` was given.
    expect(env.ranks).toEqual([expect.objectContaining({ rank: 0, module: 'rlvr_experiments.titan_actor' })]);
    expect(j.text()).toContain(`PYTHONPATH=${src}`);
  });

  it('without the import roots the trainer dies at its first import, as it did before they were shipped', async () => {
    const j = await theirJob({ maxSteps: 2, interval: 2, importRoots: [] });
    expect(await run(j)).toBe(1);
    const failure = fs.readFileSync(path.join(j.root, 'output', 'failure'), 'utf8');
    expect(failure).toMatch(/^trainer exited with code 1\n/);
    expect(failure).toContain('train_grpo_sft.py", line 16, in <module>');
    expect(failure).toContain("ModuleNotFoundError: No module named 'rlvr_experiments'");
  });
});
