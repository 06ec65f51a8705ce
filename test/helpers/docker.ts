import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from './moto';
import { copyPythonInto, pythonAvailable } from './python';

/**
 * A real Docker engine and a real registry on loopback, started and stopped by the test
 * suite: `dockerd` with its own data root, exec root and socket, no bridge and no iptables, and
 * `docker-registry` with htpasswd basic auth. Under CI=true a missing one is a failure.
 */
export function dockerAvailable(): boolean {
  const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
  return (
    has('dockerd') &&
    has('docker-registry') &&
    has('htpasswd') &&
    has('busybox') &&
    process.getuid?.() === 0 &&
    // The test images carry the machine's Python for the trainer stand-ins.
    pythonAvailable()
  );
}

export interface DockerEngine {
  /** `unix:///…/docker.sock` */
  readonly host: string;
  stop(): Promise<void>;
}

async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
  clearTimeout(timer);
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
}

async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  child: ChildProcess,
  log: () => string,
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}:\n${log()}`);
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not start within ${timeoutMs} ms:\n${log()}`);
}

export async function startDockerEngine(): Promise<DockerEngine> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-dockerd-'));
  const socket = path.join(dir, 'docker.sock');
  const child = spawn(
    'dockerd',
    [
      '--data-root',
      path.join(dir, 'data'),
      '--exec-root',
      path.join(dir, 'exec'),
      '--pidfile',
      path.join(dir, 'docker.pid'),
      '-H',
      `unix://${socket}`,
      '--bridge=none',
      '--iptables=false',
      '--ip6tables=false',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr!.on('data', (d: Buffer) => {
    log = (log + d.toString()).slice(-6000);
  });
  const { default: Docker } = await import('dockerode');
  const docker = new Docker({ socketPath: socket });
  await waitFor(
    'dockerd',
    async () => Boolean(await docker.ping()),
    child,
    () => log,
    60_000,
  );
  return {
    host: `unix://${socket}`,
    stop: async () => {
      await stopChild(child, 15_000);
      spawnSync('sh', ['-c', `grep -o ' ${dir}[^ ]*' /proc/mounts | sort -r | xargs -r -n1 umount -l`]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Registry {
  /** `127.0.0.1:<port>` */
  readonly host: string;
  readonly port: number;
  readonly dir: string;
  /** Stops the registry, keeping its storage (start() brings it back). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes its storage. */
  remove(): Promise<void>;
}

/** docker-registry with basic auth; `password` is what ECR's token decodes to (moto: `<account>-auth-token`). */
export async function startRegistry(username: string, password: string): Promise<Registry> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-registry-'));
  const htpasswd = spawnSync('htpasswd', ['-Bbn', username, password], { encoding: 'utf8' });
  if (htpasswd.status !== 0) throw new Error(`htpasswd failed: ${htpasswd.stderr}`);
  fs.writeFileSync(path.join(dir, 'htpasswd'), htpasswd.stdout);
  const port = await freePort();
  const config = path.join(dir, 'config.yml');
  fs.writeFileSync(
    config,
    [
      'version: 0.1',
      'log: {level: error}',
      `storage: {filesystem: {rootdirectory: ${dir}/data}, delete: {enabled: true}}`,
      `http: {addr: "127.0.0.1:${port}"}`,
      `auth: {htpasswd: {realm: rlvr-test, path: ${dir}/htpasswd}}`,
    ].join('\n'),
  );
  let child: ChildProcess | undefined;
  const start = async () => {
    const proc = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    let log = '';
    proc.stderr!.on('data', (d: Buffer) => {
      log = (log + d.toString()).slice(-4000);
    });
    await waitFor(
      'docker-registry',
      async () => (await fetch(`http://127.0.0.1:${port}/v2/`)).status === 401,
      proc,
      () => log,
      30_000,
    );
  };
  await start();
  return {
    host: `127.0.0.1:${port}`,
    port,
    dir,
    start,
    stop: async () => {
      if (child) await stopChild(child, 5000);
    },
    remove: async () => {
      if (child) await stopChild(child, 5000);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Debian's static busybox at `<dir>/base/bin/busybox`, with `sh` linked to it: a shell for FROM scratch. */
export function copyBusybox(dir: string): void {
  const bin = path.join(dir, 'base', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const host = spawnSync('sh', ['-c', 'command -v busybox'], { encoding: 'utf8' }).stdout.trim();
  fs.copyFileSync(fs.realpathSync(host), path.join(bin, 'busybox'));
  fs.chmodSync(path.join(bin, 'busybox'), 0o755);
  if (!fs.existsSync(path.join(bin, 'sh'))) fs.symlinkSync('busybox', path.join(bin, 'sh'));
}

/**
 * A test image context `FROM scratch` built from host files: busybox-static for a shell. The layers
 * mirror the real Dockerfile's order: base, OLMES venv, the trainer's dependencies, our entrypoint.
 */
export function writeTestDockerDir(dir: string): void {
  copyBusybox(dir);
  fs.writeFileSync(path.join(dir, 'requirements-olmes.txt'), 'ai2-olmes==0.1.0\n');
  fs.writeFileSync(path.join(dir, 'NOTES.md'), 'not part of the image\n');
  fs.writeFileSync(path.join(dir, '.dockerignore'), '*.md\n');
  // Each "install" step writes 1–2 MiB of random bytes: a layer whose upload the tests can see.
  const sh = (script: string) => `RUN ["/bin/busybox", "sh", "-c", ${JSON.stringify(script)}]`;
  fs.writeFileSync(
    path.join(dir, 'Dockerfile'),
    [
      'FROM scratch',
      'COPY base/ /',
      'COPY requirements-olmes.txt /tmp/olmes/',
      sh(
        'mkdir -p /opt/olmes-venv && cp /tmp/olmes/requirements-olmes.txt /opt/olmes-venv/ && busybox dd if=/dev/urandom of=/opt/olmes-venv/blob bs=1024 count=2048 2>/dev/null',
      ),
      'COPY trainer-deps/ /tmp/trainer-deps/',
      sh(
        'mkdir -p /opt/venv && cat /tmp/trainer-deps/* > /opt/venv/installed.txt && busybox dd if=/dev/urandom of=/opt/venv/blob bs=1024 count=1024 2>/dev/null',
      ),
      'COPY rlvr/ /opt/rlvr/',
      '',
    ].join('\n'),
  );
}

/**
 * The container test image: `FROM scratch` with the host's node (and the libraries ldd lists), busybox
 * for a shell, the machine's real Python 3.11 as `python` with PyYAML and the stand-in `ray`, `vllm` and
 * `transformers` packages as its dependencies (test/helpers/python.ts: the trainer stand-ins are Python),
 * the stand-in `ray` CLI of test/fixtures/fake-ray (a real TCP rendezvous between containers, actors
 * spawned with each node's environment, each call recorded), the stand-in `lm_eval` of
 * test/fixtures/fake-lm-eval, and our `train`.
 */
export function writeContainerDockerDir(dir: string): void {
  const base = path.join(dir, 'base');
  const copyHostFile = (hostPath: string, mode = 0o755) => {
    const dest = path.join(base, hostPath);
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.copyFileSync(fs.realpathSync(hostPath), dest);
    fs.chmodSync(dest, mode);
  };
  copyBusybox(dir);
  const node = process.execPath;
  fs.mkdirSync(path.join(base, 'usr', 'local', 'bin'), { recursive: true });
  fs.copyFileSync(node, path.join(base, 'usr', 'local', 'bin', 'node'));
  fs.chmodSync(path.join(base, 'usr', 'local', 'bin', 'node'), 0o755);
  const ldd = spawnSync('ldd', [node], { encoding: 'utf8' }).stdout;
  for (const m of ldd.matchAll(/(\/\S+\.so[^\s]*)/g)) copyHostFile(m[1]);
  fs.copyFileSync(path.join(__dirname, '..', '..', 'docker', 'train'), path.join(dir, 'train'));
  fs.chmodSync(path.join(dir, 'train'), 0o755);
  // The code verifiers' sandbox, as the real Dockerfile installs it.
  fs.copyFileSync(
    path.join(__dirname, '..', '..', 'docker', 'code-sandbox.py'),
    path.join(dir, 'code-sandbox.py'),
  );
  fs.copyFileSync(path.join(__dirname, '..', '..', 'docker', 'docker-shim'), path.join(dir, 'docker-shim'));
  fs.chmodSync(path.join(dir, 'docker-shim'), 0o755);
  const python = copyPythonInto(base, (p) => copyHostFile(p));
  // GNU coreutils' `timeout`, as the real (Ubuntu) base has: busybox's counts whole seconds, so a
  // verifier's `timeout 10.5` would fire early. It needs only the libc already copied for node.
  const timeout = spawnSync('sh', ['-c', 'command -v timeout'], { encoding: 'utf8' }).stdout.trim();
  fs.copyFileSync(fs.realpathSync(timeout), path.join(base, 'usr', 'local', 'bin', 'timeout'));
  fs.chmodSync(path.join(base, 'usr', 'local', 'bin', 'timeout'), 0o755);
  fs.writeFileSync(path.join(dir, 'python'), `#!/bin/sh\nexec ${python} "$@"\n`, { mode: 0o755 });
  // The stand-in `ray` (test/fixtures/fake-ray): a real TCP rendezvous between containers, and a record
  // of each call in /opt/ml/checkpoints/logs/ray-calls.txt.
  fs.writeFileSync(path.join(dir, 'ray'), '#!/bin/sh\nexec /usr/local/bin/node /opt/fake-ray/ray.js "$@"\n', {
    mode: 0o755,
  });
  // The stand-in `lm_eval` (test/fixtures/fake-lm-eval): the batch evaluation's harness.
  fs.writeFileSync(
    path.join(dir, 'lm_eval'),
    '#!/bin/sh\nexec /usr/local/bin/node /opt/fake-lm-eval/lm_eval.js "$@"\n',
    { mode: 0o755 },
  );
  fs.mkdirSync(path.join(dir, 'fake-lm-eval'), { recursive: true });
  fs.copyFileSync(
    path.join(__dirname, '..', 'fixtures', 'fake-lm-eval', 'lm_eval.js'),
    path.join(dir, 'fake-lm-eval', 'lm_eval.js'),
  );
  fs.mkdirSync(path.join(dir, 'fake-ray'), { recursive: true });
  fs.copyFileSync(
    path.join(__dirname, '..', 'fixtures', 'fake-ray', 'ray.js'),
    path.join(dir, 'fake-ray', 'ray.js'),
  );
  fs.writeFileSync(
    path.join(dir, 'Dockerfile'),
    [
      'FROM scratch',
      'COPY base/ /',
      'RUN ["/bin/busybox", "sh", "-c", "/bin/busybox --install -s /bin && mkdir -p /tmp && chmod 1777 /tmp"]',
      'COPY trainer-deps/ /opt/rlvr-build/trainer-deps/',
      'COPY python ray train lm_eval /usr/local/bin/',
      'COPY code-sandbox.py /opt/rlvr-sandbox/',
      'COPY docker-shim /usr/local/bin/docker',
      'COPY fake-ray/ /opt/fake-ray/',
      'COPY fake-lm-eval/ /opt/fake-lm-eval/',
      'COPY rlvr/ /opt/rlvr/',
      'ENV PATH=/usr/local/bin:/bin PYTHONDONTWRITEBYTECODE=1',
      'WORKDIR /opt/ml/code',
      'ENTRYPOINT ["/usr/local/bin/train"]',
      '',
    ].join('\n'),
  );
}

/**
 * An image made in the registry itself (no engine): a config blob holding `labels` and a manifest with no
 * layers, through the Registry HTTP API with the registry's basic auth. Returns its digest.
 */
export async function pushLabelledImage(
  registry: Registry,
  name: string,
  tag: string,
  labels: Record<string, string>,
  credentials: { username: string; password: string },
): Promise<string> {
  const { createHash } = await import('node:crypto');
  const auth = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  const base = `http://${registry.host}/v2/${name}`;
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: { Labels: labels },
      rootfs: { type: 'layers', diff_ids: [] },
    }),
  );
  const configDigest = `sha256:${createHash('sha256').update(config).digest('hex')}`;
  const start = await fetch(`${base}/blobs/uploads/`, { method: 'POST', headers: { Authorization: auth } });
  if (start.status !== 202) throw new Error(`blob upload: HTTP ${start.status}`);
  const location = new URL(start.headers.get('location')!, `http://${registry.host}`);
  location.searchParams.set('digest', configDigest);
  const put = await fetch(location, { method: 'PUT', headers: { Authorization: auth }, body: config });
  if (put.status !== 201) throw new Error(`blob put: HTTP ${put.status}`);
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
    config: {
      mediaType: 'application/vnd.docker.container.image.v1+json',
      size: config.length,
      digest: configDigest,
    },
    layers: [],
  });
  const res = await fetch(`${base}/manifests/${tag}`, {
    method: 'PUT',
    headers: { Authorization: auth, 'Content-Type': 'application/vnd.docker.distribution.manifest.v2+json' },
    body: manifest,
  });
  if (res.status !== 201) throw new Error(`manifest put: HTTP ${res.status}: ${await res.text()}`);
  return res.headers.get('docker-content-digest')!;
}
