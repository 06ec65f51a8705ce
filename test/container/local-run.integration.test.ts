import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bareEnv, runCli, type CliResult } from '../helpers/cli';
import {
  dockerAvailable,
  startDockerEngine,
  writeContainerDockerDir,
  type DockerEngine,
} from '../helpers/docker';
import { BUCKET } from '../helpers/emulator-data';
import { GSM8K_EXAMPLE, makeTrainerRepo, REPO_ROOT, tempDir } from '../helpers/fixtures';
import { useEmulator } from '../helpers/emulator-suite';
import { describeWithPeer } from '../helpers/moto';

jest.setTimeout(300_000);

const FAKES = path.join(__dirname, '..', 'fixtures', 'fake-trainer');

/** The GSM8K example made small and local: a local model folder, a local dataset, 4 steps. */
function localConfig(): string {
  return (
    fs
      .readFileSync(GSM8K_EXAMPLE, 'utf8')
      .replaceAll('Qwen/Qwen3-1.7B-Base', '../models/Qwen3-1.7B-Base')
      .replace(/^(\s+)dataset: gsm8k\s*$/m, '$1dataset: ../data/gsm8k_train')
      .replace(/max_steps: \d+/, 'max_steps: 4')
      .replace(/checkpoint_interval: \d+/, 'checkpoint_interval: 2')
      .replace(/(\n\s+)interval: 20/, '$1interval: 2')
      // Inside the trainer repository, which is the trainer's source itself.
      .replace(/^ {2}trainer_src: .*\n/m, '')
      // The fake trainer is no trainer of theirs: no profile, so its dataset may be a local folder.
      .replace('launcher:\n', 'launcher:\n  trainer_command: python entrypoints/fake_trainer.py {config}\n')
  );
}

/**
 * `submit --local` against a real Docker engine: the real entrypoint, bundled into a test
 * image built FROM scratch, runs a fake trainer and eval watcher that behave like the real ones.
 */
