import { spawnSync } from 'node:child_process';
import { pushLabelledImage, startRegistry, type Registry } from './docker';
import { motoAvailable, TEST_ACCOUNT } from './moto';

/*
 * moto's ECR in front of a real registry: moto's authorization token for the test account is the
 * registry's password, so what the launcher checks of an image (a rerun: is it still there, by digest)
 * goes over a real connection to a real registry.
 */

/** The user and password moto's GetAuthorizationToken hands out for the test account. */
export const ECR_CREDENTIALS = { username: 'AWS', password: `${TEST_ACCOUNT}-auth-token` } as const;

/** moto_server, docker-registry and htpasswd are on this machine. */
export function ecrRegistryAvailable(): boolean {
  return (
    motoAvailable() &&
    spawnSync('sh', ['-c', 'command -v docker-registry htpasswd'], { stdio: 'ignore' }).status === 0
  );
}

/** A registry for the suite (started before its tests, removed after), and images pushed to it by digest. */
export function useEcrRegistry() {
  let registry: Registry | undefined;
  beforeAll(async () => {
    registry = await startRegistry(ECR_CREDENTIALS.username, ECR_CREDENTIALS.password);
  });
  afterAll(async () => {
    await registry?.remove();
  });
  return {
    get registry(): Registry {
      return registry!;
    },
    /** The launcher's repository setting for this registry. */
    get repositoryUri(): string {
      return `${registry!.host}/rlvr-experiments`;
    },
    /** Pushes an image (a labelled one, `tag`) and returns it as `repository@sha256:…`. */
    async pushImage(tag = 'some', labels: Record<string, string> = {}): Promise<string> {
      const digest = await pushLabelledImage(registry!, 'rlvr-experiments', tag, labels, ECR_CREDENTIALS);
      return `${registry!.host}/rlvr-experiments@${digest}`;
    },
  };
}
