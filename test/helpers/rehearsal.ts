import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import Docker from 'dockerode';
import type { Engine } from '../../lib/image';
import type { ImageBuildPlan } from '../../lib/image/build-plan';
import { CUDA_MINIMUM_DRIVER } from '../../lib/job-options';

/**
 * A rehearsal of the real docker/Dockerfile where nothing can be pulled or downloaded: every `FROM` names
 * a local stand-in built `FROM scratch` from host files, and every network tool the build's steps call
 * (uv, apt-get, curl, gpg, the venv's python, the EFA installer) is a stand-in in
 * test/helpers/rehearsal-shims that records its call in /opt/rehearsal/calls.log and leaves what the
 * steps then check. Each stand-in refuses what it does not know, so a changed step fails the rehearsal
 * until the stand-in learns it.
 */
const SHIMS = path.join(__dirname, 'rehearsal-shims');

/** The engine, busybox-static, the host's loader list and tar; root for the engine. */
export function rehearsalAvailable(): boolean {
  const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
  return ['dockerd', 'busybox', 'ldd', 'tar'].every(has) && process.getuid?.() === 0;
}

/** What Ubuntu's coreutils, grep, sed, mawk, tar and gzip give the real base: busybox's applets of them. */
const BASE_COMMANDS = [
  'sh',
  'cat',
  'cp',
  'mv',
  'rm',
  'ln',
  'mkdir',
  'rmdir',
  'chmod',
  'chown',
  'touch',
  'ls',
  'pwd',
  'echo',
  'printf',
  'test',
  '[',
  'true',
  'false',
  'env',
  'id',
  'uname',
  'sleep',
  'date',
  'basename',
  'dirname',
  'readlink',
  'realpath',
  'mktemp',
  'head',
  'tail',
  'cut',
  'tr',
  'sort',
  'uniq',
  'wc',
  'tee',
  'xargs',
  'find',
  'grep',
  'egrep',
  'sed',
  'awk',
  'tar',
  'gzip',
  'gunzip',
  'zcat',
  'sha256sum',
  'expr',
  'stat',
  'which',
];

/** The PATH and LD_LIBRARY_PATH nvidia/cuda images set, which the Dockerfile's ENV extends. */
export const BASE_PATH =
  '/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
export const BASE_LD_LIBRARY_PATH = '/usr/local/nvidia/lib:/usr/local/nvidia/lib64';

/** The driver version cuda-compat's libcuda carries (12.8.1's is 570.124.06), for the stand-in package. */
const COMPAT_DRIVER: Readonly<Record<string, string>> = { '12.8': '570.124.06' };

export interface StandIns {
  /** `--build-arg`s naming the stand-ins: BASE_IMAGE, UV_IMAGE, NODE_IMAGE. */
  readonly flags: Readonly<Record<string, string>>;
  /** The base's CUDA_VERSION (from the real base's tag). */
  readonly cudaVersion: string;
  /** `cuda-compat-12-8`: the one CUDA package the stand-in apt repository has. */
  readonly compatPackage: string;
  /** The version its libcuda.so.1 links to. */
  readonly compatDriver: string;
  readonly efaVersion: string;
}

/** `rlvr-rehearsal/<the real name>`: the stand-in's name says what it stands in for. */
const standInName = (real: string) => `rlvr-rehearsal/${real}`;

function put(file: string, body: string | Buffer, mode = 0o644): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, body);
  fs.chmodSync(file, mode);
}

function copyShim(name: string, dest: string): void {
  put(dest, fs.readFileSync(path.join(SHIMS, name)), 0o755);
}

function tarOf(dir: string, extra: string[] = []): Buffer {
  return execFileSync('tar', ['-C', dir, '--owner=0', '--group=0', ...extra, '-cf', '-', '.'], {
    maxBuffer: 1 << 30,
  });
}

function sha256(body: Buffer | string): string {
  return createHash('sha256').update(body).digest('hex');
}

/**
 * Builds the stand-ins of the images the plan names (its BASE_IMAGE, UV_IMAGE, NODE_IMAGE) and returns the
 * `--build-arg`s that name them. The base holds busybox as Ubuntu's tools, the host node's libraries,
 * `apt-get` with the packages the steps ask for (curl, ca-certificates, gnupg, the base CUDA's
 * cuda-compat), a mirror of the EFA installer's download site (a tarball signed for the stand-in gpg),
 * and the environment nvidia/cuda images set.
 */
