import * as fs from 'node:fs';
import * as path from 'node:path';
import { assembleContext, defaultDockerDir } from '../../lib/image';
import { makeTrainerRepo } from '../helpers/fixtures';

/**
 * The real GPU Dockerfile cannot be built here (no base-image pulls), so it is parsed and checked:
 * stages, the separate OLMES venv, cache mounts, no second torch, layer order and the entrypoint.
 */
interface Instruction {
  readonly line: number;
  readonly op: string;
  readonly args: string;
}

function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*(#|$)/.test(lines[i])) continue;
    const start = i;
    let logical = lines[i];
    while (logical.endsWith('\\')) logical = `${logical.slice(0, -1)} ${lines[++i].trim()}`;
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(logical)!;
    out.push({ line: start + 1, op: m[1].toUpperCase(), args: m[2].trim() });
  }
  return out;
}

const dir = defaultDockerDir();
const text = fs.readFileSync(path.join(dir, 'Dockerfile'), 'utf8');
const steps = parseDockerfile(text);
const index = (pred: (s: Instruction) => boolean) => {
  const i = steps.findIndex(pred);
  if (i < 0) throw new Error('instruction not found');
  return i;
};

describe('docker/Dockerfile (the GPU image)', () => {
  it('has no syntax directive (it would pull a frontend image) and takes the base and versions as build arguments', () => {
    expect(text).not.toMatch(/^#\s*syntax=/m);
    const args = steps.filter((s) => s.op === 'ARG').map((s) => s.args.split('=')[0]);
    expect(args).toEqual(
      expect.arrayContaining(['BASE_IMAGE', 'TORCH_VERSION', 'VLLM_VERSION', 'PYTHON_VERSION']),
    );
    const froms = steps.filter((s) => s.op === 'FROM').map((s) => s.args);
    expect(froms[froms.length - 1]).toBe('${BASE_IMAGE} AS runtime');
  });

  it('installs OLMES into its own venv only', () => {
    const olmes = steps.filter((s) => s.op === 'RUN' && s.args.includes('requirements-olmes.txt'));
    expect(olmes).toHaveLength(1);
    expect(olmes[0].args).toContain('uv venv --python "${PYTHON_VERSION}" /opt/olmes-venv');
    expect(olmes[0].args).toContain('uv pip install --python /opt/olmes-venv/bin/python -r');
    for (const s of steps.filter((x) => x.op === 'RUN' && !x.args.includes('olmes'))) {
      expect(s.args).not.toContain('olmes');
    }
  });

  it('keeps package caches in BuildKit cache mounts on every install step', () => {
    // Python packages: the EFA installer (apt) and the offline data have no package cache to keep.
    const installs = steps.filter(
      (s) => s.op === 'RUN' && /\buv |\bpip |install-(main-env|trainer-deps)/.test(s.args),
    );
    expect(installs.length).toBeGreaterThanOrEqual(3);
    for (const s of installs) expect(s.args).toMatch(/^--mount=type=cache,target=\/root\/\.cache\/uv /);
  });

  it('orders layers from least to most often changed, the entrypoint last', () => {
    const main = index((s) => s.op === 'RUN' && s.args.includes('install-main-env.sh'));
    const olmes = index((s) => s.op === 'RUN' && s.args.includes('requirements-olmes.txt'));
    const deps = index((s) => s.op === 'COPY' && s.args.startsWith('trainer-deps/'));
    const entry = index((s) => s.op === 'COPY' && s.args.startsWith('rlvr/'));
    expect(main).toBeLessThan(olmes);
    expect(olmes).toBeLessThan(deps);
    expect(deps).toBeLessThan(entry);
  });

  it('installs no second torch: every install after the first is held to the installed torch', () => {
    const mainEnv = fs.readFileSync(path.join(dir, 'install-main-env.sh'), 'utf8');
    expect(mainEnv).toMatch(/--system-site-packages/); // an AWS DLC base keeps its own torch
    expect(mainEnv).toMatch(/> \/opt\/constraints\.txt/);
    const installs = [
      ...mainEnv.split('\n').filter((l) => l.includes('uv pip install') && !l.includes('torch==')),
      ...fs
        .readFileSync(path.join(dir, 'install-trainer-deps.sh'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('uv pip install')),
    ];
    expect(installs.length).toBeGreaterThanOrEqual(4);
    for (const l of installs) expect(l).toContain('--constraint /opt/constraints.txt');
  });

  it('installs the EFA stack first, holds the main environment to the lock, and fetches offline data after the trainer deps', () => {
    const efa = index((s) => s.op === 'RUN' && s.args.includes('install-efa.sh'));
    const main = index((s) => s.op === 'RUN' && s.args.includes('install-main-env.sh'));
    const deps = index((s) => s.op === 'RUN' && s.args.includes('install-trainer-deps.sh'));
    const offline = index((s) => s.op === 'RUN' && s.args.includes('fetch-offline-data.sh'));
    const entry = index((s) => s.op === 'COPY' && s.args.startsWith('rlvr/'));
    expect(efa).toBeLessThan(main);
    expect(deps).toBeLessThan(offline);
    expect(offline).toBeLessThan(entry);
    expect(steps[main - 1]).toMatchObject({
      op: 'COPY',
      args: 'install-main-env.sh main-constraints.txt /opt/rlvr-build/',
    });
    const mainEnv = fs.readFileSync(path.join(dir, 'install-main-env.sh'), 'utf8');
    expect(mainEnv).toContain('--constraint "$pins"');
    const efaScript = fs.readFileSync(path.join(dir, 'install-efa.sh'), 'utf8');
    expect(efaScript).toContain('--skip-kmod');
    expect(efaScript).toMatch(/-z "\$\{EFA_INSTALLER_VERSION\}"/);
    const env = steps
      .filter((s) => s.op === 'ENV')
      .map((s) => s.args)
      .join(' ');
    expect(env).toContain('NLTK_DATA=/opt/nltk_data');
    expect(env).toContain('HF_HOME=/opt/hf-home');
    expect(env).toContain('/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu');
  });

  it('runs our entrypoint as the train command', () => {
    const entrypoint = steps.filter((s) => s.op === 'ENTRYPOINT');
    expect(entrypoint.map((s) => s.args)).toEqual(['["/usr/local/bin/train"]']);
    expect(steps.some((s) => s.op === 'COPY' && s.args === 'train /usr/local/bin/train')).toBe(true);
    const train = fs.readFileSync(path.join(dir, 'train'), 'utf8');
    expect(train).toContain('exec /usr/local/bin/node /opt/rlvr/entrypoint.js');
    expect(fs.statSync(path.join(dir, 'train')).mode & 0o111).not.toBe(0);
  });

  it('copies only files the build context holds (and the context holds no trainer source)', async () => {
    const trainer = makeTrainerRepo();
    const ctx = await assembleContext({ dockerDir: dir, trainerSrc: trainer.root });
    const paths = ctx.files.map((f) => f.path);
    for (const s of steps.filter((x) => x.op === 'COPY' && !x.args.startsWith('--from'))) {
      const sources = s.args.split(/\s+/).slice(0, -1);
      for (const src of sources) {
        expect(paths.some((p) => p === src || p.startsWith(src.endsWith('/') ? src : `${src}/`))).toBe(true);
      }
    }
    expect(paths.filter((p) => p.startsWith('trainer-deps/'))).toEqual(['trainer-deps/pyproject.toml']);
    expect(paths).not.toContain('README.md');
  });
});
