/**
 * What an image's CUDA asks of the host's driver, for the submit plan, from the labels our build records
 * (`rlvr.cuda`, `rlvr.base-image`). The image carries the base's cuda-compat package and sets
 * NVIDIA_DISABLE_REQUIRE=1; the entrypoint turns forward compatibility on when the host's driver is older
 * (lib/container/cuda-compat.ts); both read the driver table in lib/job-options.
 */
import { CUDA_MINIMUM_DRIVER } from '../job-options';
import { baseImageCuda, isDlcBase } from './build-plan';

const majorMinor = (v: string | undefined) => {
  const m = v ? /^(\d+)\.(\d+)/.exec(v) : null;
  return m ? { text: `${m[1]}.${m[2]}`, major: Number(m[1]), minor: Number(m[2]) } : undefined;
};

/**
 * One line for the plan: `needs CUDA 12.8 (driver ≥ 570.26); on an older driver the entrypoint turns on
 * CUDA forward compatibility (cuda-compat 12.8), which NVIDIA supports on datacenter GPUs only`.
 * Undefined when the labels name no CUDA (a CPU torch, or an image our build did not make).
 */
export function cudaDriverPlanLine(labels: Readonly<Record<string, string>> | undefined): string | undefined {
  const torch = majorMinor(labels?.['rlvr.cuda']);
  if (!torch) return undefined;
  const baseImage = labels?.['rlvr.base-image'];
  const base = majorMinor(baseImage ? baseImageCuda(baseImage) : undefined);
  // The base's CUDA (its toolkit, its compat package) is the torch wheel's or a newer minor of it.
  const cuda = base && base.major === torch.major && base.minor > torch.minor ? base : torch;
  const driver = CUDA_MINIMUM_DRIVER[cuda.text];
  const compat = base
    ? `cuda-compat ${base.text}`
    : baseImage && isDlcBase(baseImage)
      ? "the AWS deep-learning base's cuda-compat"
      : "the base's cuda-compat";
  return `needs CUDA ${cuda.text}${driver ? ` (driver ≥ ${driver})` : ''}; on an older driver the entrypoint turns on CUDA forward compatibility (${compat}), which NVIDIA supports on datacenter GPUs only`;
}
