import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  cudaCompatEnvironment,
  decideCudaCompat,
  parseDriverVersion,
  readCompatDriverVersion,
} from '../../lib/container/cuda-compat';
import { cudaDriverPlanLine } from '../../lib/image';
import { compareDriverVersions } from '../../lib/job-options';
import { tempDir } from '../helpers/fixtures';

/**
 * CUDA forward compatibility at container start, against stand-in files: a `/proc` whose
 * `driver/nvidia/version` says the host's driver, and a compat folder whose `libcuda.so.1` is a real
 * symlink to `libcuda.so.570.124.06`, as NVIDIA's cuda-compat-12-8 lays it out.
 */
const COMPAT_VERSION = '570.124.06';

/** `/proc/driver/nvidia/version` as the kernel module writes it. */
function procWithDriver(version: string | undefined, kind: 'closed' | 'open' = 'closed'): string {
  const root = tempDir('rlvr-proc-');
  if (version === undefined) return root;
  fs.mkdirSync(path.join(root, 'driver', 'nvidia'), { recursive: true });
  const module =
    kind === 'closed' ? 'NVIDIA UNIX x86_64 Kernel Module' : 'NVIDIA UNIX Open Kernel Module for x86_64';
  fs.writeFileSync(
    path.join(root, 'driver', 'nvidia', 'version'),
    `NVRM version: ${module}  ${version}  Sat Aug 19 01:15:15 UTC 2023\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n`,
  );
  return root;
}

/** A compat folder with `libcuda.so.1` → `libcuda.so.<version>`; empty for `null` (no cuda-compat). */
function compatDir(version: string | null = COMPAT_VERSION): string {
  const dir = tempDir('rlvr-compat-');
  if (version === null) return dir;
  fs.writeFileSync(path.join(dir, `libcuda.so.${version}`), 'ELF stand-in');
  fs.symlinkSync(`libcuda.so.${version}`, path.join(dir, 'libcuda.so.1'));
  fs.symlinkSync('libcuda.so.1', path.join(dir, 'libcuda.so'));
  fs.writeFileSync(path.join(dir, `libnvidia-ptxjitcompiler.so.${version}`), 'ELF stand-in');
  return dir;
}

const baseEnv = { CUDA_VERSION: '12.8.1', LD_LIBRARY_PATH: '/usr/local/nvidia/lib:/usr/local/nvidia/lib64' };

