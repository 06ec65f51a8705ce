import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the reporter is CommonJS (jest loads it untransformed)
const { recordSkip } = require('./peer-skips') as { recordSkip: (peer: string, what: string) => void };

/**
 * A real moto_server on a free loopback port, started and stopped by the test suite.
 * Under CI=true a missing moto_server is a failure, not a skip.
 */
export interface MotoServer {
  readonly endpoint: string;
  /** Environment for SDK clients and CLI subprocesses pointed at this server. */
  readonly env: Record<string, string>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

export const TEST_REGION = 'us-west-2';
export const TEST_ACCOUNT = '123456789012';

export function motoAvailable(): boolean {
  return spawnSync('moto_server', ['--help'], { stdio: 'ignore' }).status === 0;
}

/**
 * `describe`, or — only outside CI — `describe.skip` when the peer is missing, recorded so the run
 * ends by saying how many suites each missing peer skipped (test/helpers/peer-skips.js).
 */
export function describeWithPeer(peer: string, available: boolean): jest.Describe {
  if (available) return describe;
  skipForMissingPeer(peer);
  return describe.skip;
}

/** `it`, or — only outside CI — `it.skip` when the peer is missing (recorded as above). */
export function itWithPeer(peer: string, available: boolean): jest.It {
  if (available) return it;
  skipForMissingPeer(peer);
  return it.skip;
}

function skipForMissingPeer(peer: string): void {
  if (process.env.CI === 'true') {
    throw new Error(`${peer} is required under CI=true but is not installed (see .ci/run).`);
  }
  recordSkip(peer, expect.getState().testPath ?? 'unknown');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`moto_server did not answer at ${url} within ${timeoutMs} ms`);
}

/**
 * Starts moto through test/helpers/moto_server_ext.py, which adds the training-job lifecycle moto
 * lacks (StopTrainingJob; with `trainingSeconds`, jobs that run that long before completing).
 */
export async function startMoto(options: { trainingSeconds?: number } = {}): Promise<MotoServer> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const script = path.join(__dirname, 'moto_server_ext.py');
    const child = spawn('python3', [script, '-H', '127.0.0.1', '-p', String(port)], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, MOTO_TRAINING_SECONDS: String(options.trainingSeconds ?? 0) },
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const endpoint = `http://127.0.0.1:${port}`;
    try {
      await waitForHttp(`${endpoint}/moto-api/data.json`, child, 30000);
    } catch (err) {
      child.kill('SIGKILL');
      if (attempt < 2) continue; // the port was taken between probe and bind
      throw new Error(`${(err as Error).message}\n${stderr}`);
    }
    return {
      endpoint,
      env: {
        AWS_ENDPOINT_URL: endpoint,
        AWS_ACCESS_KEY_ID: 'testing',
        AWS_SECRET_ACCESS_KEY: 'testing',
        AWS_REGION: TEST_REGION,
        AWS_EC2_METADATA_DISABLED: 'true',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
      reset: async () => {
        await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
      },
      stop: async () => {
        if (child.exitCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 5000)))]);
        clearTimeout(timer);
        if (child.exitCode === null) child.kill('SIGKILL');
      },
    };
  }
}
