/**
 * The image's build arguments, decided before anything is built: the versions the trainer's lock pins
 * (torch, vLLM, Ray, the index torch comes from), the Python its project requires, a CUDA base that
 * agrees with the torch wheel's CUDA, and the Dockerfile's own defaults for the rest. A flag that
 * contradicts the lock is refused here (exit 2), naming both versions and the lock's line: a build that
 * would only fail after tens of minutes of CUDA, torch and vLLM layers never starts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { eq, satisfies, valid } from '@renovatebot/pep440';
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
  evaluateMarker,
  imageEnvironment,
  type MarkerEnvironment,
  type RequirementPins,
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
  return (
    /^\d{12}\.dkr\.ecr\.[^/]+\.amazonaws\.com(\.cn)?\/pytorch-training[:@]/.test(image) ||
    /^public\.ecr\.aws\/deep-learning-containers\/pytorch-training[:@]/.test(image)
  );
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

/**
 * The CUDA major.minor of a base image by its tag: `nvidia/cuda:12.8.1-…` (any registry in front), a
 * `-cu128-` tag (AWS DLC), `…-cuda12.8-…` (pytorch/pytorch); a digest after the tag is ignored.
 * Undefined when the name does not say.
 */
export function baseImageCuda(image: string): string | undefined {
  const withoutDigest = image.split('@')[0];
  const last = withoutDigest.split('/').pop()!;
  const colon = last.indexOf(':');
  if (colon < 0) return undefined;
  const [repo, tag] = [last.slice(0, colon), last.slice(colon + 1)];
  const nvidia = /^(\d+)\.(\d+)(?:\.\d+)?-/.exec(tag);
  if (repo === 'cuda' && /(^|\/)nvidia\/cuda:/.test(withoutDigest) && nvidia)
    return `${nvidia[1]}.${nvidia[2]}`;
  const named = /(?:^|[-_])cuda(\d+)\.(\d+)/.exec(tag);
  if (named) return `${named[1]}.${named[2]}`;
  return cudaOfTag(tag);
}

/** Versions compared as PEP 440 says, local parts (`+cu128`) aside: `2.9` is `2.9.0`. */
function sameVersion(a: string, b: string): boolean {
  const [pa, pb] = [a.split('+')[0], b.split('+')[0]];
  return valid(pa) && valid(pb) ? eq(pa, pb) : pa === pb;
}
const normalIndex = (url: string) =>
  /^https?:\/\/pypi\.org\/simple\/?$/.test(url) ? 'https://pypi.org/simple' : url.replace(/\/+$/, '');

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

/**
 * Whether a base of CUDA `base` serves a wheel built for `wheel`: the same major, and not older (the
 * wheel carries its own CUDA runtime; a newer base's driver requirement covers it).
 */