describe('CUDA forward compatibility at container start', () => {
  it('an older host driver (535): turns it on, the compat folder first on LD_LIBRARY_PATH, the given path kept', () => {
    const compat = compatDir();
    const r = cudaCompatEnvironment({
      procRoot: procWithDriver('535.104.05'),
      compatDir: compat,
      env: baseEnv,
    });
    expect(r.enabled).toBe(true);
    expect(r.env).toEqual({
      LD_LIBRARY_PATH: `${compat}:/usr/local/nvidia/lib:/usr/local/nvidia/lib64`,
    });
    expect(r.note).toBe(
      `CUDA forward compatibility: on (${compat} first on LD_LIBRARY_PATH) — host driver 535.104.05 is older than the image's forward-compatibility driver 570.124.06 (CUDA 12.8 needs ≥ 570.26): using it. NVIDIA supports forward compatibility on datacenter GPUs and certain driver branches only; elsewhere CUDA fails to start (error 804)`,
    );
  });

  it('an older open-kernel-module driver, no LD_LIBRARY_PATH given: the compat folder alone', () => {
    const compat = compatDir();
    const r = cudaCompatEnvironment({
      procRoot: procWithDriver('550.54.15', 'open'),
      compatDir: compat,
      env: { CUDA_VERSION: '12.8.1' },
    });
    expect(r.env).toEqual({ LD_LIBRARY_PATH: compat });
    expect(r.note).toContain('host driver 550.54.15 is older');
  });

  it('a driver of the compat library’s own version: off, nothing set', () => {
    const r = cudaCompatEnvironment({
      procRoot: procWithDriver(COMPAT_VERSION),
      compatDir: compatDir(),
      env: baseEnv,
    });
    expect(r).toEqual({
      enabled: false,
      env: {},
      note: "CUDA forward compatibility: off — host driver 570.124.06 is the forward-compatibility library's own version: not needed",
    });
  });

  it('a newer driver (580): off, the host’s own driver serves the image', () => {
    const r = cudaCompatEnvironment({
      procRoot: procWithDriver('580.82.07'),
      compatDir: compatDir(),
      env: baseEnv,
    });
    expect(r).toEqual({
      enabled: false,
      env: {},
      note: "CUDA forward compatibility: off — host driver 580.82.07 is newer than the forward-compatibility library (570.124.06): the host's own driver serves CUDA 12.8",
    });
  });

  it('no GPU (no /proc/driver/nvidia/version): off, and says so', () => {
    const r = cudaCompatEnvironment({
      procRoot: procWithDriver(undefined),
      compatDir: compatDir(),
      env: baseEnv,
    });
    expect(r).toEqual({
      enabled: false,
      env: {},
      note: 'CUDA forward compatibility: off — no NVIDIA driver on this host (no /proc/driver/nvidia/version): no GPU, nothing to make compatible',
    });
  });

  it('no compat library in the image and a driver too old for its CUDA: off, and says the job will likely fail and why', () => {
    const r = cudaCompatEnvironment({
      procRoot: procWithDriver('535.104.05'),
      compatDir: compatDir(null),
      env: baseEnv,
    });
    expect(r.enabled).toBe(false);
    expect(r.env).toEqual({});
    expect(r.note).toBe(
      `CUDA forward compatibility: off — host driver 535.104.05 is older than the image's CUDA 12.8 needs (≥ 570.26) and the image has no forward-compatibility library (cuda-compat): the job will likely fail when CUDA starts ("CUDA driver version is insufficient for CUDA runtime version"); run it on a host with a driver ≥ 570.26, or build the image with cuda-compat`,
    );
    // A missing folder is the same as an empty one.
    const gone = cudaCompatEnvironment({
      procRoot: procWithDriver('535.104.05'),
      compatDir: path.join(tempDir(), 'absent'),
      env: baseEnv,
    });
    expect(gone.note).toBe(r.note);
  });

  it('no compat library and a driver that serves the CUDA: off, nothing to warn about', () => {
    const r = cudaCompatEnvironment({
      procRoot: procWithDriver('575.51.03'),
      compatDir: compatDir(null),
      env: baseEnv,
    });
    expect(r.note).toBe(
      "CUDA forward compatibility: off — host driver 575.51.03 serves the image's CUDA 12.8 (CUDA 12.8 needs ≥ 570.26); the image has no forward-compatibility library, none needed",
    );
  });

  it('a version file that does not say the version: off, quoting it', () => {
    const root = tempDir('rlvr-proc-');
    fs.mkdirSync(path.join(root, 'driver', 'nvidia'), { recursive: true });
    fs.writeFileSync(path.join(root, 'driver', 'nvidia', 'version'), 'garbled\n');
    const r = cudaCompatEnvironment({ procRoot: root, compatDir: compatDir(), env: baseEnv });
    expect(r.enabled).toBe(false);
    expect(r.note).toBe(
      `CUDA forward compatibility: off — ${path.join(root, 'driver', 'nvidia', 'version')} does not say the driver's version ("garbled")`,
    );
  });

  it('does not put the compat folder twice on LD_LIBRARY_PATH', () => {
    const compat = compatDir();
    const r = cudaCompatEnvironment({
      procRoot: procWithDriver('535.104.05'),
      compatDir: compat,
      env: { CUDA_VERSION: '12.8.1', LD_LIBRARY_PATH: `/a:${compat}:/b` },
    });
    expect(r.env.LD_LIBRARY_PATH).toBe(`${compat}:/a:/b`);
  });
});

