/**
 * The image's build arguments, decided before anything is built: the versions the trainer's lock pins
 * (torch, vLLM, Ray, the index torch comes from), the Python its project requires, a CUDA base that
 * agrees with the torch wheel's CUDA, and the Dockerfile's own defaults for the rest. A flag that
 * contradicts the lock is refused here (exit 2), naming both versions and the lock's line: a build that
 * would only fail after tens of minutes of CUDA, torch and vLLM layers never starts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { satisfies } from '@renovatebot/pep440';
import { ProblemsError, type Problem } from '../errors';
import {
  constraintLines,
  lockClosure,
  lockedVersions,
  readPyproject,
  readRequirementPins,
  readUvLock,
  type LockedPackage,
  type Pyproject,
  type RequirementPin,
  type UvLock,
} from '../python';
import { LM_EVAL_TASKS_LABEL, NLTK_DATA_LABEL } from './offline-data';

/** Where a build argument's value came from. */
export type ArgSource =
  | { readonly kind: 'lock'; readonly where: string }
  | { readonly kind: 'requirements'; readonly where: string }
  | { readonly kind: 'flag' }
  | { readonly kind: 'dockerfile' }
  | { readonly kind: 'derived'; readonly from: string };

/** For the plan: `uv.lock:127`, `flag --build-arg`, `Dockerfile default`, or what it was derived from. */
export function describeArgSource(source: ArgSource): string {
  switch (source.kind) {
    case 'lock':
    case 'requirements':
      return source.where;
    case 'flag':
      return 'flag --build-arg';
    case 'dockerfile':
      return 'Dockerfile default';
    case 'derived':
      return source.from;
  }
}

export interface PlannedArg {
  readonly name: string;
  readonly value: string;
  readonly source: ArgSource;
}

export interface BuildCheck {
  readonly ok: boolean;
  readonly message: string;
}

export interface ImageBuildPlan {
  /** Every argument the Dockerfile declares, in its order, with the value the build gets. */
  readonly args: readonly PlannedArg[];
  /** The trainer's dependency files that go into the image (relative to its folder). */
  readonly dependencyFiles: readonly string[];
  /** `main-constraints.txt`: the lock's pins of what the main environment's own step installs. */
  readonly mainConstraints: string;
  /** What was checked (lock against arguments, CUDA, Python), each with its verdict. */
  readonly checks: readonly BuildCheck[];
  /** What the image will say it has, as labels (`rlvr.torch`, `rlvr.cuda`, `rlvr.efa`, …). */
  readonly labels: Readonly<Record<string, string>>;
}

/** The packages the Dockerfile's step 2 installs itself, by the argument that holds each one's version. */
const MAIN_ENV_PACKAGES = [
  { arg: 'TORCH_VERSION', name: 'torch', extras: [] as string[] },
  { arg: 'VLLM_VERSION', name: 'vllm', extras: [] as string[] },
  { arg: 'RAY_VERSION', name: 'ray', extras: ['default'] },
] as const;

/** Full nvidia/cuda tags for a CUDA major.minor (cuDNN devel, Ubuntu 22.04): the default base per torch CUDA. */
const CUDA_BASES: Readonly<Record<string, string>> = {
  '12.4': 'nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04',
  '12.6': 'nvidia/cuda:12.6.3-cudnn-devel-ubuntu22.04',
  '12.8': 'nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04',
  '12.9': 'nvidia/cuda:12.9.1-cudnn-devel-ubuntu22.04',
  '13.0': 'nvidia/cuda:13.0.1-cudnn-devel-ubuntu22.04',
};

/** AWS Deep Learning Containers' PyTorch training images carry the EFA stack (libfabric, aws-ofi-nccl). */
export function isDlcBase(image: string): boolean {
  return /^\d{12}\.dkr\.ecr\.[^/]+\.amazonaws\.com(\.cn)?\/pytorch-training[:@]/.test(image);
}

