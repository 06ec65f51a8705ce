/**
 * CUDA forward compatibility, decided when the container starts. The image's CUDA needs a host driver at
 * least as new as it (570.26 for CUDA 12.8); the image carries NVIDIA's cuda-compat package (a newer
 * user-mode `libcuda` in /usr/local/cuda/compat), which lets it run on an older driver — on datacenter
 * GPUs and certain driver branches only. It is put first on LD_LIBRARY_PATH only when the host's driver
 * is older than it: with a driver as new or newer, the compat library would be the older one and CUDA
 * would refuse the mismatch. The image sets NVIDIA_DISABLE_REQUIRE=1, so the NVIDIA runtime never
 * refuses the container: this is where the driver is judged, and the note says what was found.
 *
 * The entrypoint's own code: node built-ins only (it is bundled into the image).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { compareDriverVersions, cudaMajorMinor, minimumDriverForCuda } from '../job-options';

/** Where cuda-compat puts its libraries (`/usr/local/cuda` is the base's CUDA). */
export const CUDA_COMPAT_DIR = '/usr/local/cuda/compat';

/**
 * The kernel module's version from `/proc/driver/nvidia/version`
 * (`NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 …`, or `… Open Kernel Module
 * for x86_64  570.124.06 …`); undefined when the text does not say.
 */
export function parseDriverVersion(text: string): string | undefined {
  const line = text.split('\n').find((l) => l.startsWith('NVRM version:'));
  const m = line && /\s(\d+\.\d+(?:\.\d+)*)(?=\s|$)/.exec(line);
  return m ? m[1] : undefined;
}

export interface CudaCompatInput {
  /** The host's driver; undefined when there is none (no `/proc/driver/nvidia/version`). */
  readonly driverVersion: string | undefined;
  /** The compat library's driver version (`libcuda.so.1` → `libcuda.so.<version>`); undefined without one. */
  readonly compatDriverVersion: string | undefined;
  /** The image's CUDA (`12.8.1`: the base's CUDA_VERSION), to say what an old driver means without compat. */
  readonly imageCuda?: string;
}

export interface CudaCompatDecision {
  readonly enable: boolean;
  readonly reason: string;
}

const SUPPORT =
  'NVIDIA supports forward compatibility on datacenter GPUs and certain driver branches only; elsewhere CUDA fails to start (error 804)';

/** Whether to put the compat library first, and why, in words for the job's log. Pure. */
export function decideCudaCompat(input: CudaCompatInput): CudaCompatDecision {
  const { driverVersion: driver, compatDriverVersion: compat } = input;
  const cuda = cudaMajorMinor(input.imageCuda);
  const needs = minimumDriverForCuda(cuda);
  const cudaNeeds = cuda && needs ? `CUDA ${cuda} needs ≥ ${needs}` : undefined;
  if (driver === undefined) {
    return {
      enable: false,
      reason:
        'no NVIDIA driver on this host (no /proc/driver/nvidia/version): no GPU, nothing to make compatible',
    };
  }
  if (compat === undefined) {
    if (cuda && needs && compareDriverVersions(driver, needs) < 0) {
      return {
        enable: false,
        reason: `host driver ${driver} is older than the image's CUDA ${cuda} needs (≥ ${needs}) and the image has no forward-compatibility library (cuda-compat): the job will likely fail when CUDA starts ("CUDA driver version is insufficient for CUDA runtime version"); run it on a host with a driver ≥ ${needs}, or build the image with cuda-compat`,
      };
    }
    return {
      enable: false,
      reason: cudaNeeds
        ? `host driver ${driver} serves the image's CUDA ${cuda} (${cudaNeeds}); the image has no forward-compatibility library, none needed`
        : `host driver ${driver}; the image has no forward-compatibility library and does not say its CUDA, so whether the driver serves it is not known`,
    };
  }
  const order = compareDriverVersions(driver, compat);
  // Older than the library but new enough for the image's CUDA: the host's driver serves it, and
  // compatibility within one driver branch is supported on a few branches and GPUs only.
  if (order < 0 && needs && compareDriverVersions(driver, needs) >= 0) {
    return {
      enable: false,
      reason: `host driver ${driver} serves the image's CUDA ${cuda} (${cudaNeeds}): forward compatibility (${compat}) is not needed`,
    };
  }
  if (order < 0) {
    return {
      enable: true,
      reason: `host driver ${driver} is older than the image's forward-compatibility driver ${compat}${cudaNeeds ? ` (${cudaNeeds})` : ''}: using it. ${SUPPORT}`,
    };
  }
  return {
    enable: false,
    reason:
      order === 0
        ? `host driver ${driver} is the forward-compatibility library's own version: not needed`
        : `host driver ${driver} is newer than the forward-compatibility library (${compat}): the host's own driver serves ${cuda ? `CUDA ${cuda}` : "the image's CUDA"}`,
  };
}