export async function buildStandIns(engine: Engine, plan: ImageBuildPlan, work: string): Promise<StandIns> {
  const arg = (name: string) => {
    const a = plan.args.find((x) => x.name === name);
    if (!a || !a.value) throw new Error(`the plan has no ${name}`);
    return a.value;
  };
  const real = { base: arg('BASE_IMAGE'), uv: arg('UV_IMAGE'), node: arg('NODE_IMAGE') };
  const cudaVersion = /^(\d+\.\d+\.\d+)-/.exec(real.base.split(':').pop()!)?.[1];
  if (!cudaVersion) throw new Error(`the base ${real.base} does not name its CUDA version`);
  const [major, minor] = cudaVersion.split('.');
  const cuda = `${major}.${minor}`;
  const compatPackage = `cuda-compat-${major}-${minor}`;
  const compatDriver = COMPAT_DRIVER[cuda] ?? CUDA_MINIMUM_DRIVER[cuda] ?? '999.0';
  const efaVersion = arg('EFA_INSTALLER_VERSION');

  // uv's image: /uv and /uvx.
  const uvDir = path.join(work, 'uv');
  copyShim('uv', path.join(uvDir, 'uv'));
  copyShim('uvx', path.join(uvDir, 'uvx'));
  put(path.join(uvDir, 'Dockerfile'), 'FROM scratch\nCOPY uv uvx /\n');

  // node's image: the host's node binary (its libraries are in the base, as Debian's would be).
  const nodeDir = path.join(work, 'node');
  put(path.join(nodeDir, 'usr', 'local', 'bin', 'node'), fs.readFileSync(process.execPath), 0o755);
  put(path.join(nodeDir, 'Dockerfile'), 'FROM scratch\nCOPY usr/ /usr/\n');

  // The CUDA base.
  const baseDir = path.join(work, 'base');
  const root = path.join(baseDir, 'root');
  const busybox = spawnSync('sh', ['-c', 'command -v busybox'], { encoding: 'utf8' }).stdout.trim();
  put(path.join(root, 'bin', 'busybox'), fs.readFileSync(fs.realpathSync(busybox)), 0o755);
  for (const cmd of BASE_COMMANDS) fs.symlinkSync('busybox', path.join(root, 'bin', cmd));
  const ldd = spawnSync('ldd', [process.execPath], { encoding: 'utf8' }).stdout;
  for (const m of ldd.matchAll(/(\/\S+\.so[^\s]*)/g)) {
    put(path.join(root, m[1]), fs.readFileSync(fs.realpathSync(m[1])), 0o755);
  }
  for (const d of [
    'root',
    'etc',
    'usr/bin',
    'usr/sbin',
    'sbin',
    'usr/local/bin',
    'var/lib/apt/lists',
    'opt',
  ]) {
    fs.mkdirSync(path.join(root, d), { recursive: true });
  }
  fs.mkdirSync(path.join(root, 'tmp'), { recursive: true });
  fs.chmodSync(path.join(root, 'tmp'), 0o1777);
  put(path.join(root, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
  put(path.join(root, 'usr', 'local', `cuda-${cuda}`, 'version.txt'), `CUDA Version ${cudaVersion}\n`);
  fs.symlinkSync(`cuda-${cuda}`, path.join(root, 'usr', 'local', 'cuda'));
  const rehearsal = path.join(root, 'opt', 'rehearsal');
  copyShim('lib.sh', path.join(rehearsal, 'lib.sh'));
  copyShim('python', path.join(rehearsal, 'bin', 'python'));
  copyShim('apt-get', path.join(root, 'usr', 'bin', 'apt-get'));
  // The packages the stand-in apt repository holds.
  const apt = path.join(rehearsal, 'apt');
  copyShim('curl', path.join(apt, 'curl', 'usr', 'bin', 'curl'));
  copyShim('gpg', path.join(apt, 'gnupg', 'usr', 'bin', 'gpg'));
  put(path.join(apt, 'ca-certificates', 'etc', 'ssl', 'certs', 'ca-certificates.crt'), 'stand-in\n');
  const compat = path.join(apt, compatPackage, 'usr', 'local', `cuda-${cuda}`, 'compat');
  for (const lib of ['libcuda', 'libnvidia-ptxjitcompiler', 'libnvidia-nvvm']) {
    put(path.join(compat, `${lib}.so.${compatDriver}`), `${lib} ${compatDriver} stand-in\n`);
    fs.symlinkSync(`${lib}.so.${compatDriver}`, path.join(compat, `${lib}.so.1`));
  }
  fs.symlinkSync('libcuda.so.1', path.join(compat, 'libcuda.so'));
  // The EFA installer's download site: the tarball, its signature (for the stand-in gpg) and the key.
  const efaSrc = path.join(work, 'efa');
  copyShim('efa_installer.sh', path.join(efaSrc, 'aws-efa-installer', 'efa_installer.sh'));
  put(path.join(efaSrc, 'aws-efa-installer', 'README'), 'the EFA installer, rehearsal stand-in\n');
  const tarball = execFileSync('tar', [
    '-C',
    efaSrc,
    '--owner=0',
    '--group=0',
    '--mtime=@0',
    '-czf',
    '-',
    'aws-efa-installer',
  ]);
  const key = Buffer.from(
    '-----BEGIN PGP PUBLIC KEY BLOCK-----\nrehearsal stand-in\n-----END PGP PUBLIC KEY BLOCK-----\n',
  );
  const mirror = path.join(rehearsal, 'mirror', 'efa-installer.amazonaws.com');
  const name = `aws-efa-installer-${efaVersion}.tar.gz`;
  put(path.join(mirror, name), tarball);
  put(path.join(mirror, `${name}.sig`), `rehearsal-signature ${sha256(tarball)} by ${sha256(key)}`);
  put(path.join(mirror, 'aws-efa-installer.key'), key);
  put(
    path.join(baseDir, 'Dockerfile'),
    [
      'FROM scratch',
      'COPY root/ /',
      `ENV PATH=${BASE_PATH} \\`,
      `    LD_LIBRARY_PATH=${BASE_LD_LIBRARY_PATH} \\`,
      `    CUDA_VERSION=${cudaVersion} \\`,
      `    NVIDIA_REQUIRE_CUDA="cuda>=${cuda} brand=tesla,driver>=535,driver<536" \\`,
      '    NVIDIA_VISIBLE_DEVICES=all \\',
      '    NVIDIA_DRIVER_CAPABILITIES=compute,utility',
      '',
    ].join('\n'),
  );

  const flags = {
    BASE_IMAGE: standInName(real.base),
    UV_IMAGE: standInName(real.uv),
    NODE_IMAGE: standInName(real.node),
  };
  await Promise.all([
    engine.build(tarOf(uvDir), { tags: [flags.UV_IMAGE], buildArgs: {} }),
    engine.build(tarOf(nodeDir), { tags: [flags.NODE_IMAGE], buildArgs: {} }),
    engine.build(tarOf(baseDir), { tags: [flags.BASE_IMAGE], buildArgs: {} }),
  ]);
  return { flags, cudaVersion, compatPackage, compatDriver, efaVersion };
}

/** One call a stand-in recorded. */
export interface RecordedCall {
  readonly tool: string;
  readonly cwd: string;
  /** Whether uv's BuildKit cache (/root/.cache/uv) was mounted during the call. */
  readonly cacheMount: boolean;
  readonly env: Readonly<Record<string, string>>;
  readonly args: readonly string[];
}

export function parseCalls(text: string): RecordedCall[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RecordedCall);
}

/** Runs `script` with /bin/sh in a container of `image` (no network) and returns its output and status. */
export async function runShell(
  dockerHost: string,
  image: string,
  script: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const docker = new Docker({ socketPath: dockerHost.replace(/^unix:\/\//, '') });
  const container = await docker.createContainer({
    Image: image,
    Entrypoint: ['/bin/sh', '-c'],
    Cmd: [script],
    HostConfig: { NetworkMode: 'none' },
  });
  try {
    const stream = await container.attach({ stream: true, stdout: true, stderr: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const stdout = new PassThrough().on('data', (d: Buffer) => out.push(d));
    const stderr = new PassThrough().on('data', (d: Buffer) => err.push(d));
    container.modem.demuxStream(stream, stdout, stderr);
    const ended = new Promise<void>((r) => stream.on('end', () => r()));
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    await Promise.race([ended, new Promise((r) => setTimeout(r, 2000))]);
    return {
      code: StatusCode,
      stdout: Buffer.concat(out).toString('utf8'),
      stderr: Buffer.concat(err).toString('utf8'),
    };
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}
