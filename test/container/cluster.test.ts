import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import {
  clusterOf,
  clusterTiming,
  heartbeat,
  HeadEndpoint,
  platformEnvironment,
  parseRayStatus,
} from '../../lib/container/cluster';
import { runEntrypoint } from '../../lib/container/entrypoint';
import { tempDir } from '../helpers/fixtures';
import { fakeMlRoot } from '../helpers/ml-root';
import { freePort } from '../helpers/moto';

jest.setTimeout(60_000);

// Ray 2.x's `ray status`, as it prints it (CPU before GPU, one line per node).
const RAY_STATUS = `======== Autoscaler status: 2026-11-23 20:31:02.118803 ========
Node status
---------------------------------------------------------------
Active:
 1 node_0b1e6c2b0c7e4a9b8f0d7d7c0f4e2c1a9b8e7d6c5b4a39281706f5e4
 1 node_7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d
Pending:
 (no pending nodes)
Recent failures:
 (no failures)

Resources
---------------------------------------------------------------
Usage:
 0.0/192.0 CPU
 0.0/12.0 GPU
 0B/1.50TiB memory
 0B/186.26GiB object_store_memory

Demands:
 (no resource demands)
`;

describe('the cluster protocol, pure parts', () => {
  it("reads Ray's status: live nodes and total GPUs", () => {
    expect(parseRayStatus(RAY_STATUS)).toEqual({ nodes: 2, gpus: 12 });
    expect(parseRayStatus(RAY_STATUS.replace(/^ 1 node_7a.*\n/m, ''))).toEqual({ nodes: 1, gpus: 12 });
    expect(parseRayStatus('ConnectionError: Could not find any running Ray instance.')).toBeUndefined();
    // Ray's autoscaler v2 lists a fresh cluster's nodes as idle.
    const v2 = RAY_STATUS.replace('Active:\n', 'Active:\n (no active nodes)\nIdle:\n');
    expect(parseRayStatus(v2)).toEqual({ nodes: 2, gpus: 12 });
  });

  it('takes the first of the sorted hosts as the head, suffixed names included', () => {
    const c = clusterOf(
      {
        hosts: ['algo-2-x1y2z', 'algo-1-abcde'],
        current_host: 'algo-2-x1y2z',
        network_interface_name: 'eth0',
      },
      'algo-2-x1y2z',
    );
    expect(c).toMatchObject({ head: 'algo-1-abcde', isHead: false });
    expect(clusterOf({ hosts: ['algo-1'] }, 'algo-1')).toBeUndefined();
  });

  it('pins NCCL and Gloo to the network interface on every job, and sets EFA only where there are EFA devices', () => {
    const sys = tempDir('rlvr-sys-');
    const oneHost = { networkInterface: 'ens5', instanceType: 'ml.p4de.24xlarge' };
    expect(platformEnvironment(oneHost, {}, sys)).toEqual({
      env: { NCCL_SOCKET_IFNAME: 'ens5', GLOO_SOCKET_IFNAME: 'ens5' },
      notes: ['NCCL and Gloo use ens5'],
      held: { NCCL_SOCKET_IFNAME: 'ens5', GLOO_SOCKET_IFNAME: 'ens5' },
    });
    fs.mkdirSync(path.join(sys, 'class', 'infiniband', 'efa_0'), { recursive: true });
    const efa = platformEnvironment(oneHost, { NCCL_NET_PLUGIN: 'ofi' }, sys);
    expect(efa.env).toMatchObject({ FI_PROVIDER: 'efa', FI_EFA_USE_DEVICE_RDMA: '1' });
    // On EFA the transport is the platform's: NCCL_NET stays unset, a plugin the job names stays.
    expect(efa.held).toMatchObject({ NCCL_NET: null, NCCL_NET_PLUGIN: 'ofi', NCCL_IB_DISABLE: null });
    // No GPUDirect RDMA on g6e; a value the job sets stays, and is what is held.
    const g6e = platformEnvironment(
      { networkInterface: 'ens5', instanceType: 'ml.g6e.48xlarge' },
      { NCCL_SOCKET_IFNAME: 'eth9' },
      sys,
    );
    expect(g6e.env).toEqual({ GLOO_SOCKET_IFNAME: 'ens5', FI_PROVIDER: 'efa' });
    expect(g6e.held).toMatchObject({ NCCL_SOCKET_IFNAME: 'eth9', GLOO_SOCKET_IFNAME: 'ens5' });
    // resourceconfig.json without an interface: nothing pinned, nothing held.
    expect(platformEnvironment({ instanceType: 'local' }, {}, tempDir('rlvr-sys-'))).toEqual({
      env: {},
      notes: [],
      held: {},
    });
  });

  it('a worker that leaves after the trainer ended is no loss', async () => {
    const port = await freePort();
    const endpoint = await HeadEndpoint.open(port, ['localhost'], () => undefined);
    const lost: string[] = [];
    endpoint.onFailure((r) => lost.push(r));
    try {
      await heartbeat('127.0.0.1', port, 'localhost', 'joined');
      await new Promise((r) => setTimeout(r, 100));
      expect(await heartbeat('127.0.0.1', port, 'localhost', 'joined')).toEqual({ phase: 'starting' });
      endpoint.publish('running');
      endpoint.watch(300, 50);
      endpoint.publish('succeeded');
      await new Promise((r) => setTimeout(r, 700));
      expect(lost).toEqual([]);
    } finally {
      await endpoint.close('succeeded', undefined, 100, 50);
    }
  });

  it('survives malformed requests, and refuses a heartbeat from an address its host name does not resolve to', async () => {
    const port = await freePort();
    const said: string[] = [];
    // 127.0.0.2 "resolves" to itself; the requests come from 127.0.0.1.
    const endpoint = await HeadEndpoint.open(port, ['127.0.0.2', 'localhost'], (l) => said.push(l));
    try {
      const raw = await new Promise<string>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () =>
          socket.write('GET //[ HTTP/1.1\r\nHost: x\r\n\r\n'),
        );
        let got = '';
        socket.on('data', (d) => (got += d.toString()));
        socket.on('close', () => resolve(got));
        socket.on('error', () => resolve(got));
        setTimeout(() => socket.destroy(), 1000);
      });
      expect(raw).toMatch(/^HTTP\/1\.1 400/);
      const bad = await fetch(`http://127.0.0.1:${port}/cluster?host=localhost&state=exploded`);
      expect(bad.status).toBe(404);
      // The first heartbeat of a name not resolved yet is refused, then it is accepted.
      await heartbeat('127.0.0.1', port, 'localhost', 'waiting');
      await new Promise((r) => setTimeout(r, 200));
      expect(await heartbeat('127.0.0.1', port, 'localhost', 'waiting')).toEqual({ phase: 'starting' });
      for (let i = 0; i < 3; i++) {
        expect(
          await heartbeat('127.0.0.1', port, '127.0.0.2', 'failed', 'forged\nFAILED: x'),
        ).toBeUndefined();
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(endpoint.workers.has('127.0.0.2')).toBe(false);
      expect(said).toContain(
        'cluster: refused a heartbeat claiming to be 127.0.0.2 from 127.0.0.1 (127.0.0.2 resolves to 127.0.0.2)',
      );
    } finally {
      await endpoint.close('failed', 'test', 100, 50);
    }
  });

  it('a silent worker is lost; the endpoint answers only the hosts it expects', async () => {
    const port = await freePort();
    const said: string[] = [];
    const endpoint = await HeadEndpoint.open(port, ['localhost'], (l) => said.push(l));
    const lost: string[] = [];
    endpoint.onFailure((r) => lost.push(r));
    try {
      expect(await heartbeat('127.0.0.1', port, 'algo-9', 'joined')).toBeUndefined();
      // Refused until the name has resolved at the head, then heard.
      await heartbeat('127.0.0.1', port, 'localhost', 'joined');
      await new Promise((r) => setTimeout(r, 200));
      expect(await heartbeat('127.0.0.1', port, 'localhost', 'joined')).toEqual({ phase: 'starting' });
      endpoint.publish('running');
      endpoint.watch(300, 50);
      await new Promise((r) => setTimeout(r, 700));
      expect(lost).toEqual([expect.stringMatching(/^lost localhost: no word from it for \d+ s/)]);
    } finally {
      await endpoint.close('failed', 'lost', 100, 50);
    }
    expect(said.join('\n')).toContain('localhost reached the head');
  });
});