describeWithPeer('dockerd', dockerAvailable())('submit --local (real engine, real entrypoint)', () => {
  // moto stands in for S3 in the one test whose dataset is only in S3.
  const emulator = useEmulator();
  let engine: DockerEngine;
  let dockerDir: string;
  let trainer: { root: string; configPath: string };
  let resultsDir: string;

  beforeAll(async () => {
    engine = await startDockerEngine();
    dockerDir = tempDir('rlvr-docker-');
    writeContainerDockerDir(dockerDir);
    trainer = makeTrainerRepo({
      config: localConfig(),
      files: {
        'entrypoints/fake_trainer.py': fs.readFileSync(path.join(FAKES, 'train_grpo.py'), 'utf8'),
        'entrypoints/eval_benchmarks.py': fs.readFileSync(path.join(FAKES, 'eval_benchmarks.py'), 'utf8'),
        'models/Qwen3-1.7B-Base/config.json': '{"model_type": "qwen3"}\n',
      },
    });
    fs.mkdirSync(path.join(trainer.root, 'data', 'gsm8k_train'), { recursive: true });
    fs.writeFileSync(path.join(trainer.root, 'data', 'gsm8k_train', 'dataset_info.json'), '{}');
    resultsDir = tempDir('rlvr-results-');
  });
  afterAll(async () => {
    await engine?.stop();
  });

  const setMode = (mode: Record<string, unknown>) =>
    fs.writeFileSync(
      path.join(trainer.root, 'fake-mode.json'),
      JSON.stringify({ steps: 4, interval: 2, ...mode }),
    );
  const args = (...extra: string[]) => [
    'submit',
    trainer.configPath,
    '--local',
    '--docker-dir',
    dockerDir,
    '--json',
    ...extra,
  ];
  const env = () => bareEnv({ DOCKER_HOST: engine.host });
  const runLocal = async (...extra: string[]): Promise<CliResult & { runDir: string }> => {
    const r = await runCli(args(...extra), { env: env(), cwd: resultsDir });
    const runDir = JSON.parse(r.stdout || '{}').runDir as string;
    return { ...r, runDir };
  };
  const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));

  it("produces the team's run folder, with each process on its own GPUs", async () => {
    setMode({});
    const r = await runLocal();
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.code).toBe(0);
    expect(path.basename(r.runDir)).toMatch(/^gsm8k_\d{8}-\d{6}$/);
    expect(path.dirname(r.runDir)).toBe(path.join(fs.realpathSync(resultsDir), 'results'));
    const entries = fs.readdirSync(r.runDir).sort();
    for (const e of [
      'config.yaml',
      'RESULTS.md',
      'run.json',
      'patches',
      'traces',
      'checkpoints',
      'evals',
      'logs',
    ]) {
      expect(entries).toContain(e);
    }
    expect(fs.readdirSync(path.join(r.runDir, 'checkpoints')).sort()).toEqual([
      'qwen3-1.7B-gsm8k-grpo_final',
      'qwen3-1.7B-gsm8k-grpo_step2',
      'qwen3-1.7B-gsm8k-grpo_step4',
    ]);
    expect(
      fs
        .readFileSync(path.join(r.runDir, 'traces', 'trace.jsonl'), 'utf8')
        .trim()
        .split('\n'),
    ).toHaveLength(4);
    expect(fs.readdirSync(path.join(r.runDir, 'patches')).sort()).toEqual(
      expect.arrayContaining([
        'git_diff.patch',
        'git_diff_cached.patch',
        'git_status.txt',
        'git_untracked.txt',
      ]),
    );
    const runInfo = readJson(path.join(r.runDir, 'run.json'));
    expect(runInfo).toMatchObject({
      status: 'Completed',
      instanceType: 'local',
      host: 'algo-1',
      exitCode: 0,
    });
    expect(runInfo.gitCommit).toMatch(/^[0-9a-f]{40}$/);
    expect(runInfo.channels).toEqual(['config', 'gsm8k_train', 'model']);
    expect(runInfo.image).toMatch(/^rlvr-local\/train:deps-[0-9a-f]{24}$/);
    // The config the trainer reads keeps the user's file name and the trainer role's checkpoint.folder.
    const trainerEnv = readJson(path.join(r.runDir, 'trainer-env.json'));
    expect(trainerEnv.checkpointFolderInConfig).toBe('checkpoint');
    expect(trainerEnv.argv).toEqual(['/tmp/rlvr-trainer-config/gsm8k.yaml']);

    // GPU split: the template's train GPUs 0-5 to the trainer and Ray's head, eval GPUs 6,7 to the watcher.
    expect(trainerEnv).toMatchObject({
      CUDA_VISIBLE_DEVICES: '0,1,2,3,4,5',
      RLVR_ROLE: 'trainer',
      RAY_ADDRESS: '127.0.0.1:6379',
    });
    const evalEnv = readJson(path.join(r.runDir, 'evals', 'eval-env.json'));
    expect(evalEnv).toMatchObject({ CUDA_VISIBLE_DEVICES: '6,7', RLVR_ROLE: 'eval', tp: '1' });
    const ray = fs.readFileSync(path.join(r.runDir, 'logs', 'ray-calls.txt'), 'utf8');
    expect(ray).toMatch(/^ray start --head .*--num-gpus=6 .*CUDA_VISIBLE_DEVICES=0,1,2,3,4,5$/m);
    expect(ray).toMatch(/^ray stop --force/m);

    // The watcher saw every checkpoint, the final one included, and only complete ones.
    const evaluated = fs
      .readFileSync(path.join(r.runDir, 'evals', 'evaluated.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(evaluated.map((e) => e.name).sort()).toEqual(
      fs.readdirSync(path.join(r.runDir, 'checkpoints')).sort(),
    );
    expect(evaluated.every((e) => e.complete)).toBe(true);
    expect(fs.readFileSync(path.join(r.runDir, 'logs', 'eval.log'), 'utf8')).toContain(
      'evaluated qwen3-1.7B-gsm8k-grpo_final',
    );
    expect(r.stdout + r.stderr).toContain('[trainer] training done');
    expect(readJson(path.join(r.runDir, 'summary.json'))).toMatchObject({
      status: 'Completed',
      lastCheckpoint: '/opt/ml/checkpoints/checkpoints/qwen3-1.7B-gsm8k-grpo_final',
    });
  });

  it('a failing trainer gives exit 1 and a failure file naming the cause', async () => {
    setMode({ failAt: 3 });
    const r = await runLocal();
    expect(r.code).toBe(1);
    const failure = fs.readFileSync(path.join(r.runDir, 'failure.txt'), 'utf8');
    expect(failure.split('\n')[0]).toBe('trainer exited with code 3');
    expect(failure).toContain('RuntimeError: CUDA out of memory (fake)');
    expect(readJson(path.join(r.runDir, 'run.json')).status).toBe('Failed');
  });

  it('a trainer that exits 0 without writing checkpoints fails the job', async () => {
    setMode({ noCheckpoints: true });
    const r = await runLocal();
    expect(r.code).toBe(1);
    const failure = fs.readFileSync(path.join(r.runDir, 'failure.txt'), 'utf8');
    expect(failure).toMatch(/^the trainer exited 0 but wrote no complete checkpoint/);
  });

  it('Ctrl-C stops the job with SIGTERM: the last checkpoint is complete and it ends within the grace period', async () => {
    setMode({ steps: 200, interval: 2, stepMs: 150, writeMs: 200 });
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'rlvr.js'), ...args()], {
      cwd: resultsDir,
      env: env(),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    // Interrupt while a checkpoint is being written.
    const deadline = Date.now() + 120_000;
    while (!/saved qwen3-1\.7B-gsm8k-grpo_step4/.test(stdout + stderr) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 450)); // into step 6's checkpoint write
    const interruptedAt = Date.now();
    child.kill('SIGINT');
    const code = await exited;
    const tookMs = Date.now() - interruptedAt;
    expect(tookMs).toBeLessThan(120_000);
    expect(code).toBe(0);
    const runDir = JSON.parse(stdout).runDir as string;
    expect(stdout + stderr).toContain('SIGTERM: finishing the current checkpoint');
    const ckpts = fs.readdirSync(path.join(runDir, 'checkpoints')).sort();
    const last = path.join(runDir, 'checkpoints', ckpts[ckpts.length - 1]);
    const index = readJson(path.join(last, 'model.safetensors.index.json'));
    for (const f of Object.values(index.weight_map) as string[]) {
      expect(fs.statSync(path.join(last, f)).size).toBe(1024 * 1024);
    }
    expect(readJson(path.join(runDir, 'summary.json'))).toMatchObject({
      status: 'Stopped',
      killedAfterGrace: false,
    });
  });

  it('fetches an input that is only in S3 into the local cache and binds it', async () => {
    setMode({});
    const config = path.join(trainer.root, 'configs', 'gsm8k-s3-data.yaml');
    fs.writeFileSync(
      config,
      localConfig()
        .replace('dataset: ../data/gsm8k_train', 'dataset: gsm8k')
        .replace('eval_config: ../eval/lm_eval_watch.yaml', 'eval_config: eval/lm_eval_watch.yaml'),
    );
    const cache = tempDir('rlvr-cache-');
    const r = await runCli(['submit', config, '--local', '--docker-dir', dockerDir, '--json'], {
      env: emulator.cliEnv({ DOCKER_HOST: engine.host, XDG_CACHE_HOME: cache }),
      cwd: resultsDir,
    });
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.code).toBe(0);
    const runDir = JSON.parse(r.stdout).runDir as string;
    // With --json, progress events are JSON lines on stderr: the run says where each channel comes from.
    const started = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { type: string; binds?: unknown[] })
      .find((e) => e.type === 'started');
    expect(started?.binds).toContainEqual({
      what: 'dataset gsm8k_train',
      host: path.join(cache, 'rlvr', 's3', BUCKET, 'rlvr-experiments/datasets/gsm8k_train/'),
    });
    expect(readJson(path.join(runDir, 'trainer-env.json')).datasetFiles).toEqual([
      'data-00000-of-00001.arrow',
      'dataset_info.json',
    ]);
  });

  it('doctor finds the engine through DOCKER_HOST', async () => {
    const r = await runCli(['doctor'], { env: env() });
    expect(r.stdout).toMatch(
      new RegExp(`ok {4}docker engine: Docker \\S+ at ${engine.host.replace(/[/.]/g, '\\$&')}`),
    );
  });

  it('refuses a GPU split outside the GPUs given to the container (exit 2, no run folder)', async () => {
    const listResults = () =>
      fs.existsSync(path.join(resultsDir, 'results')) ? fs.readdirSync(path.join(resultsDir, 'results')) : [];
    const before = listResults();
    const r = await runLocal('--gpus', '0,1');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--gpus gives the container 2 GPU\(s\).*uses GPU 2, 3, 4, 5, 6, 7/);
    expect(listResults()).toEqual(before);
    const dry = await runLocal('--dry-run');
    expect(dry.code).toBe(2);
    expect(dry.stderr).toContain('--local runs the job here; for its plan, use --dry-run without --local');
    expect(listResults()).toEqual(before);
  });
});
