import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import Docker from 'dockerode';
import { type SubmitInput } from '../../lib/training';
import { openSubmitSession } from '../../lib/submission';
import { localJobOfPlan, runLocal, type LocalRunResult } from '../../lib/local/run';
import { prepareLocalRun } from '../../lib/local/submit-local';
import { bareEnv, runCli } from '../helpers/cli';
import {
  dockerAvailable,
  startDockerEngine,
  writeContainerDockerDir,
  type DockerEngine,
} from '../helpers/docker';
import { GSM8K_EXAMPLE, makeTrainerRepo, tempDir } from '../helpers/fixtures';
import { describeWithPeer } from '../helpers/moto';

jest.setTimeout(150_000);

const FAKES = path.join(__dirname, '..', 'fixtures', 'fake-trainer');

/**
 * The fake trainer as a trainer of the repository's own (rlvr-trainers.yaml): it resumes by weights
 * (its model path and its step counter), as their GRPO trainers do.
 */
const PROFILE = `trainers:
  - id: fake
    script: entrypoints/fake_trainer.py
    checkpoints: {writes: true, interval_key: training.checkpoint_interval, final: true}
    resume: weights
    runtime:
      resume_with:
        load_paths: [{role: trainer, key: model.hf_assets_path}]
        step_key: training.resume_step
`;

/** The GSM8K example made small and local, as the one-host local test makes it; `launcher` lines added. */
function localConfig(launcher: string): string {
  return fs
    .readFileSync(GSM8K_EXAMPLE, 'utf8')
    .replaceAll('Qwen/Qwen3-1.7B-Base', '../models/Qwen3-1.7B-Base')
    .replace(/^(\s+)dataset: gsm8k\s*$/m, '$1dataset: ../data/gsm8k_train')
    .replace(/max_steps: \d+/, 'max_steps: 4')
    .replace(/checkpoint_interval: \d+/, 'checkpoint_interval: 2')
    .replace(/(\n\s+)interval: 20/, '$1interval: 2')
    .replace(/^ {2}trainer_src: .*\n/m, '')
    .replace(/^ {2}eval_config: .*\n/m, '')
    .replace('launcher:\n', `launcher:\n  trainer: fake\n${launcher}`);
}

/**
 * Multi-host jobs on a real Docker engine: one container per host (`algo-1`, …) on a private
 * network the launcher creates, the real entrypoint in each, the stand-in `ray` (real TCP rendezvous)
 * and the fake trainer on the head.
 */