/** `ray` on PATH: the stand-in with Ray's CLI surface and a real TCP rendezvous (test/fixtures/fake-ray). */
function rayBin(): string {
  const bin = tempDir('rlvr-raybin-');
  const js = path.join(__dirname, '..', 'fixtures', 'fake-ray', 'ray.js');
  fs.writeFileSync(path.join(bin, 'ray'), `#!/bin/sh\nexec "${process.execPath}" "${js}" "$@"\n`, {
    mode: 0o755,
  });
  return bin;
}

const WRITE_FINAL =
  'mkdir -p "$RLVR_CHECKPOINT_DIR/r_final" && printf \'\\002\\000\\000\\000\\000\\000\\000\\000{}\' > "$RLVR_CHECKPOINT_DIR/r_final/model.safetensors" && echo {} > "$RLVR_CHECKPOINT_DIR/r_final/config.json"';

/**
 * Two hosts in this process, each with its own /opt/ml and its own Ray state: `127.0.0.1` (the head:
 * it sorts first) and `localhost`, both resolving here; the ports are free ones.
 */
async function twoHosts(trainer: string, extraEnv: Record<string, string> = {}) {
  const hosts = ['127.0.0.1', 'localhost'];
  const bin = rayBin();
  const calls = path.join(tempDir('rlvr-raycalls-'), 'calls.txt');
  const ports = `${await freePort()},${await freePort()}`;
  const host = (name: string) => {
    const root = fakeMlRoot({ hosts, host: name, config: 'run:\n  name: r\n' });
    fs.mkdirSync(path.join(root, 'code'), { recursive: true });
    fs.writeFileSync(path.join(root, 'code', 'train.sh'), `${trainer}\n`);
    let log = '';
    const out = new PassThrough().on('data', (d: Buffer) => (log += d.toString()));
    const env: NodeJS.ProcessEnv = {
      PATH: `${bin}:${process.env.PATH}`,
      RLVR_CONFIG: path.join(root, 'input', 'data', 'config', 'resolved-config.yaml'),
      RLVR_RUN_NAME: 'r',
      RLVR_TRAIN_GPUS: '0,1',
      RLVR_EVAL_GPUS: '',
      RLVR_USE_RAY: '1',
      RLVR_TRAINER_COMMAND: 'sh train.sh {config}',
      RLVR_CLUSTER_PORTS: ports,
      RLVR_CLUSTER_JOIN_TIMEOUT_S: '20',
      RLVR_CLUSTER_LOST_S: '3',
      FAKE_RAY_STATE_DIR: tempDir('rlvr-raystate-'),
      FAKE_RAY_CALLS: calls,
      ...extraEnv,
    };
    return { root, env, out, log: () => log };
  };
  const head = host('127.0.0.1');
  const worker = host('localhost');
  const stopAll = () => {
    for (const h of [head, worker]) {
      spawnSync('ray', ['stop', '--force'], { env: h.env });
    }
  };
  return { head, worker, calls, stopAll };
}