/**
 * The compat library's driver version: the version `libcuda.so.1` links to (`libcuda.so.570.124.06`),
 * else the newest `libcuda.so.<version>` in the folder; undefined without one.
 */
export function readCompatDriverVersion(compatDir: string): string | undefined {
  const versionOf = (name: string) => /^libcuda\.so\.(\d+\.\d+(?:\.\d+)*)$/.exec(name)?.[1];
  try {
    const linked = versionOf(path.basename(fs.readlinkSync(path.join(compatDir, 'libcuda.so.1'))));
    if (linked) return linked;
  } catch {
    // not a link (or absent): the folder's files say it
  }
  let names: string[];
  try {
    names = fs.readdirSync(compatDir);
  } catch {
    return undefined;
  }
  const versions = names.map(versionOf).filter((v): v is string => v !== undefined);
  return versions.sort(compareDriverVersions).pop();
}

export interface CudaCompatOptions {
  /** Where `driver/nvidia/version` is read (default `/proc`). */
  readonly procRoot?: string;
  /** The compat libraries (default /usr/local/cuda/compat). */
  readonly compatDir?: string;
  /** The container's environment: LD_LIBRARY_PATH is kept after the compat folder, CUDA_VERSION read. */
  readonly env: NodeJS.ProcessEnv;
  /** The image's CUDA (default: `CUDA_VERSION`, which CUDA base images set). */
  readonly imageCuda?: string;
}

export interface CudaCompatEnvironment {
  /** The variables to set for the trainer and everything it starts (none when not enabling). */
  readonly env: Record<string, string>;
  /** One line for the job's log: on or off, and why. */
  readonly note: string;
  readonly enabled: boolean;
}

/** Reads the host's driver and the image's compat library and decides; nothing is changed here. */
export function cudaCompatEnvironment(options: CudaCompatOptions): CudaCompatEnvironment {
  const compatDir = options.compatDir ?? CUDA_COMPAT_DIR;
  const versionFile = path.join(options.procRoot ?? '/proc', 'driver', 'nvidia', 'version');
  let text: string | undefined;
  try {
    text = fs.readFileSync(versionFile, 'utf8');
  } catch {
    text = undefined; // no NVIDIA kernel module: no GPU on this host
  }
  const driverVersion = text === undefined ? undefined : parseDriverVersion(text);
  if (text !== undefined && driverVersion === undefined) {
    const first = text.split('\n')[0].trim().slice(0, 120);
    return {
      env: {},
      enabled: false,
      note: `CUDA forward compatibility: off — ${versionFile} does not say the driver's version ("${first}")`,
    };
  }
  const decision = decideCudaCompat({
    driverVersion,
    compatDriverVersion: readCompatDriverVersion(compatDir),
    imageCuda: options.imageCuda ?? options.env.CUDA_VERSION,
  });
  if (!decision.enable) {
    return { env: {}, enabled: false, note: `CUDA forward compatibility: off — ${decision.reason}` };
  }
  const kept = (options.env.LD_LIBRARY_PATH ?? '').split(':').filter((p) => p !== '' && p !== compatDir);
  return {
    env: { LD_LIBRARY_PATH: [compatDir, ...kept].join(':') },
    enabled: true,
    note: `CUDA forward compatibility: on (${compatDir} first on LD_LIBRARY_PATH) — ${decision.reason}`,
  };
}
