import * as fs from 'node:fs';
import * as path from 'node:path';
import { RUN_FOLDER } from '../../lib/layout';
import { runCli } from '../helpers/cli';
import {
  dockerAvailable,
  startDockerEngine,
  writeContainerDockerDir,
  type DockerEngine,
} from '../helpers/docker';
import { useEmulator } from '../helpers/emulator-suite';
import { tempDir } from '../helpers/fixtures';
import { describeWithPeer } from '../helpers/moto';
import { theirSubmitConfig, theirSubmitRepository } from '../helpers/their-job';

jest.setTimeout(300_000);

/**
 * Their modules assign NCCL's interface at import (syncing.py, titan_actor.py, vllm_engine_actor.py):
 * these jobs hold the platform's values, as the team's jobs must.
 */
const theirConfig = () => theirSubmitConfig({ launcher: '  hold_platform_env: true\n' });

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
  const repo = theirSubmitRepository;

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
      // One host: the torchtitan configs in a folder of its own (their default, the source, is read-only).
      RLVR_TITAN_CONFIG_DIR: '/tmp/rlvr-shared-folder',
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

  it.each([2, 3])(
    '%i hosts on one shared volume: the worker reads the config the head wrote, rank 0 exports from a worker, the head streams and evaluates it',
    async (hosts) => {
      const root = repo({
        'configs/qwen3-1.7B-gsm8k.yaml': theirConfig(),
        // One stand-in actor takes the head's first place, so the trainer's rank 0 lands on a worker.
        'fixture-mode.json': JSON.stringify({ exportPauseMs: 200, placeHolders: 1 }),
      });
      const r = await runCli(
        [
          'submit',
          path.join(root, 'configs', 'qwen3-1.7B-gsm8k.yaml'),
          '--local',
          '--instances',
          String(hosts),
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
      const runInfo = readJson(path.join(runDir, 'run.json'));
      const folder = runInfo.trainerRun.folder as string;
      const jobFolder = `/opt/ml/input/data/shared/rlvr-jobs/${path.basename(runDir)}`;
      expect(runInfo.sharedFolder).toBe(jobFolder);
      // Whether it ran isolated, and why, is in its record (AWS documents a file-system channel neither way).
      expect(runInfo.networkIsolation).toEqual({
        value: true,
        reason: expect.stringContaining('shared_fs_network_isolation true'),
      });
      const env = readJson(path.join(runDir, folder, 'fixture-env.json'));
      // The trainer's run root and its torchtitan configs on the shared file system, the same on every host.
      expect(env).toMatchObject({
        SM_MODEL_DIR: `${jobFolder}/run`,
        RLVR_TITAN_CONFIG_DIR: `${jobFolder}/shared`,
      });
      expect(env.titanConfig.startsWith(`${jobFolder}/shared/`)).toBe(true);
      // Rank 0 on a worker host (whichever joined Ray first); every rank read the config the driver wrote on the head.
      const rank0 = env.ranks[0];
      expect(rank0).toMatchObject({ rank: 0, module: 'rlvr_experiments.titan_actor' });
      expect(rank0.host).toMatch(hosts === 2 ? /^algo-2$/ : /^algo-[23]$/);
      for (const rank of env.ranks) expect(rank.configRead).toBeGreaterThan(0);
      const exports = readJson(path.join(runDir, folder, 'fixture-exports.json')) as { host: string }[];
      expect(exports.map((e) => e.host)).toEqual([rank0.host, rank0.host, rank0.host]);
      // Every export reached the streamed folder once, whole, under its one name.
      const names = [`${folder}_final`, `${folder}_step2`, `${folder}_step4`];
      expect(fs.readdirSync(path.join(runDir, folder, 'checkpoints')).sort()).toEqual(names);
      for (const n of names) {
        expect(fs.readdirSync(path.join(runDir, folder, 'checkpoints', n)).sort()).toEqual([
          'config.json',
          'model.safetensors',
          'tokenizer.json',
        ]);
      }
      // The head's eval watcher saw the checkpoints a worker wrote.
      expect(readJson(path.join(runDir, 'summary.json')).eval).toMatchObject({
        evaluated: [`${folder}_step2`, `${folder}_step4`, `${folder}_final`],
        missing: [],
      });
      for (let i = 2; i <= hosts; i++)
        expect(readJson(path.join(runDir, `run-algo-${i}.json`))).toMatchObject({ status: 'Completed' });
      const log = fs.readFileSync(path.join(runDir, RUN_FOLDER.localRunLog), 'utf8');
      expect(log).toContain(
        "the job's folder on the shared file system is copied into the run folder and removed",
      );
    },
  );

  it('2 hosts, a restart: the checkpoint a worker exported before the failure resumes the job on every host', async () => {
    const root = repo({
      'configs/qwen3-1.7B-gsm8k.yaml': theirConfig(),
      'fixture-mode.json': JSON.stringify({ exportPauseMs: 200, placeHolders: 1, failAtStep: 3 }),
    });
    const submit = (extra: string[]) =>
      runCli(
        [
          'submit',
          path.join(root, 'configs', 'qwen3-1.7B-gsm8k.yaml'),
          '--local',
          '--instances',
          '2',
          '--docker-dir',
          dockerDir,
          '--json',
          ...extra,
        ],
        {
          env: emulator.cliEnv({ DOCKER_HOST: engine.host, XDG_CACHE_HOME: tempDir('rlvr-cache-') }),
          cwd: resultsDir,
        },
      );
    const first = await submit([]);
    expect(first.code).toBe(1);
    const runDir = JSON.parse(first.stdout).runDir as string;
    const firstFolder = readJson(path.join(runDir, 'run.json')).trainerRun.folder as string;
    // The step the worker exported before the failure reached the run folder whole.
    expect(fs.readdirSync(path.join(runDir, firstFolder, 'checkpoints'))).toEqual([`${firstFolder}_step2`]);

    fs.writeFileSync(
      path.join(root, 'fixture-mode.json'),
      JSON.stringify({ exportPauseMs: 200, placeHolders: 1 }),
    );
    const again = await submit(['--restart', runDir]);
    expect({
      code: again.code,
      out: again.code ? again.stdout.slice(-3000) + again.stderr.slice(-3000) : '',
    }).toEqual({
      code: 0,
      out: '',
    });
    const head = readJson(path.join(runDir, 'run.json'));
    expect(head.attempts).toHaveLength(2);
    expect(head.attempts[1]).toMatchObject({
      status: 'Completed',
      resume: { from: `${firstFolder}_step2`, step: 2 },
    });
    const folder = head.trainerRun.folder as string;
    expect(folder).not.toBe(firstFolder);
    const env = readJson(path.join(runDir, folder, 'fixture-env.json'));
    // Every host's ranks load the restored checkpoint from the streamed folder (SageMaker restores it on each host).
    expect(env.resumeStep).toBe(2);
    expect(env.loadPaths.trainer).toBe(`/opt/ml/checkpoints/${firstFolder}/checkpoints/${firstFolder}_step2`);
    expect(env.ranks[0].host).toBe('algo-2');
    expect(fs.readdirSync(path.join(runDir, folder, 'checkpoints')).sort()).toEqual([
      `${folder}_final`,
      `${folder}_step4`,
    ]);
  });
});