describe('the decision (pure)', () => {
  it('compares versions numerically, part by part', () => {
    expect(compareDriverVersions('535.104.05', '570.124.06')).toBe(-1);
    expect(compareDriverVersions('570.9', '570.10')).toBe(-1);
    expect(compareDriverVersions('570.10', '570.9')).toBe(1);
    expect(compareDriverVersions('570.26', '570.26.0')).toBe(0);
    expect(compareDriverVersions('570.124.06', '570.124.6')).toBe(0);
    // As strings these would order the other way round.
    expect(decideCudaCompat({ driverVersion: '570.9', compatDriverVersion: '570.10' }).enable).toBe(true);
    expect(decideCudaCompat({ driverVersion: '570.10', compatDriverVersion: '570.9' }).enable).toBe(false);
  });

  it('covers the four driver cases and the missing library', () => {
    const d = (driverVersion: string | undefined, compatDriverVersion: string | undefined) =>
      decideCudaCompat({ driverVersion, compatDriverVersion, imageCuda: '12.8' }).enable;
    expect(d('535.104.05', COMPAT_VERSION)).toBe(true);
    expect(d(COMPAT_VERSION, COMPAT_VERSION)).toBe(false);
    expect(d('580.82.07', COMPAT_VERSION)).toBe(false);
    expect(d(undefined, COMPAT_VERSION)).toBe(false);
    expect(d('535.104.05', undefined)).toBe(false);
    // Older than the library, but of the branch the image's CUDA needs (12.8: ≥ 570.26): not needed.
    expect(d('570.86.15', COMPAT_VERSION)).toBe(false);
    expect(
      decideCudaCompat({
        driverVersion: '570.86.15',
        compatDriverVersion: COMPAT_VERSION,
        imageCuda: '12.8.1',
      }).reason,
    ).toBe(
      "host driver 570.86.15 serves the image's CUDA 12.8 (CUDA 12.8 needs ≥ 570.26): forward compatibility (570.124.06) is not needed",
    );
  });

  it('without the image’s CUDA, says what it cannot know', () => {
    expect(decideCudaCompat({ driverVersion: '535.104.05', compatDriverVersion: undefined }).reason).toBe(
      'host driver 535.104.05; the image has no forward-compatibility library and does not say its CUDA, so whether the driver serves it is not known',
    );
  });

  it('reads the driver of both kernel modules, and nothing else', () => {
    expect(
      parseDriverVersion(
        'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n',
      ),
    ).toBe('535.104.05');
    expect(
      parseDriverVersion(
        'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release Build  (dvs-builder@U16-I3-B03-4-3)  Wed Feb 26 00:06:00 UTC 2025\n',
      ),
    ).toBe('570.124.06');
    expect(parseDriverVersion('GCC version: gcc version 11.4.0\n')).toBeUndefined();
  });

  it('reads the compat version from the link, else from the folder’s newest libcuda', () => {
    expect(readCompatDriverVersion(compatDir())).toBe(COMPAT_VERSION);
    const copied = tempDir('rlvr-compat-');
    for (const v of ['570.9.1', '570.124.06']) fs.writeFileSync(path.join(copied, `libcuda.so.${v}`), 'x');
    fs.writeFileSync(path.join(copied, 'libcuda.so.1'), 'a copy, not a link');
    expect(readCompatDriverVersion(copied)).toBe('570.124.06');
    expect(readCompatDriverVersion(compatDir(null))).toBeUndefined();
  });
});

describe('the submit plan’s line', () => {
  it('says what the image needs and what happens on an older driver', () => {
    expect(
      cudaDriverPlanLine({
        'rlvr.cuda': '12.8',
        'rlvr.base-image': 'nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04',
      }),
    ).toBe(
      'needs CUDA 12.8 (driver ≥ 570.26); on an older driver the entrypoint turns on CUDA forward compatibility (cuda-compat 12.8), which NVIDIA supports on datacenter GPUs only',
    );
    // A newer base of the same major: its CUDA and its compat package.
    expect(
      cudaDriverPlanLine({
        'rlvr.cuda': '12.8',
        'rlvr.base-image': 'nvidia/cuda:12.9.1-cudnn-devel-ubuntu22.04',
      }),
    ).toMatch(/^needs CUDA 12\.9 \(driver ≥ 575\.51\.03\);.*\(cuda-compat 12\.9\)/);
    expect(
      cudaDriverPlanLine({
        'rlvr.cuda': '12.8',
        'rlvr.base-image': 'public.ecr.aws/deep-learning-containers/pytorch-training:2.9.0-gpu-py312',
      }),
    ).toContain("(the AWS deep-learning base's cuda-compat)");
    expect(cudaDriverPlanLine({ 'rlvr.torch': '2.9.0+cpu' })).toBeUndefined();
    expect(cudaDriverPlanLine(undefined)).toBeUndefined();
  });
});