function cudaServes(base: string, wheel: string): boolean {
  const [bM, bm] = base.split('.').map(Number);
  const [wM, wm] = wheel.split('.').map(Number);
  return bM === wM && bm >= wm;
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

/** The pin the trainer states for a package on the image's platform: its lock's version, else its requirements'. */
function trainerPin(
  name: string,
  lock: UvLock | undefined,
  requirements: RequirementPins,
  env: MarkerEnvironment,
  flag: string | undefined,
  problems: Problem[],
): { version: string; where: string; kind: 'lock' | 'requirements'; index?: string } | undefined {
  if (lock) {
    const locked = lockedVersions(lock, name);
    // A lock resolved for several platforms holds a version per platform: the image's is the one
    // whose resolution markers hold on Linux x86_64 at the image's Python.
    const applies = (p: LockedPackage) => {
      try {
        return !p.markers || p.markers.some((m) => evaluateMarker(m, env));
      } catch {
        return true;
      }
    };
    let candidates = locked.length > 1 ? locked.filter(applies) : locked;
    if (candidates.length > 1 && flag !== undefined)
      candidates = candidates.filter((p) => sameVersion(p.version, flag));
    if (candidates.length > 1) {
      problems.push({
        where: path.basename(lock.file),
        message: `the lock holds ${candidates.length} versions of ${name} for Linux x86_64 (${candidates.map((p) => `${p.version} at line ${p.line}`).join(', ')}): the image takes one`,
        hint: `Pass the one for this image, e.g. --build-arg ${name === 'torch' ? 'TORCH' : name.toUpperCase()}_VERSION=${candidates[0].version}.`,
      });
      return undefined;
    }
    const p = candidates[0] ?? (locked.length ? locked[0] : undefined);
    if (!p) return undefined;
    return {
      version: p.version,
      where: lockLine(lock, p),
      kind: 'lock',
      ...(p.source.kind === 'registry' ? { index: normalIndex(p.source.value) } : {}),
    };
  }
  const pin = requirements.pins.find((p) => p.name === name);
  if (!pin) return undefined;
  // pip applies an index to every package: torch's is PyTorch's when a file names it.
  const pytorch = requirements.indexUrls.find((u) => /download\.pytorch\.org/.test(u));
  return {
    version: pin.version,
    where: `${path.basename(pin.file)}:${pin.line}`,
    kind: 'requirements',
    ...(name === 'torch' && pytorch ? { index: normalIndex(pytorch) } : {}),
  };
}

/**
 * The build arguments as they are decided, step by step: what the Dockerfile declares, the flags, the
 * value each step chose, and the problems and checks found on the way.
 */
class ArgChoices {
  readonly chosen = new Map<string, PlannedArg>();
  readonly problems: Problem[] = [];
  readonly checks: BuildCheck[] = [];

  constructor(
    readonly declared: readonly { name: string; value: string | undefined }[],
    readonly flags: Readonly<Record<string, string>>,
  ) {}

  declares(name: string): boolean {
    return this.declared.some((a) => a.name === name);
  }

  defaultOf(name: string): string | undefined {
    return this.declared.find((a) => a.name === name)?.value;
  }

  set(name: string, value: string, source: ArgSource): void {
    this.chosen.set(name, { name, value, source });
  }

  /** The value the build gets so far: the chosen one, else the Dockerfile's default, else empty. */
  value(name: string): string {
    return this.chosen.get(name)?.value ?? this.defaultOf(name) ?? '';
  }
}

/** Every `--build-arg`: taken as given when the Dockerfile declares it, a problem when it does not. */
function takeFlags(args: ArgChoices): void {
  for (const [name, value] of Object.entries(args.flags)) {
    if (!args.declares(name)) {
      args.problems.push({
        where: `--build-arg ${name}`,
        message: `the Dockerfile declares no ARG ${name}`,
        hint: `Its arguments: ${args.declared.map((a) => a.name).join(', ')}.`,
      });
    } else args.set(name, value, { kind: 'flag' });
  }
}

/** The project's requires-python specifiers (pyproject and lock), each with the line that states it. */
function requiresPythonSpecs(
  pyproject: Pyproject | undefined,
  lock: UvLock | undefined,
): { spec: string; where: string }[] {
  return [
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
}

/**
 * The image's Python. It comes first: the project's requires-python (pyproject and lock) decides it
 * unless a flag names one, and the lock's per-platform versions are read for it.
 */
function resolvePython(args: ArgChoices, pyproject: Pyproject | undefined, lock: UvLock | undefined): string {
  const { flags } = args;
  const python = flags.PYTHON_VERSION ?? args.defaultOf('PYTHON_VERSION') ?? '3.11';
  if (!args.declares('PYTHON_VERSION')) return python;
  const specs = requiresPythonSpecs(pyproject, lock);
  const fits = (v: string) => specs.every((s) => minorSatisfies(v, s.spec));
  const flag = flags.PYTHON_VERSION;
  const fallback = args.defaultOf('PYTHON_VERSION') ?? '3.11';
  if (flag !== undefined && !fits(flag)) {
    const bad = specs.filter((s) => !minorSatisfies(flag, s.spec));
    args.problems.push({
      where: `--build-arg PYTHON_VERSION=${flag}`,
      message: `the trainer requires Python ${bad.map((s) => `${s.spec} (${s.where})`).join(' and ')}`,
      hint: 'Drop the flag, or change requires-python and the lock.',
    });
    return python;
  }
  if (flag !== undefined || !specs.length) return python;
  const pick = [fallback, '3.12', '3.13', '3.11', '3.10', '3.9'].find(fits);
  if (!pick) {
    args.problems.push({
      where: specs.map((s) => s.where).join(', '),
      message: `no Python from 3.9 to 3.13 satisfies ${specs.map((s) => s.spec).join(' and ')}`,
      hint: 'Fix requires-python, or pass --build-arg PYTHON_VERSION=<x.y>.',
    });
    return python;
  }
  if (pick !== fallback)
    args.set('PYTHON_VERSION', pick, {
      kind: 'derived',
      from: `requires-python ${specs.map((s) => s.spec).join(', ')}`,
    });
  args.checks.push({
    ok: true,
    message: `Python ${pick} satisfies ${specs.map((s) => `${s.spec} (${s.where})`).join(' and ')}`,
  });
  return pick;
}

/**
 * torch, vLLM and Ray: the trainer's pins, which a flag may repeat but not contradict. Returns the
 * index the trainer's torch comes from, when its pins name one.
 */
function resolveMainEnvPins(
  args: ArgChoices,
  lock: UvLock | undefined,
  requirements: RequirementPins,
  env: MarkerEnvironment,
): string | undefined {
  let torchIndex: string | undefined;
  for (const pkg of MAIN_ENV_PACKAGES) {
    if (!args.declares(pkg.arg)) continue;
    const flag = args.flags[pkg.arg];
    const pin = trainerPin(pkg.name, lock, requirements, env, flag, args.problems);
    if (!pin) continue;
    if (pkg.name === 'torch' && pin.index) torchIndex = pin.index;
    if (flag !== undefined && (flag === '' || !sameVersion(flag, pin.version))) {
      args.problems.push({
        where: `--build-arg ${pkg.arg}=${flag}`,
        message: `contradicts the trainer's ${pin.kind === 'lock' ? 'lock' : 'requirements'}: ${pin.where} pins ${pkg.name} ${pin.version}${flag === '' ? " (an empty value keeps the base image's torch, another version)" : ''}`,
        hint:
          pin.kind === 'lock'
            ? `Drop the flag (the image follows the lock), or change the lock: uv lock --upgrade-package ${pkg.name}${flag ? `==${flag}` : ''}.`
            : `Drop the flag, or change the pin in ${pin.where.split(':')[0]}.`,
      });
      continue;
    }
    args.set(
      pkg.arg,
      flag ?? pin.version,
      flag !== undefined ? { kind: 'flag' } : { kind: pin.kind, where: pin.where },
    );
    args.checks.push({ ok: true, message: `${pkg.name} ${pin.version} as ${pin.where} pins it` });
  }
  return torchIndex;
}

/** TORCH_INDEX_URL: the index of the trainer's torch, which a flag may not contradict. */
function resolveTorchIndex(args: ArgChoices, torchIndex: string | undefined): void {
  if (!torchIndex || !args.declares('TORCH_INDEX_URL')) return;
  const flag = args.flags.TORCH_INDEX_URL;
  if (flag !== undefined && normalIndex(flag) !== torchIndex) {
    args.problems.push({
      where: `--build-arg TORCH_INDEX_URL=${flag}`,
      message: `contradicts the trainer's pins: torch comes from ${torchIndex} (${args.chosen.get('TORCH_VERSION')?.source.kind === 'lock' ? 'its lock' : 'its requirements'})`,
      hint: 'Drop the flag: the torch wheel is the one the trainer locked.',
    });
  } else if (flag === undefined) {
    const pinned = args.chosen.get('TORCH_VERSION')?.source;
    args.set('TORCH_INDEX_URL', torchIndex, {
      kind: 'derived',
      from: `the index of torch in ${pinned && 'where' in pinned ? pinned.where : "the trainer's pins"}`,
    });
  }
}

/**
 * NLTK_DATA_PACKAGES and LM_EVAL_TASKS. Offline data is fetched with the trainer's own nltk and lm_eval
 * (lm_eval brings nltk with it): nothing to fetch, and nothing claimed in the labels, when it depends on
 * neither.
 */
function resolveOfflineData(
  args: ArgChoices,
  trainer: {
    src: string | undefined;
    lock: UvLock | undefined;
    requirements: RequirementPins;
    pyproject: Pyproject | undefined;
  },
): void {
  const { src, lock, requirements, pyproject } = trainer;
  const named = (dist: string) =>
    lock
      ? lockedVersions(lock, dist).length > 0
      : requirements.names.includes(dist) || Boolean(pyproject?.dependencies?.includes(dist));
  for (const [arg, dists] of [
    ['NLTK_DATA_PACKAGES', ['nltk', 'lm-eval']],
    ['LM_EVAL_TASKS', ['lm-eval']],
  ] as const) {
    if (args.declares(arg) && args.flags[arg] === undefined && src && !dists.some(named)) {
      args.set(arg, '', { kind: 'derived', from: `the trainer does not depend on ${dists.join(' or ')}` });
    }
  }
}

/**
 * BASE_IMAGE against the torch wheel's CUDA: our own default base follows the wheel's CUDA, a flagged
 * one must serve it. Returns the wheel's CUDA (undefined without a torch version).
 */
function resolveBaseImage(
  args: ArgChoices,
  lock: UvLock | undefined,
): { cuda?: string; from: string } | undefined {
  const torchVersion = args.value('TORCH_VERSION');
  const base = { value: args.value('BASE_IMAGE'), flagged: args.flags.BASE_IMAGE !== undefined };
  const cuda = torchVersion ? torchCuda(torchVersion, args.value('TORCH_INDEX_URL'), lock) : undefined;
  if (!cuda?.cuda || !args.declares('BASE_IMAGE')) return cuda;
  const baseCuda = baseImageCuda(base.value);
  const agree = `CUDA ${cuda.cuda}: the torch wheel (${cuda.from}) and the base${baseCuda && baseCuda !== cuda.cuda ? ` (CUDA ${baseCuda})` : ''} agree`;
  const exact = CUDA_BASES[cuda.cuda];
  if (!base.flagged && baseCuda !== undefined && baseCuda !== cuda.cuda && exact) {
    // Our own choice of base: the one of the wheel's CUDA.
    args.set('BASE_IMAGE', exact, {
      kind: 'derived',
      from: `the torch wheel's CUDA ${cuda.cuda} (${cuda.from})`,
    });
    args.checks.push({
      ok: true,
      message: `CUDA ${cuda.cuda}: the torch wheel (${cuda.from}) and the base agree`,
    });
  } else if (baseCuda === undefined) {
    args.checks.push({
      ok: false,
      message: `the base ${base.value} does not say its CUDA; the torch wheel is CUDA ${cuda.cuda} (${cuda.from})`,
    });
  } else if (cudaServes(baseCuda, cuda.cuda)) {
    args.checks.push({ ok: true, message: agree });
  } else {
    args.problems.push({
      where: base.flagged ? `--build-arg BASE_IMAGE=${base.value}` : 'BASE_IMAGE',
      message: `a CUDA ${baseCuda} base, but the torch wheel is built for CUDA ${cuda.cuda} (${cuda.from})`,
      hint: exact
        ? `Use a CUDA ${cuda.cuda} base, e.g. ${exact}${base.flagged ? ', or drop the flag' : ''}.`
        : `Pass --build-arg BASE_IMAGE=<a CUDA ${cuda.cuda} image>.`,
    });
  }
  return cuda;
}

/** EFA: an AWS deep-learning base carries its own; the installer step is then skipped. */
function resolveEfaInstaller(args: ArgChoices): void {
  if (
    args.declares('EFA_INSTALLER_VERSION') &&
    isDlcBase(args.value('BASE_IMAGE')) &&
    args.flags.EFA_INSTALLER_VERSION === undefined
  ) {
    args.set('EFA_INSTALLER_VERSION', '', {
      kind: 'derived',
      from: 'the AWS deep-learning base has the EFA stack',
    });
  }
}

/** The lock's pins of torch, vLLM, Ray and what they depend on, as constraint lines (none without a lock). */
function mainEnvConstraints(lock: UvLock | undefined): string[] {
  return lock
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
}

/** `main-constraints.txt`: its lines under a comment that says where they come from. */
function mainConstraintsFile(lock: UvLock | undefined, lines: readonly string[]): string {
  return lines.length
    ? `# The trainer's lock (${path.basename(lock!.file)}): torch, vLLM, Ray and what they depend on.\n${lines.join('\n')}\n`
    : lock
      ? `# The trainer's lock (${path.basename(lock.file)}) pins none of torch, vLLM and Ray: the build arguments' versions.\n`
      : "# No uv.lock: the main environment takes the build arguments' versions.\n";
}

/** What the image will say it has: base, torch, CUDA, vLLM, Ray, Python, EFA and its offline data. */
function imageLabels(
  args: ArgChoices,
  planned: readonly PlannedArg[],
  cuda: string | undefined,
): Record<string, string> {
  const value = (name: string) => args.value(name);
  const [finalBase, torchVersion] = [value('BASE_IMAGE'), value('TORCH_VERSION')];
  const efaVersion = planned.find((a) => a.name === 'EFA_INSTALLER_VERSION')?.value;
  return {
    ...(finalBase ? { 'rlvr.base-image': finalBase } : {}),
    ...(torchVersion ? { 'rlvr.torch': torchVersion } : {}),
    ...(cuda ? { 'rlvr.cuda': cuda } : {}),
    ...(value('VLLM_VERSION') ? { 'rlvr.vllm': value('VLLM_VERSION') } : {}),
    ...(value('RAY_VERSION') ? { 'rlvr.ray': value('RAY_VERSION') } : {}),
    ...(value('PYTHON_VERSION') ? { 'rlvr.python': value('PYTHON_VERSION') } : {}),
    [EFA_LABEL]: isDlcBase(finalBase)
      ? 'base image (AWS Deep Learning Container)'
      : efaVersion
        ? `aws-efa-installer ${efaVersion}`
        : 'none',
    ...(args.declares('NLTK_DATA_PACKAGES') ? { [NLTK_DATA_LABEL]: value('NLTK_DATA_PACKAGES') } : {}),
    ...(args.declares('LM_EVAL_TASKS') ? { [LM_EVAL_TASKS_LABEL]: value('LM_EVAL_TASKS') } : {}),
  };
}

/** The plan from the decided arguments: every declared one in the Dockerfile's order, the constraints, the labels. */
function assemblePlan(args: ArgChoices, lock: UvLock | undefined, cuda: string | undefined): ImageBuildPlan {
  const planned: PlannedArg[] = args.declared.map(
    (a) => args.chosen.get(a.name) ?? { name: a.name, value: a.value ?? '', source: { kind: 'dockerfile' } },
  );
  const mainConstraints = mainEnvConstraints(lock);
  if (lock && mainConstraints.length) {
    args.checks.push({
      ok: true,
      message: `the main environment (torch, vLLM, Ray) is held to the lock's ${mainConstraints.length} pins of those and what they depend on`,
    });
  }
  return {
    args: planned,
    dependencyFiles: [],
    mainConstraints: mainConstraintsFile(lock, mainConstraints),
    checks: args.checks,
    labels: imageLabels(args, planned, cuda),
  };
}

/**
 * The build's arguments and checks. Throws a ProblemsError (exit 2) when a flag contradicts the lock,
 * the base's CUDA is not the torch wheel's, or the Python does not satisfy the project: nothing is built.
 */
export function planImageBuild(input: ImageBuildPlanInput): ImageBuildPlan {
  const args = new ArgChoices(dockerfileArgs(input.dockerfile), input.flags);
  const src = input.trainerSrc;
  const pyproject: Pyproject | undefined = src ? readPyproject(src) : undefined;
  const lock = src ? readUvLock(src) : undefined;
  takeFlags(args);
  const python = resolvePython(args, pyproject, lock);
  const env = imageEnvironment(python);
  const requirements: RequirementPins =
    src && !lock ? readRequirementPins(src, env) : { pins: [], indexUrls: [], names: [] };
  const torchIndex = resolveMainEnvPins(args, lock, requirements, env);
  resolveTorchIndex(args, torchIndex);
  resolveOfflineData(args, { src, lock, requirements, pyproject });
  const cuda = resolveBaseImage(args, lock);
  resolveEfaInstaller(args);
  if (args.problems.length > 0) throw new ProblemsError('The image would not build as asked', args.problems);
  return assemblePlan(args, lock, cuda?.cuda);
}
