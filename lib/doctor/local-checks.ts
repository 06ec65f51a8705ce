import { spawnSync } from 'node:child_process';
import { connectEngine } from '../image';
import type { DoctorCheck } from './check';

/** This machine: the Docker engine and GPUs (needed for image builds and --local runs only). */
export async function localChecks(env: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  try {
    const engine = await connectEngine(env.DOCKER_HOST);
    checks.push({
      name: 'docker engine',
      level: 'ok',
      detail: `Docker ${await engine.version()} at ${engine.where}`,
    });
  } catch (err) {
    checks.push({
      name: 'docker engine',
      level: 'warn',
      detail: `not reachable (${(err as Error).message})`,
      fix: 'Image builds and --local runs need a Docker engine: start dockerd or set DOCKER_HOST.',
    });
  }
  const smi = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8' });
  const gpus = smi.status === 0 ? smi.stdout.split('\n').filter((l) => l.startsWith('GPU ')).length : 0;
  checks.push(
    gpus > 0
      ? { name: 'local GPUs', level: 'ok', detail: `${gpus} GPU(s)` }
      : {
          name: 'local GPUs',
          level: 'warn',
          detail: 'none found (nvidia-smi)',
          fix: 'Only --local runs need GPUs here.',
        },
  );
  return checks;
}