const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;

describe('the cluster protocol, two hosts in this process (stand-in ray over loopback)', () => {
  it('the worker joins, the trainer runs on the head only with RAY_ADDRESS, both end 0', async () => {
    const { head, worker, calls, stopAll } = await twoHosts(
      `ray status > "$RLVR_RUN_DIR/ray-status.txt"; echo "$RAY_ADDRESS" > "$RLVR_RUN_DIR/ray-address.txt"; ${WRITE_FINAL}`,
    );
    try {
      const started = Date.now();
      const [h, w] = await Promise.all([
        runEntrypoint({ root: head.root, env: head.env, out: head.out, pollMs: 50, stableMs: 0 }),
        runEntrypoint({ root: worker.root, env: worker.env, out: worker.out, pollMs: 50, stableMs: 0 }),
      ]);
      expect({ h, w, headLog: h ? head.log() : '', workerLog: w ? worker.log() : '' }).toMatchObject({
        h: 0,
        w: 0,
      });
      expect(Date.now() - started).toBeLessThan(20_000);
      const hc = path.join(head.root, 'checkpoints');
      expect(parseRayStatus(fs.readFileSync(path.join(hc, 'ray-status.txt'), 'utf8'))).toEqual({
        nodes: 2,
        gpus: 4,
      });
      expect(fs.readFileSync(path.join(hc, 'ray-address.txt'), 'utf8').trim()).toBe(
        `127.0.0.1:${head.env.RLVR_CLUSTER_PORTS!.split(',')[0]}`,
      );
      // The trainer ran on the head only; the worker wrote only files named after it.
      const wc = path.join(worker.root, 'checkpoints');
      expect(fs.existsSync(path.join(wc, 'ray-address.txt'))).toBe(false);
      expect(fs.readdirSync(wc).filter((f) => !fs.statSync(path.join(wc, f)).isDirectory())).toEqual([
        'run-localhost.json',
      ]);
      expect(readJson(path.join(wc, 'run-localhost.json'))).toMatchObject({
        role: 'worker',
        status: 'Completed',
      });
      expect(readJson(path.join(hc, 'run.json'))).toMatchObject({ role: 'head', status: 'Completed' });
      const rayCalls = fs.readFileSync(calls, 'utf8');
      expect(rayCalls).toMatch(/^ray start --head .*--num-gpus=2 /m);
      expect(rayCalls).toMatch(/^ray start --address=127\.0\.0\.1:\d+ .*--num-gpus=2 /m);
      expect(rayCalls.match(/^ray stop --force/gm)).toHaveLength(2);
      expect(head.log()).toMatch(/cluster: 2 hosts, 4 GPUs in Ray after \d+ s/);
      expect(worker.log()).toContain("cluster: the head 127.0.0.1's trainer ended: succeeded");
    } finally {
      stopAll();
    }
  });

  it('the trainer fails: the head fails with the reason, the worker ends at once and says why', async () => {
    const { head, worker, stopAll } = await twoHosts('echo "CUDA error (fake)"; exit 3');
    try {
      let workerEndedAt = 0;
      let trainerFailedAt = 0;
      // The moment the head's log says the trainer ended.
      head.out.on('data', (d: Buffer) => {
        if (!trainerFailedAt && d.toString().includes('cluster: failed')) trainerFailedAt = Date.now();
      });
      const [h, w] = await Promise.all([
        runEntrypoint({ root: head.root, env: head.env, out: head.out, pollMs: 50, stableMs: 0 }),
        runEntrypoint({ root: worker.root, env: worker.env, out: worker.out, pollMs: 50, stableMs: 0 }).then(
          (c) => ((workerEndedAt = Date.now()), c),
        ),
      ]);
      expect([h, w]).toEqual([1, 1]);
      expect(fs.readFileSync(path.join(head.root, 'output', 'failure'), 'utf8')).toMatch(
        /^trainer exited with code 3\n/,
      );
      expect(fs.readFileSync(path.join(worker.root, 'output', 'failure'), 'utf8')).toMatch(
        /^cluster: the head 127\.0\.0\.1 failed: the trainer exited with code 3/,
      );
      // Its next heartbeat (0.3 s apart here), not the 3 s lost window.
      expect(trainerFailedAt).toBeGreaterThan(0);
      expect(workerEndedAt - trainerFailedAt).toBeLessThan(2500);
    } finally {
      stopAll();
    }
  });

  it("SIGTERM to every host: the worker keeps Ray up until the head's trainer has stopped after its checkpoint", async () => {
    const { head, worker, stopAll } = await twoHosts(
      `trap 'sleep 2; ${WRITE_FINAL.replaceAll("'", "'\\''")}; exit 0' TERM; touch "$RLVR_RUN_DIR/started"; while true; do sleep 0.1; done`,
    );
    try {
      const stop = new AbortController();
      const started = path.join(head.root, 'checkpoints', 'started');
      const runs = Promise.all([
        runEntrypoint({
          root: head.root,
          env: head.env,
          out: head.out,
          pollMs: 50,
          stableMs: 0,
          signal: stop.signal,
        }),
        runEntrypoint({
          root: worker.root,
          env: worker.env,
          out: worker.out,
          pollMs: 50,
          stableMs: 0,
          signal: stop.signal,
        }),
      ]);
      while (!fs.existsSync(started)) await new Promise((r) => setTimeout(r, 100));
      stop.abort();
      const [, w] = await runs;
      expect(w).toBe(0);
      expect(readJson(path.join(head.root, 'checkpoints', 'run.json'))).toMatchObject({ status: 'Stopped' });
      expect(
        fs.existsSync(path.join(head.root, 'checkpoints', 'checkpoints', 'r_final', 'config.json')),
      ).toBe(true);
      const log = worker.log();
      expect(log).toContain("cluster: SIGTERM: Ray stays up until the head's trainer has stopped");
      expect(log).toContain("cluster: the head 127.0.0.1's trainer ended: stopped");
      // ray stop came after the head said so, not at SIGTERM.
      const rayStop = log.search(/\[ray\] (Stopped all|Did not find)/);
      expect(rayStop).toBeGreaterThan(log.indexOf('trainer ended: stopped'));
      expect(readJson(path.join(worker.root, 'checkpoints', 'run-localhost.json'))).toMatchObject({
        status: 'Stopped',
      });
    } finally {
      stopAll();
    }
  });

  it('a worker that never comes fails the head within the join timeout, named', async () => {
    const { head, stopAll } = await twoHosts(WRITE_FINAL, { RLVR_CLUSTER_JOIN_TIMEOUT_S: '3' });
    try {
      const started = Date.now();
      const h = await runEntrypoint({
        root: head.root,
        env: head.env,
        out: head.out,
        pollMs: 50,
        stableMs: 0,
      });
      expect(h).toBe(1);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(fs.readFileSync(path.join(head.root, 'output', 'failure'), 'utf8')).toMatch(
        /^cluster: 1 of 1 other host\(s\) did not join within 3 s: localhost \(never reached the head\)/,
      );
      expect(fs.existsSync(path.join(head.root, 'checkpoints', 'r_final'))).toBe(false);
    } finally {
      stopAll();
    }
  });

  it('reads its timing from the job environment', () => {
    expect(clusterTiming({})).toMatchObject({ joinTimeoutMs: 600_000, lostAfterMs: 30_000, pollMs: 1000 });
    expect(
      clusterTiming({
        RLVR_CLUSTER_JOIN_TIMEOUT_S: '20',
        RLVR_CLUSTER_LOST_S: '3',
        RLVR_CLUSTER_PORTS: '7000,7001',
      }),
    ).toMatchObject({
      joinTimeoutMs: 20_000,
      lostAfterMs: 3000,
      pollMs: 300,
      rayPort: 7000,
      statusPort: 7001,
    });
  });
});
