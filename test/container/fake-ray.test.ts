import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { tempDir } from '../helpers/fixtures';
import { freePort } from '../helpers/moto';

jest.setTimeout(60_000);

/**
 * The stand-in `ray` of the container images (test/fixtures/fake-ray/ray.js), on this host over
 * loopback: two state folders are two hosts, and the rendezvous between them is real TCP.
 */
const RAY_JS = path.join(__dirname, '..', 'fixtures', 'fake-ray', 'ray.js');

interface RayResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Resolves when the process AND its stdio are closed: a daemon holding our pipes would hang it. */
function ray(args: string[], env: Record<string, string>): Promise<RayResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RAY_JS, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ray ${args.join(' ')} did not finish (or left its stdio open) within 20 s`));
    }, 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** Alive and not a zombie. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true;
  }
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const pids = new Set<number>();

function daemonPid(dir: string, role: 'head' | 'worker'): number {
  const { pid } = JSON.parse(fs.readFileSync(path.join(dir, `${role}.json`), 'utf8')) as { pid: number };
  pids.add(pid);
  return pid;
}

function activeNodes(status: string): string[] {
  const m = /^Active:\n((?: 1 node_\S+\n)*)Pending:/m.exec(status);
  if (!m) throw new Error(`no Active section in:\n${status}`);
  return m[1].split('\n').filter(Boolean);
}

describe('fake ray (two hosts on loopback)', () => {
  let headDir: string;
  let workerDir: string;
  let calls: string;
  let port: number;
  const onHead = () => ({ FAKE_RAY_STATE_DIR: headDir, FAKE_RAY_CALLS: calls });
  const onWorker = (extra: Record<string, string> = {}) => ({
    FAKE_RAY_STATE_DIR: workerDir,
    FAKE_RAY_CALLS: calls,
    ...extra,
  });
  const status = () => ray(['status'], { ...onWorker(), RAY_ADDRESS: `127.0.0.1:${port}` });

  beforeAll(async () => {
    headDir = tempDir('fake-ray-head-');
    workerDir = tempDir('fake-ray-worker-');
    calls = path.join(tempDir('fake-ray-calls-'), 'ray-calls.txt');
    port = await freePort();
  });

  afterAll(() => {
    for (const dir of [headDir, workerDir]) {
      for (const role of ['head', 'worker'] as const) {
        if (fs.existsSync(path.join(dir, `${role}.json`))) daemonPid(dir, role);
      }
    }
    for (const pid of pids) {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('starts a head that listens, and records the call', async () => {
    const r = await ray(['start', '--head', `--port=${port}`, '--num-gpus', '2', '--disable-usage-stats'], {
      ...onHead(),
      CUDA_VISIBLE_DEVICES: '0,1',
    });
    expect(r).toMatchObject({ code: 0 });
    expect(r.stdout).toMatch(/^Ray runtime started\.$/m);
    expect(r.stdout).toMatch(/^Local node IP: \S+$/m);
    expect(alive(daemonPid(headDir, 'head'))).toBe(true);
    expect(fs.readFileSync(calls, 'utf8')).toMatch(
      new RegExp(
        `^ray start --head --port=${port} --num-gpus 2 --disable-usage-stats CUDA_VISIBLE_DEVICES=0,1$`,
        'm',
      ),
    );
  });

  it('a worker joins: status shows both nodes and the summed GPUs', async () => {
    const r = await ray(['start', `--address=localhost:${port}`, '--num-gpus=4'], onWorker());
    expect(r).toMatchObject({ code: 0 });
    expect(alive(daemonPid(workerDir, 'worker'))).toBe(true);
    const s = await status();
    expect(s.code).toBe(0);
    expect(s.stdout).toMatch(/^======== Autoscaler status: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} ========$/m);
    const nodes = activeNodes(s.stdout);
    expect(nodes).toHaveLength(2);
    for (const n of nodes) expect(n).toMatch(/^ 1 node_[0-9a-f]{56}$/);
    expect(new Set(nodes).size).toBe(2);
    expect(s.stdout).toMatch(/^Usage:\n 0\.0\/6\.0 GPU\n 0\.0\/\d+\.0 CPU$/m);
    // The head's own state is found without an address.
    const local = await ray(['status'], onHead());
    expect(activeNodes(local.stdout)).toEqual(nodes);
  });

  it('a killed worker leaves the cluster within a second or two', async () => {
    process.kill(daemonPid(workerDir, 'worker'), 'SIGKILL');
    expect(await until(async () => activeNodes((await status()).stdout).length === 1, 2000)).toBe(true);
    expect((await status()).stdout).toMatch(/^ 0\.0\/2\.0 GPU$/m);
  });

  it('a worker started before its head keeps trying, and joins once the head listens', async () => {
    const later = await freePort();
    const otherHead = tempDir('fake-ray-late-head-');
    const joining = ray(['start', `--address=localhost:${later}`, '--num-gpus=1'], {
      ...onWorker({ FAKE_RAY_CONNECT_TIMEOUT_MS: '8000' }),
    });
    await new Promise((r) => setTimeout(r, 700));
    const env = { FAKE_RAY_STATE_DIR: otherHead, FAKE_RAY_CALLS: calls };
    expect((await ray(['start', '--head', `--port=${later}`, '--num-gpus=3'], env)).code).toBe(0);
    const head = daemonPid(otherHead, 'head');
    const joined = await joining;
    expect(joined.code).toBe(0);
    expect(joined.ms).toBeGreaterThanOrEqual(700);
    const worker = daemonPid(workerDir, 'worker');
    const s = await ray(['status', `--address=127.0.0.1:${later}`], env);
    expect(activeNodes(s.stdout)).toHaveLength(2);
    expect(s.stdout).toMatch(/^ 0\.0\/4\.0 GPU$/m);
    expect((await ray(['stop'], env)).code).toBe(0);
    expect(alive(head)).toBe(false);
    expect(await until(() => !alive(worker), 3000)).toBe(true);
  });

  it('joining a closed port fails within FAKE_RAY_CONNECT_TIMEOUT_MS', async () => {
    const closed = await freePort();
    const r = await ray(['start', '--address', `127.0.0.1:${closed}`, '--num-gpus=1'], {
      ...onWorker({ FAKE_RAY_CONNECT_TIMEOUT_MS: '1500' }),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Unable to connect to GCS at 127.0.0.1:${closed}`);
    expect(r.ms).toBeGreaterThanOrEqual(1400);
    expect(r.ms).toBeLessThan(1500 + 3000);
  });

  it('status without a running instance is a ConnectionError (exit 1)', async () => {
    const closed = await freePort();
    const r = await ray(['status', `--address=127.0.0.1:${closed}`], onWorker());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('ConnectionError: Could not find any running Ray instance.');
    const none = await ray(['status'], {
      FAKE_RAY_STATE_DIR: tempDir('fake-ray-empty-'),
      FAKE_RAY_CALLS: calls,
    });
    expect(none.code).toBe(1);
  });

  it('start --head on a taken port exits 1 and leaves no daemon', async () => {
    const otherHost = tempDir('fake-ray-other-');
    const r = await ray(['start', '--head', '--port', String(port), '--num-gpus=1'], {
      FAKE_RAY_STATE_DIR: otherHost,
      FAKE_RAY_CALLS: calls,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`port ${port} is already in use`));
    expect(fs.existsSync(path.join(otherHost, 'head.json'))).toBe(false);
    // A port held by something that is not Ray, too.
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    const taken = (server.address() as net.AddressInfo).port;
    try {
      const r2 = await ray(['start', '--head', `--port=${taken}`], { FAKE_RAY_STATE_DIR: otherHost });
      expect(r2.code).toBe(1);
      expect(r2.stderr).toContain(`port ${taken} is already in use`);
    } finally {
      server.close();
    }
  });

  it('ray stop on both hosts leaves no daemon alive; a worker exits when its head goes', async () => {
    expect((await ray(['start', `--address=127.0.0.1:${port}`, '--num-gpus=4'], onWorker())).code).toBe(0);
    const worker = daemonPid(workerDir, 'worker');
    const head = daemonPid(headDir, 'head');
    expect(activeNodes((await status()).stdout)).toHaveLength(2);
    const stopHead = await ray(['stop', '--force'], onHead());
    expect(stopHead.code).toBe(0);
    expect(stopHead.stdout).toContain('Stopped all 1 Ray processes.');
    expect(alive(head)).toBe(false);
    expect(fs.existsSync(path.join(headDir, 'head.json'))).toBe(false);
    expect(await until(() => !alive(worker), 3000)).toBe(true);
    const stopWorker = await ray(['stop'], onWorker());
    expect(stopWorker.code).toBe(0);
    expect(fs.existsSync(path.join(workerDir, 'worker.json'))).toBe(false);
    const again = await ray(['stop'], onHead());
    expect(again).toMatchObject({ code: 0 });
    expect(again.stdout).toContain('Did not find any active Ray processes.');
    expect((await status()).code).toBe(1);
  });

  it('ray stop ends a live worker daemon with SIGTERM', async () => {
    expect((await ray(['start', '--head', `--port=${port}`], onHead())).code).toBe(0);
    expect((await ray(['start', `--address=127.0.0.1:${port}`], onWorker())).code).toBe(0);
    const worker = daemonPid(workerDir, 'worker');
    const head = daemonPid(headDir, 'head');
    const r = await ray(['stop'], onWorker());
    expect(r.stdout).toContain('Stopped all 1 Ray processes.');
    expect(alive(worker)).toBe(false);
    expect(await until(async () => activeNodes((await status()).stdout).length === 1, 2000)).toBe(true);
    expect((await ray(['stop'], onHead())).code).toBe(0);
    expect(alive(head)).toBe(false);
  });

  it('a bad command line is a usage error (exit 2)', async () => {
    expect((await ray(['start'], onWorker())).code).toBe(2);
    expect((await ray(['start', '--head', '--num-gpus=two'], onWorker())).code).toBe(2);
    expect((await ray(['frobnicate'], onWorker())).code).toBe(2);
  });
});