describeWithPeer('dockerd', dockerAvailable())('multi-host jobs (real engine, real entrypoint)', () => {
  let engine: DockerEngine;
  let docker: Docker;
  let dockerDir: string;
  let resultsDir: string;

  beforeAll(async () => {
    engine = await startDockerEngine();
    docker = new Docker({ socketPath: engine.host.replace('unix://', '') });
    dockerDir = tempDir('rlvr-docker-');
    writeContainerDockerDir(dockerDir);
    resultsDir = tempDir('rlvr-results-');
  });
  afterAll(async () => {
    await engine?.stop();
  });

  /** A trainer repository whose config runs the fake trainer with `mode` (fake-mode.json). */
  function trainerRepo(mode: Record<string, unknown>, launcher = '') {
    const trainer = makeTrainerRepo({
      config: localConfig(launcher),
      files: {
        'rlvr-trainers.yaml': PROFILE,
        'entrypoints/fake_trainer.py': fs.readFileSync(path.join(FAKES, 'train_grpo.py'), 'utf8'),
        'models/Qwen3-1.7B-Base/config.json': '{"model_type": "qwen3"}\n',
        'data/gsm8k_train/dataset_info.json': '{}',
        'fake-mode.json': JSON.stringify({ steps: 4, interval: 2, ...mode }),
      },
    });
    return trainer;
  }

  /** The library's `submit --local`, with the rehearsal knobs the CLI does not offer (a late host). */
  async function runJob(
    configPath: string,
    o: {
      instances: number;
      hostDelays?: Record<string, number>;
      signal?: AbortSignal;
      restartIn?: string;
      gpus?: number[];
    },
  ): Promise<LocalRunResult & { output: string }> {
    const { instances, ...run } = o;
    // As `--local --instances N` does: the job is planned for N hosts.
    const input: SubmitInput = {
      configPath,
      options: { instance_count: instances },
      settings: {},
      dryRun: true,
      local: true,
      cwd: resultsDir,
      env: bareEnv({ DOCKER_HOST: engine.host }),
    };
    const session = openSubmitSession(input);
    let output = '';
    const sink = new PassThrough().on('data', (d: Buffer) => {
      output += d.toString();
      if (process.env.DEBUG_RUN) process.stderr.write(d);
    });
    try {
      const prepared = await prepareLocalRun(input, session, {
        build: { dockerDir },
        dockerHost: engine.host,
      });
      const r = await runLocal({
        job: localJobOfPlan(prepared.plan),
        image: prepared.image,
        dockerHost: engine.host,
        cwd: resultsDir,
        out: sink,
        err: sink,
        ...run,
      });
      return { ...r, output };
    } finally {
      session.close();
    }
  }

  const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
  const runFolders = () =>
    fs.existsSync(path.join(resultsDir, 'results')) ? fs.readdirSync(path.join(resultsDir, 'results')) : [];

  /** Waits until a run folder made after `before` shows its trainer started (it writes trainer-env.json). */
  async function trainerStarted(before: readonly string[]): Promise<boolean> {
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 500));
      const fresh = runFolders().filter((f) => !before.includes(f));
      if (fresh.some((f) => fs.existsSync(path.join(resultsDir, 'results', f, 'trainer-env.json'))))
        return true;
    }
    return false;
  }
  const networks = async () =>
    (await docker.listNetworks()).map((n) => n.Name).filter((n) => n.startsWith('rlvr-'));

  it('submit --local --instances 2: both hosts join, the trainer runs on the head with RAY_ADDRESS, all exit 0', async () => {
    const trainer = trainerRepo({});
    const r = await runCli(
      ['submit', trainer.configPath, '--local', '--instances', '2', '--docker-dir', dockerDir, '--json'],
      { env: bareEnv({ DOCKER_HOST: engine.host }), cwd: resultsDir },
    );
    expect({ code: r.code, stderr: r.code ? r.stderr : '' }).toEqual({ code: 0, stderr: '' });
    const runDir = JSON.parse(r.stdout).runDir as string;
    expect(r.stderr).toMatch(/"hosts":\{"names":\["algo-1","algo-2"\],"network":"rlvr-gsm8k_/);
    // The head saw both hosts and 2 × 6 train GPUs; the trainer ran once, on the head.
    const trainerEnv = readJson(path.join(runDir, 'trainer-env.json'));
    expect(trainerEnv.RAY_ADDRESS).toMatch(/^\d+\.\d+\.\d+\.\d+:6379$/);
    expect(trainerEnv.rayStatus).toMatch(/Active:\n 1 node_\w+\n 1 node_\w+\nPending/);
    expect(trainerEnv.rayStatus).toMatch(/\/12\.0 GPU/);
    expect(readJson(path.join(runDir, 'run.json'))).toMatchObject({
      host: 'algo-1',
      role: 'head',
      status: 'Completed',
    });
    expect(readJson(path.join(runDir, 'run-algo-2.json'))).toMatchObject({
      host: 'algo-2',
      role: 'worker',
      status: 'Completed',
      exitCode: 0,
    });
    expect(fs.readdirSync(path.join(runDir, 'checkpoints')).sort()).toEqual([
      'qwen3-1.7B-gsm8k-grpo_final',
      'qwen3-1.7B-gsm8k-grpo_step2',
      'qwen3-1.7B-gsm8k-grpo_step4',
    ]);
    const calls = fs.readFileSync(path.join(runDir, 'logs', 'ray-calls.txt'), 'utf8');
    expect(calls).toMatch(/^ray start --head --port=6379 --node-ip-address=\S+ --num-gpus=6 /m);
    expect(calls).toMatch(/^ray start --address=\S+:6379 --node-ip-address=\S+ --num-gpus=6 /m);
    const log = fs.readFileSync(path.join(runDir, 'logs-local-run.txt'), 'utf8');
    expect(log).toMatch(/^algo-1 \| \[rlvr\] cluster: 2 hosts, 12 GPUs in Ray after \d+ s/m);
    expect(log).toMatch(/^algo-2 \| \[rlvr\] cluster: the head algo-1's trainer ended: succeeded/m);
    // The network the run made is gone.
    expect(await networks()).toEqual([]);
  });

  it('three hosts, one of them 20 s late: it still joins, and the job succeeds', async () => {
    const trainer = trainerRepo({});
    const r = await runJob(trainer.configPath, { instances: 3, hostDelays: { 'algo-3': 20_000 } });
    expect({ code: r.exitCode, output: r.exitCode ? r.output.slice(-3000) : '' }).toEqual({
      code: 0,
      output: '',
    });
    const trainerEnv = readJson(path.join(r.runDir, 'trainer-env.json'));
    expect(trainerEnv.rayStatus).toMatch(/\/18\.0 GPU/);
    expect(r.output).toMatch(/algo-1 \| \[rlvr\] cluster: 3 hosts, 18 GPUs in Ray after (2\d|3\d) s/);
    expect(readJson(path.join(r.runDir, 'run-algo-3.json'))).toMatchObject({ status: 'Completed' });
  });

  it('a host that never starts fails the head within the join timeout, with a failure file naming it', async () => {
    const trainer = trainerRepo({}, '  cluster_join_timeout: 15s\n');
    const started = Date.now();
    const r = await runJob(trainer.configPath, { instances: 2, hostDelays: { 'algo-2': Infinity } });
    expect(r.exitCode).toBe(1);
    expect(Date.now() - started).toBeLessThan(90_000);
    expect(fs.readFileSync(path.join(r.runDir, 'failure.txt'), 'utf8')).toMatch(
      /^cluster: 1 of 1 other host\(s\) did not join within 15 s: algo-2 \(its name never resolved\)/,
    );
    expect(fs.existsSync(path.join(r.runDir, 'trainer-env.json'))).toBe(false);
    expect(await networks()).toEqual([]);
  });

  it('the trainer fails: the head exits non-zero with the reason, the worker ends within seconds', async () => {
    const trainer = trainerRepo({ failAt: 2 });
    const r = await runJob(trainer.configPath, { instances: 2 });
    expect(r.exitCode).toBe(1);
    expect(fs.readFileSync(path.join(r.runDir, 'failure.txt'), 'utf8')).toMatch(
      /^trainer exited with code 3\n/,
    );
    const head = readJson(path.join(r.runDir, 'run.json'));
    const worker = readJson(path.join(r.runDir, 'run-algo-2.json'));
    expect(worker).toMatchObject({
      status: 'Failed',
      reason: expect.stringMatching(/the head algo-1 failed: the trainer exited with code 3/),
    });
    expect(Date.parse(worker.endedAt) - Date.parse(head.endedAt)).toBeLessThan(5000);
  });

  it('a worker killed mid-run fails the head instead of hanging', async () => {
    const trainer = trainerRepo({ steps: 400, stepMs: 250, interval: 1000 });
    const before = runFolders();
    const cleanup = new AbortController();
    const job = runJob(trainer.configPath, { instances: 2, signal: cleanup.signal });
    // Once the trainer runs, the worker's container is killed (as a lost instance would be).
    let killed = false;
    if (await trainerStarted(before)) {
      const [worker] = await docker.listContainers({ filters: { label: ['rlvr.local-host=algo-2'] } });
      await docker.getContainer(worker.Id).kill();
      killed = true;
    } else {
      cleanup.abort();
      await job;
    }
    expect(killed).toBe(true);
    const killedAt = Date.now();
    const r = await job;
    expect(r.exitCode).not.toBe(0);
    // Lost after ~30 s of silence, then at most the 10 s for the trainer to stop.
    expect(Date.now() - killedAt).toBeLessThan(60_000);
    expect(fs.readFileSync(path.join(r.runDir, 'failure.txt'), 'utf8')).toMatch(
      /^cluster: lost algo-2: no word from it for 3\d s/,
    );
  });

  it('stopping the whole job (docker stop -t 120): every container exits well inside the grace period', async () => {
    const trainer = trainerRepo({ steps: 400, stepMs: 250, interval: 1000 });
    const stop = new AbortController();
    const before = runFolders();
    const job = runJob(trainer.configPath, { instances: 2, signal: stop.signal });
    const started = await trainerStarted(before);
    const stoppedAt = Date.now();
    stop.abort();
    expect(started).toBe(true);
    const r = await job;
    expect(Date.now() - stoppedAt).toBeLessThan(30_000);
    expect(r.interrupted).toBe(true);
    expect(readJson(path.join(r.runDir, 'run.json'))).toMatchObject({ status: 'Stopped' });
    expect(readJson(path.join(r.runDir, 'run-algo-2.json'))).toMatchObject({ status: 'Stopped' });
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`rlvr.local-run=${path.basename(r.runDir)}`] },
    });
    expect(left.map((c) => `${c.Labels['rlvr.local-host']}: ${c.State} ${c.Status}`)).toEqual([]);
  });

  it('a restart over step2 and a half-written step4: the head resumes from step2, both hosts record the attempt, the trace keeps its lines', async () => {
    const trainer = trainerRepo({});
    const first = await runJob(trainer.configPath, { instances: 2 });
    expect(first.exitCode).toBe(0);
    // As a spot interruption leaves it: step4 cut off mid-write, no final.
    const ckpts = path.join(first.runDir, 'checkpoints');
    fs.rmSync(path.join(ckpts, 'qwen3-1.7B-gsm8k-grpo_final'), { recursive: true });
    const weights = path.join(ckpts, 'qwen3-1.7B-gsm8k-grpo_step4', 'model-00001-of-00001.safetensors');
    fs.truncateSync(weights, 900);
    const trace = path.join(first.runDir, 'traces', 'trace.jsonl');
    const before = fs.readFileSync(trace, 'utf8');
    fs.writeFileSync(path.join(trainer.root, 'fake-mode.json'), JSON.stringify({ steps: 6, interval: 2 }));

    const again = await runJob(trainer.configPath, { instances: 2, restartIn: first.runDir });
    expect({ code: again.exitCode, output: again.exitCode ? again.output.slice(-3000) : '' }).toEqual({
      code: 0,
      output: '',
    });
    expect(again.runDir).toBe(first.runDir);
    const trainerEnv = readJson(path.join(first.runDir, 'trainer-env.json'));
    expect(trainerEnv.resumeStep).toBe(2);
    expect(trainerEnv.loadPath).toBe('/opt/ml/checkpoints/checkpoints/qwen3-1.7B-gsm8k-grpo_step2');
    const head = readJson(path.join(first.runDir, 'run.json'));
    expect(head.attempts).toHaveLength(2);
    expect(head.attempts[1]).toMatchObject({
      status: 'Completed',
      resume: { kind: 'weights', from: 'qwen3-1.7B-gsm8k-grpo_step2', step: 2 },
    });
    expect(readJson(path.join(first.runDir, 'run-algo-2.json')).attempts).toHaveLength(2);
    const after = fs.readFileSync(trace, 'utf8');
    expect(after.startsWith(before)).toBe(true);
    expect(
      after
        .slice(before.length)
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).step),
    ).toEqual([3, 4, 5, 6]);
    expect(again.output).toMatch(/restart: qwen3-1\.7B-gsm8k-grpo_step4 is not complete .*: passed over/);
  });

  it('hosts whose containers cannot start: the run fails and leaves no container or network behind', async () => {
    const trainer = trainerRepo({});
    // This engine has no NVIDIA runtime: a container given a GPU cannot start.
    await expect(
      runJob(trainer.configPath, { instances: 2, gpus: Array.from({ length: 16 }, (_, i) => i) }),
    ).rejects.toThrow(/The local run failed/);
    expect(await docker.listContainers({ all: true })).toEqual([]);
    expect(await networks()).toEqual([]);
  });
});