/** `ARG NAME=default` lines of a Dockerfile (quotes removed), in order; the first declaration wins. */
export function dockerfileArgs(text: string): { name: string; value: string | undefined }[] {
  const out: { name: string; value: string | undefined }[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*ARG\s+([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?\s*$/.exec(line);
    if (!m || out.some((a) => a.name === m[1])) continue;
    const raw = m[2]?.trim();
    out.push({ name: m[1], value: raw?.replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1') });
  }
  return out;
}

/** `12.8` from `+cu128`, `/whl/cu128`, `cu128`; undefined for anything else. */
function cudaOfTag(text: string): string | undefined {
  const m = /(?:^|[+/\-_])cu(\d{2,3})(?:$|[/\-_.])/.exec(text);
  if (!m) return undefined;
  const digits = m[1];
  return digits.length === 3 ? `${digits.slice(0, 2)}.${digits[2]}` : `${digits[0]}.${digits[1]}`;
}

/** The CUDA major.minor of a base image: `nvidia/cuda:12.8.1-…`, or a `-cu128-` tag (AWS DLC). */
export function baseImageCuda(image: string): string | undefined {
  const tag = image.includes('@') ? '' : (image.split('/').pop()!.split(':')[1] ?? '');
  const cuda = /^(\d+)\.(\d+)(?:\.\d+)?-/.exec(tag);
  if (/(^|\/)nvidia\/cuda$/.test(image.split(':')[0]) && cuda) return `${cuda[1]}.${cuda[2]}`;
  return cudaOfTag(tag);
}

const stripLocal = (v: string) => v.split('+')[0];
const registryIndex = (url: string) =>
  /^https?:\/\/pypi\.org\/simple\/?$/.test(url) ? 'https://pypi.org/simple' : url;

/** The torch wheel's CUDA: its local version, its index, else the lock's CUDA runtime package. */
function torchCuda(
  torchVersion: string,
  indexUrl: string,
  lock: UvLock | undefined,
): { cuda?: string; from: string } {
  if (/\+cpu$/.test(torchVersion) || /\/cpu\/?$/.test(indexUrl)) return { from: 'a CPU build' };
  const local = cudaOfTag(torchVersion.includes('+') ? `+${torchVersion.split('+')[1]}` : '');
  if (local) return { cuda: local, from: `torch ${torchVersion}` };
  const fromIndex = cudaOfTag(indexUrl);
  if (fromIndex) return { cuda: fromIndex, from: `the index ${indexUrl}` };
  for (const name of ['nvidia-cuda-runtime-cu12', 'nvidia-cuda-runtime-cu13', 'nvidia-cuda-runtime']) {
    const [p] = lock ? lockedVersions(lock, name) : [];
    const m = p && /^(\d+)\.(\d+)/.exec(p.version);
    if (m) return { cuda: `${m[1]}.${m[2]}`, from: `${p.name} ${p.version} (${lockLine(lock!, p)})` };
  }
  return { from: 'nothing that names it' };
}

function lockLine(lock: UvLock, p: LockedPackage): string {
  return `${path.basename(lock.file)}:${p.line}`;
}

/** Whether some release of `minor` (e.g. 3.11) satisfies a requires-python specifier. */
function minorSatisfies(minor: string, spec: string): boolean {
  for (let patch = 0; patch <= 40; patch++) if (satisfies(`${minor}.${patch}`, spec)) return true;
  return false;
}

function lineOf(file: string, pattern: RegExp): number {
  const i = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .findIndex((l) => pattern.test(l));
  return i + 1;
}

/** The label that says what the image has for EFA (`none` when nothing). */
export const EFA_LABEL = 'rlvr.efa';

export interface ImageBuildPlanInput {
  /** The Dockerfile's text. */
  readonly dockerfile: string;
  /** The trainer's folder (its dependency files), when the image is built for one. */
  readonly trainerSrc?: string;
  /** `--build-arg` values. */
  readonly flags: Readonly<Record<string, string>>;
}

/** The pins the trainer states for a package: its lock's version, else an exact pin in its requirements. */
function trainerPin(
  name: string,
  lock: UvLock | undefined,
  pins: readonly RequirementPin[],
  problems: Problem[],
): { version: string; where: string; kind: 'lock' | 'requirements'; index?: string } | undefined {
  if (lock) {
    const locked = lockedVersions(lock, name);
    if (locked.length > 1) {
      problems.push({
        where: path.basename(lock.file),
        message: `the lock holds ${locked.length} versions of ${name} (${locked.map((p) => `${p.version} at line ${p.line}`).join(', ')}), one per platform: the image takes one`,
        hint: `Pin one version of ${name} for Linux in pyproject.toml, or pass --build-arg with the version for this image.`,
      });
      return undefined;
    }
    const [p] = locked;
    if (p) {
      return {
        version: p.version,
        where: lockLine(lock, p),
        kind: 'lock',
        ...(p.source.kind === 'registry' ? { index: registryIndex(p.source.value) } : {}),
      };
    }
    return undefined;
  }
  const pin = pins.find((p) => p.name === name);
  return pin
    ? {
        version: pin.version,
        where: `${path.basename(pin.file)}:${pin.line}`,
        kind: 'requirements',
        ...(pin.indexUrl ? { index: pin.indexUrl } : {}),
      }
    : undefined;
}

/**
 * The build's arguments and checks. Throws a ProblemsError (exit 2) when a flag contradicts the lock,
 * the base's CUDA is not the torch wheel's, or the Python does not satisfy the project: nothing is built.
 */
export function planImageBuild(input: ImageBuildPlanInput): ImageBuildPlan {
  const declared = dockerfileArgs(input.dockerfile);
  const flags = input.flags;
  const problems: Problem[] = [];
  const checks: BuildCheck[] = [];
  const src = input.trainerSrc;
  const pyproject: Pyproject | undefined = src ? readPyproject(src) : undefined;
  const lock = src ? readUvLock(src) : undefined;
  const pins = src && !lock ? readRequirementPins(src) : [];
  const chosen = new Map<string, PlannedArg>();
  const declares = (name: string) => declared.some((a) => a.name === name);
  const defaultOf = (name: string) => declared.find((a) => a.name === name)?.value;
  const set = (name: string, value: string, source: ArgSource) => chosen.set(name, { name, value, source });

  for (const [name, value] of Object.entries(flags)) {
    if (!declares(name)) {
      problems.push({
        where: `--build-arg ${name}`,
        message: `the Dockerfile declares no ARG ${name}`,
        hint: `Its arguments: ${declared.map((a) => a.name).join(', ')}.`,
      });
    } else set(name, value, { kind: 'flag' });
  }

  // torch, vLLM and Ray: the trainer's pins, which a flag may repeat but not contradict.
  let torchIndex: string | undefined;
  for (const pkg of MAIN_ENV_PACKAGES) {
    if (!declares(pkg.arg)) continue;
    const pin = trainerPin(pkg.name, lock, pins, problems);
    if (!pin) continue;
    if (pkg.name === 'torch' && pin.index) torchIndex = pin.index;
    const flag = flags[pkg.arg];
    if (flag !== undefined && stripLocal(flag) !== stripLocal(pin.version)) {
      problems.push({
        where: `--build-arg ${pkg.arg}=${flag}`,
        message: `contradicts the trainer's ${pin.kind === 'lock' ? 'lock' : 'requirements'}: ${pin.where} pins ${pkg.name} ${pin.version}${flag === '' ? " (an empty value keeps the base image's torch, another version)" : ''}`,
        hint:
          pin.kind === 'lock'
            ? `Drop the flag (the image follows the lock), or change the lock: uv lock --upgrade-package ${pkg.name}${flag ? `==${flag}` : ''}.`
            : `Drop the flag, or change the pin in ${pin.where.split(':')[0]}.`,
      });
      continue;
    }
    set(
      pkg.arg,
      flag ?? pin.version,
      flag !== undefined ? { kind: 'flag' } : { kind: pin.kind, where: pin.where },
    );
    checks.push({ ok: true, message: `${pkg.name} ${pin.version} as ${pin.where} pins it` });
  }
  if (torchIndex && declares('TORCH_INDEX_URL')) {
    const flag = flags.TORCH_INDEX_URL;
    if (flag !== undefined && registryIndex(flag) !== torchIndex) {
      problems.push({
        where: `--build-arg TORCH_INDEX_URL=${flag}`,
        message: `contradicts the trainer's pins: torch comes from ${torchIndex} (${chosen.get('TORCH_VERSION')?.source.kind === 'lock' ? 'its lock' : 'its requirements'})`,
        hint: 'Drop the flag: the torch wheel is the one the trainer locked.',
      });
    } else if (flag === undefined) {
      const pinned = chosen.get('TORCH_VERSION')?.source;
      set('TORCH_INDEX_URL', torchIndex, {
        kind: 'derived',
        from: `the index of torch in ${pinned && 'where' in pinned ? pinned.where : "the trainer's pins"}`,
      });
    }
  }

  // Python: the project's requires-python (pyproject and lock) decides it unless a flag names one.
  if (declares('PYTHON_VERSION')) {
    const specs = [
      ...(pyproject?.requiresPython
        ? [
            {
              spec: pyproject.requiresPython,
              where: `pyproject.toml:${lineOf(pyproject.file, /^\s*requires-python\s*=/)}`,
            },
          ]
        : []),
      ...(lock?.requiresPython
        ? [{ spec: lock.requiresPython, where: `uv.lock:${lineOf(lock.file, /^requires-python\s*=/)}` }]
        : []),
    ];
    const fits = (v: string) => specs.every((s) => minorSatisfies(v, s.spec));
    const flag = flags.PYTHON_VERSION;
    const fallback = defaultOf('PYTHON_VERSION') ?? '3.11';
    if (flag !== undefined && !fits(flag)) {
      const bad = specs.filter((s) => !minorSatisfies(flag, s.spec));
      problems.push({
        where: `--build-arg PYTHON_VERSION=${flag}`,
        message: `the trainer requires Python ${bad.map((s) => `${s.spec} (${s.where})`).join(' and ')}`,
        hint: 'Drop the flag, or change requires-python and the lock.',
      });
    } else if (flag === undefined && specs.length) {
      const pick = [fallback, '3.12', '3.13', '3.11', '3.10', '3.9'].find(fits);
      if (!pick) {
        problems.push({
          where: specs.map((s) => s.where).join(', '),
          message: `no Python from 3.9 to 3.13 satisfies ${specs.map((s) => s.spec).join(' and ')}`,
          hint: 'Fix requires-python, or pass --build-arg PYTHON_VERSION=<x.y>.',
        });
      } else {
        if (pick !== fallback)
          set('PYTHON_VERSION', pick, {
            kind: 'derived',
            from: `requires-python ${specs.map((s) => s.spec).join(', ')}`,
          });
        checks.push({
          ok: true,
          message: `Python ${pick} satisfies ${specs.map((s) => `${s.spec} (${s.where})`).join(' and ')}`,
        });
      }
    }
  }

  // CUDA: the torch wheel's against the base image's.
  const value = (name: string) => chosen.get(name)?.value ?? defaultOf(name) ?? '';
  const torchVersion = value('TORCH_VERSION');
  const base = { value: value('BASE_IMAGE'), flagged: flags.BASE_IMAGE !== undefined };
  const cuda = torchVersion ? torchCuda(torchVersion, value('TORCH_INDEX_URL'), lock) : undefined;
  if (cuda?.cuda && declares('BASE_IMAGE')) {
    const baseCuda = baseImageCuda(base.value);
    if (base.flagged) {
      if (baseCuda === undefined) {
        checks.push({
          ok: false,
          message: `the base ${base.value} does not say its CUDA; the torch wheel is CUDA ${cuda.cuda} (${cuda.from})`,
        });
      } else if (baseCuda !== cuda.cuda) {
        problems.push({
          where: `--build-arg BASE_IMAGE=${base.value}`,
          message: `a CUDA ${baseCuda} base, but the torch wheel is built for CUDA ${cuda.cuda} (${cuda.from})`,
          hint: CUDA_BASES[cuda.cuda]
            ? `Use a CUDA ${cuda.cuda} base, e.g. ${CUDA_BASES[cuda.cuda]}, or drop the flag.`
            : `Use a CUDA ${cuda.cuda} base.`,
        });
      } else
        checks.push({
          ok: true,
          message: `CUDA ${cuda.cuda}: the torch wheel (${cuda.from}) and the base agree`,
        });
    } else if (baseCuda !== cuda.cuda) {
      const fitting = CUDA_BASES[cuda.cuda];
      if (!fitting) {
        problems.push({
          where: 'BASE_IMAGE',
          message: `the torch wheel is built for CUDA ${cuda.cuda} (${cuda.from}) and there is no known CUDA ${cuda.cuda} base`,
          hint: `Pass --build-arg BASE_IMAGE=<a CUDA ${cuda.cuda} image>.`,
        });
      } else {
        set('BASE_IMAGE', fitting, {
          kind: 'derived',
          from: `the torch wheel's CUDA ${cuda.cuda} (${cuda.from})`,
        });
        checks.push({
          ok: true,
          message: `CUDA ${cuda.cuda}: the torch wheel (${cuda.from}) and the base agree`,
        });
      }
    } else
      checks.push({
        ok: true,
        message: `CUDA ${cuda.cuda}: the torch wheel (${cuda.from}) and the base agree`,
      });
  }

  // EFA: an AWS deep-learning base carries its own; the installer step is then skipped.
  const finalBase = value('BASE_IMAGE');
  if (
    declares('EFA_INSTALLER_VERSION') &&
    isDlcBase(finalBase) &&
    flags.EFA_INSTALLER_VERSION === undefined
  ) {
    set('EFA_INSTALLER_VERSION', '', {
      kind: 'derived',
      from: 'the AWS deep-learning base has the EFA stack',
    });
  }

  if (problems.length > 0) throw new ProblemsError('The image would not build as asked', problems);

  const args: PlannedArg[] = declared.map(
    (a) => chosen.get(a.name) ?? { name: a.name, value: a.value ?? '', source: { kind: 'dockerfile' } },
  );
  const mainConstraints = lock
    ? constraintLines(
        lockClosure(
          lock,
          MAIN_ENV_PACKAGES.filter((p) => lockedVersions(lock, p.name).length).map((p) => ({
            name: p.name,
            extras: [...p.extras],
          })),
        ),
      )
    : [];
  if (lock && mainConstraints.length) {
    checks.push({
      ok: true,
      message: `the main environment (torch, vLLM, Ray) is held to the lock's ${mainConstraints.length} pins of those and what they depend on`,
    });
  }
  const efaVersion = args.find((a) => a.name === 'EFA_INSTALLER_VERSION')?.value;
  const labels: Record<string, string> = {
    ...(finalBase ? { 'rlvr.base-image': finalBase } : {}),
    ...(torchVersion ? { 'rlvr.torch': torchVersion } : {}),
    ...(cuda?.cuda ? { 'rlvr.cuda': cuda.cuda } : {}),
    ...(value('VLLM_VERSION') ? { 'rlvr.vllm': value('VLLM_VERSION') } : {}),
    ...(value('RAY_VERSION') ? { 'rlvr.ray': value('RAY_VERSION') } : {}),
    ...(value('PYTHON_VERSION') ? { 'rlvr.python': value('PYTHON_VERSION') } : {}),
    [EFA_LABEL]: isDlcBase(finalBase)
      ? 'base image (AWS Deep Learning Container)'
      : efaVersion
        ? `aws-efa-installer ${efaVersion}`
        : 'none',
    ...(declares('NLTK_DATA_PACKAGES') ? { [NLTK_DATA_LABEL]: value('NLTK_DATA_PACKAGES') } : {}),
    ...(declares('LM_EVAL_TASKS') ? { [LM_EVAL_TASKS_LABEL]: value('LM_EVAL_TASKS') } : {}),
  };
  return {
    args,
    dependencyFiles: [],
    mainConstraints: mainConstraints.length
      ? `# The trainer's lock (${path.basename(lock!.file)}): torch, vLLM, Ray and what they depend on.\n${mainConstraints.join('\n')}\n`
      : lock
        ? `# The trainer's lock (${path.basename(lock.file)}) pins none of torch, vLLM and Ray: the build arguments' versions.\n`
        : "# No uv.lock: the main environment takes the build arguments' versions.\n",
    checks,
    labels,
  };
}
