import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from './fixtures';

/**
 * Real Python for the trainer stand-ins (test/fixtures/their-repo, test/fixtures/fake-trainer): the
 * machine's Python 3.11 (the one moto_server runs on, with PyYAML), in a virtualenv of its own that holds
 * the stand-in `ray`, `vllm` and `transformers` packages (the `python` folders of test/fixtures/fake-ray,
 * fake-vllm and fake-transformers) as the image's dependencies would, and a `ray` command for the
 * stand-in CLI. In the container tests the same Python is copied into the image (test/helpers/docker.ts).
 */
export const FIXTURES_DIR = path.join(__dirname, '..', 'fixtures');
export const THEIR_REPO = path.join(FIXTURES_DIR, 'their-repo');
export const FAKE_RAY_PY = path.join(FIXTURES_DIR, 'fake-ray', 'python', 'ray');
export const FAKE_RAY_JS = path.join(FIXTURES_DIR, 'fake-ray', 'ray.js');
export const FAKE_VLLM_PY = path.join(FIXTURES_DIR, 'fake-vllm', 'python', 'vllm');
export const FAKE_TRANSFORMERS_PY = path.join(FIXTURES_DIR, 'fake-transformers', 'python', 'transformers');
/** The stand-in packages the trainer imports as dependencies: installed in site-packages, never shipped with its source. */
const STAND_IN_PACKAGES = [FAKE_RAY_PY, FAKE_VLLM_PY, FAKE_TRANSFORMERS_PY];

function installStandIns(sitePackages: string): void {
  for (const pkg of STAND_IN_PACKAGES)
    fs.cpSync(pkg, path.join(sitePackages, path.basename(pkg)), {
      recursive: true,
      filter: (src) => !src.includes('__pycache__'),
    });
}

export interface HostPython {
  /** The interpreter itself (symlinks resolved). */
  readonly executable: string;
  /** `sys.prefix`: bin/, lib/libpython…, lib/python3.X/ */
  readonly prefix: string;
  /** `3.11` */
  readonly version: string;
  /** The site-packages folder holding PyYAML. */
  readonly yamlPackage: string;
}

let found: HostPython | null | undefined;

/** The machine's Python 3.11 with PyYAML, or undefined (a failure under CI=true: see pythonAvailable). */
export function hostPython(): HostPython | undefined {
  if (found !== undefined) return found ?? undefined;
  const probe = spawnSync(
    'python3',
    [
      '-c',
      'import sys, os, yaml; print(os.path.realpath(sys.executable)); print(sys.prefix); print("%d.%d" % sys.version_info[:2]); print(os.path.dirname(yaml.__file__))',
    ],
    { encoding: 'utf8' },
  );
  const [executable, prefix, version, yamlPackage] = probe.stdout.trim().split('\n');
  found = probe.status === 0 && version === '3.11' ? { executable, prefix, version, yamlPackage } : null;
  return found ?? undefined;
}

export function pythonAvailable(): boolean {
  return hostPython() !== undefined;
}

/**
 * A virtualenv on the host with the stand-in `ray`, `vllm` and `transformers` packages in its
 * site-packages, and `bin/ray` running the stand-in CLI: put `bin` first on PATH and `python` is the
 * trainer's interpreter.
 */
export function testVenv(): { bin: string; sitePackages: string } {
  const py = hostPython();
  if (!py) throw new Error('no Python 3.11 with PyYAML on this machine');
  const dir = tempDir('rlvr-venv-');
  execFileSync(py.executable, ['-m', 'venv', '--without-pip', '--system-site-packages', dir]);
  const sitePackages = path.join(dir, 'lib', `python${py.version}`, 'site-packages');
  installStandIns(sitePackages);
  const bin = path.join(dir, 'bin');
  fs.writeFileSync(path.join(bin, 'ray'), `#!/bin/sh\nexec ${process.execPath} ${FAKE_RAY_JS} "$@"\n`, {
    mode: 0o755,
  });
  return { bin, sitePackages };
}

/** Standard-library folders the stand-ins never use (tests, GUI, packaging). */
const STDLIB_SKIP = new Set([
  'site-packages',
  'test',
  'idlelib',
  'tkinter',
  'turtledemo',
  'ensurepip',
  'lib2to3',
  'pydoc_data',
  '__pycache__',
]);

/**
 * The machine's Python under `base/` at its own prefix (so it finds its standard library without
 * PYTHONHOME), with PyYAML and the stand-in `ray`, `vllm` and `transformers` as its only site-packages,
 * and the shared libraries its interpreter and extension modules need. For images built FROM scratch.
 */
export function copyPythonInto(base: string, copyHostFile: (hostPath: string) => void): string {
  const py = hostPython();
  if (!py) throw new Error('no Python 3.11 with PyYAML on this machine');
  const lib = path.join(py.prefix, 'lib', `python${py.version}`);
  const dest = (p: string) => path.join(base, p);
  fs.mkdirSync(dest(path.join(py.prefix, 'bin')), { recursive: true });
  fs.copyFileSync(py.executable, dest(py.executable));
  fs.chmodSync(dest(py.executable), 0o755);
  for (const entry of fs.readdirSync(lib)) {
    if (STDLIB_SKIP.has(entry) || entry.startsWith('config-')) continue;
    fs.cpSync(path.join(lib, entry), dest(path.join(lib, entry)), {
      recursive: true,
      filter: (src) => !src.includes('__pycache__') && !/_tkinter/.test(path.basename(src)),
    });
  }
  const site = dest(path.join(lib, 'site-packages'));
  fs.mkdirSync(site, { recursive: true });
  fs.cpSync(py.yamlPackage, path.join(site, 'yaml'), {
    recursive: true,
    filter: (src) => !src.includes('__pycache__'),
  });
  installStandIns(site);
  const libraries = new Set<string>();
  const objects = [
    py.executable,
    ...fs
      .readdirSync(path.join(lib, 'lib-dynload'))
      .filter((f) => f.endsWith('.so') && !f.startsWith('_tkinter'))
      .map((f) => path.join(lib, 'lib-dynload', f)),
  ];
  for (const object of objects) {
    const ldd = spawnSync('ldd', [object], { encoding: 'utf8' }).stdout;
    for (const m of ldd.matchAll(/=> (\/\S+\.so[^\s]*)/g)) libraries.add(m[1]);
  }
  for (const l of libraries) copyHostFile(l);
  return py.executable;
}

/**
 * A git repository copied from the replica of their trainer repository (test/fixtures/their-repo), with
 * `files` added (configs, models, data): the trainer source a submit ships.
 */
export function theirRepository(files: Record<string, string> = {}): string {
  const root = tempDir('rlvr-their-repo-');
  fs.cpSync(THEIR_REPO, root, { recursive: true, filter: (src) => !src.includes('__pycache__') });
  for (const [rel, body] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), body);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=test@example.com', '-c', 'user.name=test', ...args], {
      cwd: root,
    });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'their trainer');
  return root;
}
