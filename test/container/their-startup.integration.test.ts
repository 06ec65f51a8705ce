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

const CONFIG = 'configs/qwen3-1.7B-gsm8k.yaml';
/** Where the replica assigns NCCL_SOCKET_IFNAME="ens32" at import, as theirs does. */
const ASSIGNMENTS = [
  'src/rlvr_experiments/syncing.py:15',
  'src/rlvr_experiments/titan_actor.py:5',
  'src/rlvr_experiments/vllm_engine_actor.py:7',
];

/** Every file under a folder, relative to it. */
function listing(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

/**
 * What their code does at start that the launcher must survive, run with `submit --local` through the
 * real entrypoint in the real engine: their modules assign NCCL_SOCKET_IFNAME="ens32" (and NCCL_NET,
 * NCCL_NET_PLUGIN) at import, in the driver and in every Ray actor that imports them; each trainer rank
 * and the rollout engine start the weight-sync NCCL communicator in their own process (the stand-in
 * `vllm` fails as NCCL does when the interface named is not there); the trainer reads the slow Qwen2
 * tokenizer (`use_fast: false`) from the model channel; and it asks git about a source that has no .git.
 */
describeWithPeer('dockerd', dockerAvailable())("their trainer's start-up (real engine)", () => {
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
  const submit = (root: string, extra: string[] = []) =>
    runCli(['submit', path.join(root, CONFIG), '--local', '--docker-dir', dockerDir, '--json', ...extra], {
      env: emulator.cliEnv({ DOCKER_HOST: engine.host, XDG_CACHE_HOME: tempDir('rlvr-cache-') }),
      cwd: resultsDir,
    });
  /** The exit code, and the output when it is not the one expected (so a failure shows why). */
  const outcome = (r: { code: number; stdout: string; stderr: string }, expected: number) => ({
    code: r.code,
    out: r.code === expected ? '' : r.stdout.slice(-3000) + r.stderr.slice(-3000),
  });
  /** Every container the engine has, running or not. */
  const containers = async (): Promise<string[]> => {
    const { default: Docker } = await import('dockerode');
    const docker = new Docker({ socketPath: engine.host.replace(/^unix:\/\//, '') });
    return (await docker.listContainers({ all: true })).map((c) => c.Id).sort();
  };

  it.each([
    [1, 'lo'],
    [2, 'eth0'],
  ])(
    '%i host(s), hold_platform_env: every process keeps the platform interface (%s) against their import-time ens32, NCCL starts in each actor, the slow tokenizer reads the model channel, and the run reaches its checkpoints',
    async (hosts, nic) => {
      const root = theirSubmitRepository({
        [CONFIG]: theirSubmitConfig({ launcher: '  hold_platform_env: true\n' }),
      });
      const r = await submit(root, hosts > 1 ? ['--instances', String(hosts)] : []);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(outcome(r, 0)).toEqual({ code: 0, out: '' });
      const runDir = JSON.parse(r.stdout).runDir as string;
      const folder = readJson(path.join(runDir, 'run.json')).trainerRun.folder as string;
      const env = readJson(path.join(runDir, folder, 'fixture-env.json'));
      // The driver after its imports: the platform's interface held, their other NCCL settings kept.
      expect(env.NCCL).toEqual({
        NCCL_SOCKET_IFNAME: nic,
        GLOO_SOCKET_IFNAME: nic,
        NCCL_NET: 'Socket',
        NCCL_NET_PLUGIN: '',
        NCCL_DEBUG: 'WARN',
      });
      // Each trainer rank and the rollout engine, in their own actor processes, on every host.
      expect(env.ranks).toHaveLength(2);
      for (const rank of env.ranks) expect(rank.NCCL_SOCKET_IFNAME).toBe(nic);
      expect(env.engine).toMatchObject({
        module: 'rlvr_experiments.vllm_engine_actor',
        NCCL_SOCKET_IFNAME: nic,
      });
      const hostsUsed = new Set([...env.ranks.map((x: { host: string }) => x.host), env.engine.host]);
      expect(hostsUsed.size).toBe(hosts);
      // Every member joined the weight-sync communicator (NCCL's bootstrap found the interface).
      expect(env.channel.map((c: { rank: number }) => c.rank)).toEqual([0, 1, 2]);
      // Their use_fast: false read vocab.json and merges.txt from the model channel.
      expect(env.tokenizer).toEqual({
        class: 'Qwen2Tokenizer',
        path: '/opt/ml/input/data/model',
        isFast: false,
        padTokenId: 0,
      });
      // The shipped source has no .git: their runtime warns and goes on, as theirs does.
      expect(readJson(path.join(runDir, folder, 'run.json')).git).toEqual({});
      const log = fs.readFileSync(path.join(runDir, RUN_FOLDER.localRunLog), 'utf8');
      expect(log).toContain('[runtime] WARNING: failed to capture git state');
      expect(fs.readdirSync(path.join(runDir, folder, 'checkpoints')).sort()).toEqual([
        `${folder}_final`,
        `${folder}_step2`,
        `${folder}_step4`,
      ]);
    },
  );

  it('not held but allowed (RLVR125): their ens32 reaches NCCL, and the job fails naming it', async () => {
    const root = theirSubmitRepository({
      [CONFIG]: theirSubmitConfig({
        launcher: '  allow: {RLVR125: "testing the failure"}\n',
        evalConfig: false,
      }),
    });
    const r = await submit(root);
    expect(outcome(r, 1)).toEqual({ code: 1, out: '' });
    const runDir = JSON.parse(r.stdout).runDir as string;
    const failure = fs.readFileSync(path.join(runDir, RUN_FOLDER.failure), 'utf8');
    expect(failure).toContain('NCCL_SOCKET_IFNAME set by environment to ens32');
    expect(failure).toContain('Bootstrap : no socket interface found');
    // In an actor's process (a trainer rank), when the runtime wires the weight-sync channel.
    expect(failure).toContain('RayActorError');
    expect(fs.readFileSync(path.join(runDir, RUN_FOLDER.localRunLog), 'utf8')).toContain('ens32');
  });

  it('neither held nor allowed: the submit stops (exit 2) naming each import-time assignment, before any container', async () => {
    const root = theirSubmitRepository({ [CONFIG]: theirSubmitConfig({ evalConfig: false }) });
    const before = { containers: await containers(), results: listing(resultsDir) };
    const r = await submit(root);
    expect(outcome(r, 2)).toEqual({ code: 2, out: '' });
    expect(r.stderr).toContain('RLVR125');
    for (const at of ASSIGNMENTS) expect(r.stderr).toContain(at);
    expect(r.stderr).toContain('ens32');
    expect({ containers: await containers(), results: listing(resultsDir) }).toEqual(before);
  });
});
