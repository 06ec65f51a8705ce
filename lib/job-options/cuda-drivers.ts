/**
 * What each CUDA release asks of the host's driver: read by the submit plan (lib/image) and by the
 * entrypoint, which decides on forward compatibility at start (lib/container).
 */

/**
 * The oldest Linux x86_64 driver of each CUDA release's first version (NVIDIA's CUDA Toolkit release
 * notes, "CUDA Toolkit and Corresponding Driver Versions").
 */
export const CUDA_MINIMUM_DRIVER: Readonly<Record<string, string>> = {
  '11.8': '520.61.05',
  '12.0': '525.60.13',
  '12.1': '530.30.02',
  '12.2': '535.54.03',
  '12.3': '545.23.06',
  '12.4': '550.54.14',
  '12.5': '555.42.02',
  '12.6': '560.28.03',
  '12.8': '570.26',
  '12.9': '575.51.03',
  '13.0': '580.65.06',
};

/** Numeric, part by part: `535.104.05 < 570.124.06`, `570.9 < 570.10`, `570.26 = 570.26.0`. */
export function compareDriverVersions(a: string, b: string): number {
  const pa = a.split('.').map((p) => parseInt(p, 10) || 0);
  const pb = b.split('.').map((p) => parseInt(p, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/** `12.8` from `12.8.1` or `12.8`; undefined for anything else. */
export function cudaMajorMinor(cuda: string | undefined): string | undefined {
  const m = cuda ? /^(\d+)\.(\d+)/.exec(cuda.trim()) : null;
  return m ? `${m[1]}.${m[2]}` : undefined;
}

/** The driver a CUDA release needs at least (its major.minor's first version), when the table knows it. */
export function minimumDriverForCuda(cuda: string | undefined): string | undefined {
  const mm = cudaMajorMinor(cuda);
  return mm ? CUDA_MINIMUM_DRIVER[mm] : undefined;
}
