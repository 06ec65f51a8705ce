import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../helpers/cli';
import {
  dockerAvailable,
  startDockerEngine,
  writeContainerDockerDir,
  type DockerEngine,
} from '../helpers/docker';
import { useEmulator } from '../helpers/emulator-suite';
import { GSM8K_EXAMPLE, tempDir } from '../helpers/fixtures';
import { describeWithPeer } from '../helpers/moto';
import { theirRepository } from '../helpers/python';

jest.setTimeout(300_000);

/** The GSM8K example as a config of their repository: local weights, 4 steps, a checkpoint every 2. */
function theirConfig(launcher = ''): string {
  return fs
    .readFileSync(GSM8K_EXAMPLE, 'utf8')
    .replaceAll('Qwen/Qwen3-1.7B-Base', '../models/Qwen3-1.7B-Base')
    .replace(/max_steps: \d+/, 'max_steps: 4')
    .replace(/checkpoint_interval: \d+/, 'checkpoint_interval: 2')
    .replace(/(\n\s+)interval: 20/, '$1interval: 2')
    .replace(/^ {2}trainer_src: .*\n/m, '')
    .replace(/^ {2}eval_config: .*\n/m, launcher ? '' : '  eval_config: eval/lm_eval_watch.yaml\n')
    .replace('launcher:\n', `launcher:\n${launcher}`);
}

/**
 * Their GRPO trainer, declared (`rlvr-trainers.yaml`) to need no folder shared across hosts — true of
 * the replica, which writes no torchtitan configs for other hosts to read — so it may run on two (a
 * stack without a shared file system refuses their built-in profiles there).
 */
const MULTI_HOST_PROFILE = `trainers:
  - id: grpo-sft
    runtime: {shared_folder: false}
`;

/**
 * Their repository on day one (test/fixtures/their-repo: a src-layout package that every entrypoint
 * imports at its top, a Ray actor class in the package, a uv.lock), run with `submit --local` through
 * the real entrypoint in the real engine, on one host and on two.
 */
describeWithPeer('dockerd', dockerAvailable())("their repository's trainer (real engine)", () => {
  const emulator = useEmulator();
  let engine: DockerEngine;
  let dockerDir: string;
  let resultsDir: string;

  beforeAll(async () => {
    engine = await startDockerEngine();
    dockerDir = tempDir('rlvr-docker-');
    writeContainerDockerDir(dockerDir);
    resultsDir = tempDir('rlvr-results-');
  });
  afterAll(async () => {
    await engine?.stop();
  });

  const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
  const repo = (files: Record<string, string>) =>
    theirRepository({
      'models/Qwen3-1.7B-Base/config.json': '{"model_type": "qwen3"}\n',
      'configs/eval/lm_eval_watch.yaml': fs.readFileSync(
        path.join(path.dirname(GSM8K_EXAMPLE), '..', 'eval', 'lm_eval_watch.yaml'),
        'utf8',
      ),
      'fixture-mode.json': JSON.stringify({ exportPauseMs: 200 }),
      ...files,
    });

  it('one host: the package imports from the shipped src/, its Ray actors too, and the run reaches its checkpoints', async () => {
    const root = repo({ 'configs/qwen3-1.7B-gsm8k.yaml': theirConfig() });
    const r = await runCli(
      [
        'submit',
        path.join(root, 'configs', 'qwen3-1.7B-gsm8k.yaml'),
        '--local',
        '--docker-dir',
        dockerDir,
        '--json',
      ],
      {
        env: emulator.cliEnv({ DOCKER_HOST: engine.host, XDG_CACHE_HOME: tempDir('rlvr-cache-') }),
        cwd: resultsDir,
      },
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect({ code: r.code, out: r.code ? r.stdout.slice(-3000) + r.stderr.slice(-3000) : '' }).toEqual({
      code: 0,
      out: '',
    });
    const runDir = JSON.parse(r.stdout).runDir as string;
    const folder = readJson(path.join(runDir, 'run.json')).trainerRun.folder as string;
    expect(folder).toMatch(/^qwen3-1\.7B-gsm8k_\d{8}-\d{6}$/);
    const env = readJson(path.join(runDir, folder, 'fixture-env.json'));
    // The import roots the launcher found (pyproject: a src layout) before anything else on the path.
    expect(env.PYTHONPATH.split(':')[0]).toBe('/opt/ml/code/src');
    // Its own run folder under the streamed folder, datasets where its loader looks, weights from channels.
    expect(env).toMatchObject({
      SM_MODEL_DIR: '/opt/ml/checkpoints',
      datasetsRead: ['/tmp/gsm8k_train_cache'],
      loadPaths: { trainer: '/opt/ml/input/data/model', rollout: '/opt/ml/input/data/model' },
    });
    expect(fs.existsSync(path.join(runDir, folder, 'traces', 'trace.jsonl'))).toBe(true);
    expect(env.ranks).toEqual([
      expect.objectContaining({ rank: 0, module: 'rlvr_experiments.titan_actor' }),
      expect.objectContaining({ rank: 1, module: 'rlvr_experiments.titan_actor' }),
    ]);
    expect(fs.readdirSync(path.join(runDir, folder, 'checkpoints')).sort()).toEqual([
      `${folder}_final`,
      `${folder}_step2`,
      `${folder}_step4`,
    ]);
    // Their eval script ran beside it (it imports nothing of the package) and saw every checkpoint.
    expect(readJson(path.join(runDir, 'summary.json')).eval).toMatchObject({
      evaluated: [`${folder}_step2`, `${folder}_step4`, `${folder}_final`],
      missing: [],
    });
  });

  it('two hosts: the worker host imports the package for the actor Ray places there', async () => {
    const root = repo({
      'configs/qwen3-1.7B-gsm8k.yaml': theirConfig('  trainer: grpo-sft\n'),
      'rlvr-trainers.yaml': MULTI_HOST_PROFILE,
    });
    const r = await runCli(
      [
        'submit',
        path.join(root, 'configs', 'qwen3-1.7B-gsm8k.yaml'),
        '--local',
        '--instances',
        '2',
        '--docker-dir',
        dockerDir,
        '--json',
      ],
      {
        env: emulator.cliEnv({ DOCKER_HOST: engine.host, XDG_CACHE_HOME: tempDir('rlvr-cache-') }),
        cwd: resultsDir,
      },
    );
    expect({ code: r.code, out: r.code ? r.stdout.slice(-3000) + r.stderr.slice(-3000) : '' }).toEqual({
      code: 0,
      out: '',
    });
    const runDir = JSON.parse(r.stdout).runDir as string;
    const folder = readJson(path.join(runDir, 'run.json')).trainerRun.folder as string;
    const env = readJson(path.join(runDir, folder, 'fixture-env.json'));
    // Rank 0 on the head, rank 1 on the worker: both imported rlvr_experiments.titan_actor.
    expect(env.ranks).toEqual([
      expect.objectContaining({ rank: 0, host: 'algo-1', module: 'rlvr_experiments.titan_actor' }),
      expect.objectContaining({ rank: 1, host: 'algo-2', module: 'rlvr_experiments.titan_actor' }),
    ]);
    expect(fs.readdirSync(path.join(runDir, folder, 'checkpoints')).sort()).toEqual([
      `${folder}_final`,
      `${folder}_step2`,
      `${folder}_step4`,
    ]);
    expect(readJson(path.join(runDir, 'run-algo-2.json'))).toMatchObject({ status: 'Completed' });
  });
});
