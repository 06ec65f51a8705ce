import * as fs from 'node:fs';
import * as path from 'node:path';
import { ProblemsError } from '../../lib/errors';
import { defaultDockerDir, planImageBuild } from '../../lib/image';
import { baseImageCuda, type ImageBuildPlan } from '../../lib/image/build-plan';
import { tempDir } from '../helpers/fixtures';
import { THEIR_REPO } from '../helpers/python';

const DOCKERFILE = fs.readFileSync(path.join(defaultDockerDir(), 'Dockerfile'), 'utf8');

const plan = (trainerSrc: string | undefined, flags: Record<string, string> = {}) =>
  planImageBuild({ dockerfile: DOCKERFILE, ...(trainerSrc ? { trainerSrc } : {}), flags });

const arg = (p: ImageBuildPlan, name: string) => p.args.find((a) => a.name === name)!;

/** The ProblemsError's text, or fails. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ProblemsError);
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

function trainer(files: Record<string, string>): string {
  const dir = tempDir('rlvr-trainer-');
  for (const [rel, body] of Object.entries(files)) fs.writeFileSync(path.join(dir, rel), body);
  return dir;
}

/** A lock of one torch from `index`, the lock's format as uv writes it. */
const lockWithTorch = (version: string, index: string, extra = '') =>
  `version = 1\nrequires-python = ">=3.10"\n\n[[package]]\nname = "torch"\nversion = "${version}"\nsource = { registry = "${index}" }\n${extra}`;

describe('the image follows the trainer (build arguments from its lock)', () => {
  it("their lock: torch, vLLM and Ray at its versions with the line of each, PyPI's torch (CUDA 12.8) on a CUDA 12.8 base, Python 3.11", () => {
    const p = plan(THEIR_REPO);
    expect(arg(p, 'TORCH_VERSION')).toEqual({
      name: 'TORCH_VERSION',
      value: '2.9.0',
      source: { kind: 'lock', where: 'uv.lock:127' },
    });
    expect(arg(p, 'VLLM_VERSION')).toMatchObject({
      value: '0.11.2',
      source: { kind: 'lock', where: 'uv.lock:157' },
    });
    expect(arg(p, 'RAY_VERSION')).toMatchObject({
      value: '2.51.2',
      source: { kind: 'lock', where: 'uv.lock:67' },
    });
    expect(arg(p, 'TORCH_INDEX_URL')).toMatchObject({
      value: 'https://pypi.org/simple',
      source: { kind: 'derived' },
    });
    expect(arg(p, 'BASE_IMAGE').value).toBe('nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04');
    expect(arg(p, 'PYTHON_VERSION').value).toBe('3.11');
    expect(p.checks.map((c) => c.message)).toEqual(
      expect.arrayContaining([
        'Python 3.11 satisfies >=3.11,<3.12 (pyproject.toml:3) and ==3.11.* (uv.lock:5)',
        'CUDA 12.8: the torch wheel (nvidia-cuda-runtime-cu12 12.8.90 (uv.lock:47)) and the base agree',
      ]),
    );
    // Step 2 installs exactly the lock's versions of what it installs.
    expect(p.mainConstraints).toContain('\ntorch==2.9.0\n');
    expect(p.mainConstraints).toContain('\ntransformers==4.57.3\n');
    expect(p.mainConstraints).not.toContain('rlvr-experiments');
    expect(p.labels).toMatchObject({
      'rlvr.torch': '2.9.0',
      'rlvr.vllm': '0.11.2',
      'rlvr.ray': '2.51.2',
      'rlvr.cuda': '12.8',
      'rlvr.python': '3.11',
      'rlvr.efa': 'aws-efa-installer 1.43.2',
    });
  });

  it('a flag that contradicts the lock is refused, naming both versions and the lock line; one that repeats it is taken', () => {
    const message = refusal(() => plan(THEIR_REPO, { TORCH_VERSION: '2.8.0', VLLM_VERSION: '0.10.2' }));
    expect(message).toContain(
      "--build-arg TORCH_VERSION=2.8.0: contradicts the trainer's lock: uv.lock:127 pins torch 2.9.0",
    );
    expect(message).toContain('uv lock --upgrade-package torch==2.8.0');
    expect(message).toContain(
      "--build-arg VLLM_VERSION=0.10.2: contradicts the trainer's lock: uv.lock:157 pins vllm 0.11.2",
    );
    // An empty TORCH_VERSION (keep the base's torch) is another version.
    expect(refusal(() => plan(THEIR_REPO, { TORCH_VERSION: '' }))).toContain("keeps the base image's torch");
    expect(arg(plan(THEIR_REPO, { TORCH_VERSION: '2.9.0' }), 'TORCH_VERSION').source).toEqual({
      kind: 'flag',
    });
  });

  it("the base's CUDA must be the torch wheel's: a CUDA 12.4 base for a cu128 torch is refused, a cu128 AWS DLC base taken (with its own EFA)", () => {
    expect(
      refusal(() => plan(THEIR_REPO, { BASE_IMAGE: 'nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04' })),
    ).toContain(
      'a CUDA 12.4 base, but the torch wheel is built for CUDA 12.8 (nvidia-cuda-runtime-cu12 12.8.90 (uv.lock:47))',
    );
    const dlc =
      '763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.8.0-gpu-py312-cu128-ubuntu22.04-sagemaker';
    const p = plan(THEIR_REPO, { BASE_IMAGE: dlc });
    expect(arg(p, 'EFA_INSTALLER_VERSION')).toMatchObject({ value: '', source: { kind: 'derived' } });
    expect(p.labels['rlvr.efa']).toBe('base image (AWS Deep Learning Container)');
  });

  it("a torch locked from PyTorch's cu126 index: that index, and a CUDA 12.6 base chosen for it", () => {
    const src = trainer({
      'pyproject.toml': '[project]\nname = "t"\nrequires-python = ">=3.10"\n',
      'uv.lock': lockWithTorch('2.7.1+cu126', 'https://download.pytorch.org/whl/cu126'),
    });
    const p = plan(src);
    expect(arg(p, 'TORCH_INDEX_URL').value).toBe('https://download.pytorch.org/whl/cu126');
    expect(arg(p, 'BASE_IMAGE')).toMatchObject({
      value: 'nvidia/cuda:12.6.3-cudnn-devel-ubuntu22.04',
      source: { kind: 'derived', from: "the torch wheel's CUDA 12.6 (torch 2.7.1+cu126)" },
    });
    expect(refusal(() => plan(src, { TORCH_INDEX_URL: 'https://download.pytorch.org/whl/cu128' }))).toContain(
      'torch comes from https://download.pytorch.org/whl/cu126',
    );
  });

  it("the image's Python satisfies requires-python: a 3.12-only project gets 3.12, a flag outside it is refused", () => {
    const src = trainer({ 'pyproject.toml': '[project]\nname = "t"\nrequires-python = ">=3.12"\n' });
    expect(arg(plan(src), 'PYTHON_VERSION')).toMatchObject({ value: '3.12', source: { kind: 'derived' } });
    expect(refusal(() => plan(THEIR_REPO, { PYTHON_VERSION: '3.12' }))).toContain(
      '--build-arg PYTHON_VERSION=3.12: the trainer requires Python >=3.11,<3.12 (pyproject.toml:3) and ==3.11.* (uv.lock:5)',
    );
  });

  it('without a lock, exact pins of its requirements; without pins, the Dockerfile defaults and nothing to check', () => {
    const src = trainer({ 'requirements.txt': 'torch==2.8.0\nray[default]==2.49.2\nvllm>=0.10\n' });
    const p = plan(src);
    expect(arg(p, 'TORCH_VERSION')).toMatchObject({
      value: '2.8.0',
      source: { kind: 'requirements', where: 'requirements.txt:1' },
    });
    expect(arg(p, 'RAY_VERSION').value).toBe('2.49.2');
    expect(arg(p, 'VLLM_VERSION').source).toEqual({ kind: 'dockerfile' });
    expect(refusal(() => plan(src, { RAY_VERSION: '2.51.2' }))).toContain(
      "contradicts the trainer's requirements: requirements.txt:2 pins ray 2.49.2",
    );
    const bare = plan(trainer({ 'requirements.txt': 'numpy\n' }));
    const versions = ['TORCH_VERSION', 'VLLM_VERSION', 'RAY_VERSION', 'PYTHON_VERSION', 'BASE_IMAGE'];
    expect(versions.map((v) => arg(bare, v).source.kind)).toEqual(versions.map(() => 'dockerfile'));
    // Neither nltk nor lm-eval among its requirements: no offline data fetched, none claimed in labels.
    expect(arg(bare, 'LM_EVAL_TASKS')).toMatchObject({ value: '', source: { kind: 'derived' } });
    expect(bare.labels['rlvr.lm-eval-tasks']).toBe('');
    expect(bare.checks.filter((c) => c.message.includes('pins it'))).toEqual([]);
  });

  it("a lock resolved for several platforms: the Linux x86_64 torch is the image's, a flag may name it", () => {
    const src = trainer({
      'pyproject.toml': '[project]\nname = "t"\nrequires-python = ">=3.11"\n',
      'uv.lock': [
        'version = 1',
        'requires-python = ">=3.11"',
        '',
        '[[package]]',
        'name = "torch"',
        'version = "2.7.0"',
        'source = { registry = "https://pypi.org/simple" }',
        'resolution-markers = ["sys_platform == \'darwin\'"]',
        '',
        '[[package]]',
        'name = "torch"',
        'version = "2.7.0+cu128"',
        'source = { registry = "https://download.pytorch.org/whl/cu128" }',
        "resolution-markers = [\"sys_platform == 'linux' and platform_machine == 'x86_64'\", \"sys_platform == 'win32'\"]",
        '',
      ].join('\n'),
    });
    const p = plan(src);
    expect(arg(p, 'TORCH_VERSION')).toEqual({
      name: 'TORCH_VERSION',
      value: '2.7.0+cu128',
      source: { kind: 'lock', where: 'uv.lock:12' },
    });
    expect(arg(p, 'TORCH_INDEX_URL').value).toBe('https://download.pytorch.org/whl/cu128');
    expect(arg(plan(src, { TORCH_VERSION: '2.7.0+cu128' }), 'TORCH_VERSION').source).toEqual({
      kind: 'flag',
    });
    // PEP 440 equality: 2.9 is 2.9.0.
    expect(arg(plan(THEIR_REPO, { TORCH_VERSION: '2.9' }), 'TORCH_VERSION').value).toBe('2.9');
  });

  it("reads a base's CUDA behind a mirror, a digest or a pytorch/pytorch tag; a newer CUDA base of the same major is taken", () => {
    expect(baseImageCuda('mirror.example:5000/nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04')).toBe('12.8');
    expect(baseImageCuda(`nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04@sha256:${'a'.repeat(64)}`)).toBe('12.8');
    expect(baseImageCuda('pytorch/pytorch:2.9.0-cuda12.8-cudnn9-devel')).toBe('12.8');
    expect(baseImageCuda('ubuntu:22.04')).toBeUndefined();
    const p = plan(THEIR_REPO, { BASE_IMAGE: 'nvidia/cuda:12.9.1-cudnn-devel-ubuntu22.04' });
    expect(p.checks.map((c) => c.message)).toContain(
      'CUDA 12.8: the torch wheel (nvidia-cuda-runtime-cu12 12.8.90 (uv.lock:47)) and the base (CUDA 12.9) agree',
    );
    expect(
      refusal(() => plan(THEIR_REPO, { BASE_IMAGE: 'nvidia/cuda:13.0.1-cudnn-devel-ubuntu22.04' })),
    ).toContain('a CUDA 13.0 base, but the torch wheel is built for CUDA 12.8');
  });

  it('an argument the Dockerfile does not declare is refused (a misspelling would be ignored by the build)', () => {
    expect(refusal(() => plan(THEIR_REPO, { VLLM_VERISON: '0.11.2' }))).toContain(
      '--build-arg VLLM_VERISON: the Dockerfile declares no ARG VLLM_VERISON',
    );
  });
});
