/**
 * The Docker engine, through dockerode: the one module that touches it. Everything else asks for
 * tasks (is this image here, build, tag, push, run a container) and gets results and progress events.
 */
import { PassThrough, Readable } from 'node:stream';
import type Docker from 'dockerode';
import { RuntimeFailure } from '../errors';
import {
  BuildProgress,
  PushProgress,
  readJsonLines,
  type BuildResult,
  type ImageListener,
  type PushResult,
} from './engine-streams';
import type { RegistryCredentials } from './credentials';

export interface LocalImage {
  readonly id: string;
  readonly repoDigests: readonly string[];
  /** Uncompressed bytes. */
  readonly size: number;
  /** The image's labels (what our build records it has: `rlvr.efa`, `rlvr.torch`, …). */
  readonly labels: Readonly<Record<string, string>>;
}

export interface BuildOptions {
  /** The first names the image; the others are added to it. */
  readonly tags: readonly string[];
  readonly buildArgs: Readonly<Record<string, string>>;
  readonly labels?: Readonly<Record<string, string>>;
  /** `host` (the default) works with and without a bridge network on the daemon. */
  readonly networkMode?: string;
  readonly listener?: ImageListener;
}

export interface ContainerSpec {
  readonly image: string;
  readonly cmd: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly labels?: Readonly<Record<string, string>>;
  /** `host:container[:ro]` */
  readonly binds: readonly string[];
  /** `none`, `host`, or a network made by createNetwork. */
  readonly networkMode: string;
  /** The container's host name, and the name the other containers on its network reach it by. */
  readonly hostname?: string;
  readonly shmSizeBytes?: number;
  /** Host GPUs given to the container (they appear inside as 0..n-1). */
  readonly gpus?: readonly number[];
  /** Seconds between SIGTERM and SIGKILL when the container is stopped. */
  readonly stopGraceSeconds: number;
}

export interface ContainerRunOptions {
  /** The container's output, as it comes. */
  readonly stdout: (chunk: Buffer) => void;
  readonly stderr: (chunk: Buffer) => void;
  /** Aborted: the container gets SIGTERM, and SIGKILL after the spec's grace. */
  readonly signal?: AbortSignal;
  /** Called once, when the signal stops the container. */
  readonly onStop?: () => void;
}

export interface ContainerExit {
  readonly exitCode: number;
  /** The signal stopped it. */
  readonly interrupted: boolean;
}

/** A Docker engine, by task. */
export interface Engine {
  /** How the engine was reached, for messages. */
  readonly where: string;
  /** The engine's version (e.g. `27.5.1`). */
  version(): Promise<string>;
  /** The image `ref` (tag or ID) in this engine, or undefined. */
  inspect(ref: string): Promise<LocalImage | undefined>;
  exists(ref: string): Promise<boolean>;
  /**
   * Builds with BuildKit through the Engine API, streaming step names to the listener. A failed build
   * names the failing step and the last lines of its output.
   */
  build(contextTar: Buffer, options: BuildOptions): Promise<BuildResult>;
  /** Adds `target` (`repo:tag`) to the image `source`. */
  tag(source: string, target: string): Promise<void>;
  /** Remembers the login for `registry` (`host[:port]`); every push there uses the latest one. */
  login(registry: string, credentials: RegistryCredentials): void;
  /**
   * Pushes `repositoryUri:tag` with the registry's login. Fails with the engine's own words (a plain
   * Error); registry.ts's pushImage tells auth refusals from transient errors and retries.
   */
  push(
    repositoryUri: string,
    tag: string,
    options?: { readonly listener?: ImageListener },
  ): Promise<PushResult>;
  /** Creates, starts and waits for a container, passing its output on; removes it at the end. */
  run(spec: ContainerSpec, options: ContainerRunOptions): Promise<ContainerExit>;
  /**
   * A private bridge network for the containers of one job (`internal`: no route out of it), and how to
   * remove it once they have ended.
   */
  createNetwork(
    name: string,
    options: { readonly internal: boolean; readonly labels?: Readonly<Record<string, string>> },
  ): Promise<{ readonly name: string; remove(): Promise<void> }>;
  /**
   * A named volume the containers of one job mount together (the file system a multi-host job's hosts
   * share), and how to remove it once they have ended.
   */
  createVolume(
    name: string,
    options: { readonly labels?: Readonly<Record<string, string>> },
  ): Promise<{ readonly name: string; remove(): Promise<void> }>;
}

/** `unix:///path`, `tcp://host:port` or undefined (DOCKER_HOST, else /var/run/docker.sock). */
export async function connectEngine(host: string | undefined = process.env.DOCKER_HOST): Promise<Engine> {
  const { default: DockerCtor } = await import('dockerode');
  let docker: Docker;
  let where: string;
  if (!host || host.startsWith('unix://')) {
    const socketPath = host ? host.slice('unix://'.length) : '/var/run/docker.sock';
    docker = new DockerCtor({ socketPath });
    where = `unix://${socketPath}`;
  } else {
    const url = new URL(host.replace(/^tcp:/, 'http:'));
    docker = new DockerCtor({ host: url.hostname, port: Number(url.port || 2375), protocol: 'http' });
    where = host;
  }
  try {
    // A socket that accepts but never answers must not hang a dry-run: 10 s, then a clear error.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      docker.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('no answer within 10 s')), 10_000);
      }),
    ]).finally(() => clearTimeout(timer));
  } catch (err) {
    throw new RuntimeFailure(
      `No Docker engine answers at ${where} (${(err as Error).message}). Start Docker, or set DOCKER_HOST / --docker-host to the engine's socket.`,
      'NoDockerEngine',
      { cause: err },
    );
  }
  return new DockerodeEngine(docker, where);
}

/** `repo:tag` → [repo, tag] (the last colon: a registry port comes before it). */
function splitRef(ref: string): [string, string] {
  const at = ref.lastIndexOf(':');
  return [ref.slice(0, at), ref.slice(at + 1)];
}

class DockerodeEngine implements Engine {
  private readonly logins = new Map<string, RegistryCredentials>();

  constructor(
    private readonly docker: Docker,
    readonly where: string,
  ) {}

  private engineError(err: unknown): RuntimeFailure {
    return new RuntimeFailure(`Docker engine at ${this.where}: ${(err as Error).message}`, 'EngineError', {
      cause: err,
    });
  }

  async version(): Promise<string> {
    return (await this.docker.version()).Version;
  }

  async inspect(ref: string): Promise<LocalImage | undefined> {
    try {
      const info = await this.docker.getImage(ref).inspect();
      return {
        id: info.Id,
        repoDigests: info.RepoDigests ?? [],
        size: info.Size,
        labels: info.Config?.Labels ?? {},
      };
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return undefined;
      throw this.engineError(err);
    }
  }

  async exists(ref: string): Promise<boolean> {
    return (await this.inspect(ref)) !== undefined;
  }

  async build(contextTar: Buffer, options: BuildOptions): Promise<BuildResult> {
    let stream: Readable;
    try {
      stream = (await this.docker.buildImage(Readable.from([contextTar]), {
        t: options.tags[0],
        version: '2',
        networkmode: options.networkMode ?? 'host',
        buildargs: { ...options.buildArgs },
        labels: { ...options.labels },
        rm: true,
        forcerm: true,
      } as Docker.ImageBuildOptions)) as unknown as Readable;
    } catch (err) {
      throw new RuntimeFailure(
        `The Docker engine at ${this.where} refused the build: ${(err as Error).message}`,
        'BuildFailed',
        { cause: err },
      );
    }
    const progress = new BuildProgress(options.listener);
    await readJsonLines(stream, progress.onLine);
    const result = progress.result();
    for (const extra of options.tags.slice(1)) await this.tag(result.imageId, extra);
    return result;
  }

  async tag(source: string, target: string): Promise<void> {
    const [repo, tag] = splitRef(target);
    await this.docker.getImage(source).tag({ repo, tag });
  }

  login(registry: string, credentials: RegistryCredentials): void {
    this.logins.set(registry, credentials);
  }

  async push(
    repositoryUri: string,
    tag: string,
    options: { readonly listener?: ImageListener } = {},
  ): Promise<PushResult> {
    const registry = repositoryUri.slice(0, repositoryUri.indexOf('/'));
    const creds = this.logins.get(registry);
    const stream = (await this.docker.getImage(repositoryUri).push({
      tag,
      ...(creds
        ? { authconfig: { username: creds.username, password: creds.password, serveraddress: registry } }
        : {}),
    })) as unknown as Readable;
    const progress = new PushProgress(options.listener);
    await readJsonLines(stream, progress.onLine);
    return progress.result();
  }

  async run(spec: ContainerSpec, options: ContainerRunOptions): Promise<ContainerExit> {
    // Interrupted before it began: nothing to start, nothing to stop.
    if (options.signal?.aborted) return { exitCode: 130, interrupted: true };
    const container = await this.docker.createContainer(containerConfig(spec));
    try {
      const output = await container.attach({ stream: true, stdout: true, stderr: true });
      const stdout = new PassThrough().on('data', options.stdout);
      const stderr = new PassThrough().on('data', options.stderr);
      container.modem.demuxStream(output, stdout, stderr);
      await container.start();
      const exit = await waitOrStop(container, spec.stopGraceSeconds, options);
      // The last output may trail the exit a little.
      await new Promise<void>((r) => {
        output.on('end', r);
        setTimeout(r, 2000);
      });
      return exit;
    } finally {
      await container.remove({ force: true }).catch(() => undefined);
    }
  }

  async createNetwork(
    name: string,
    options: { readonly internal: boolean; readonly labels?: Readonly<Record<string, string>> },
  ): Promise<{ readonly name: string; remove(): Promise<void> }> {
    const network = await this.docker.createNetwork({
      Name: name,
      Driver: 'bridge',
      Internal: options.internal,
      CheckDuplicate: true,
      Labels: { ...options.labels },
    });
    return {
      name,
      remove: async () => {
        await network.remove().catch((err: { statusCode?: number }) => {
          if (err.statusCode !== 404) throw err;
        });
      },
    };
  }

  async createVolume(
    name: string,
    options: { readonly labels?: Readonly<Record<string, string>> },
  ): Promise<{ readonly name: string; remove(): Promise<void> }> {
    await this.docker.createVolume({ Name: name, Driver: 'local', Labels: { ...options.labels } });
    return {
      name,
      remove: async () => {
        await this.docker
          .getVolume(name)
          .remove()
          .catch((err: { statusCode?: number }) => {
            if (err.statusCode !== 404) throw err;
          });
      },
    };
  }
}

function containerConfig(spec: ContainerSpec): Docker.ContainerCreateOptions {
  const onOwnNetwork = spec.hostname && !['none', 'host', 'bridge'].includes(spec.networkMode);
  return {
    Image: spec.image,
    ...(spec.hostname ? { Hostname: spec.hostname } : {}),
    ...(onOwnNetwork
      ? { NetworkingConfig: { EndpointsConfig: { [spec.networkMode]: { Aliases: [spec.hostname!] } } } }
      : {}),
    Cmd: [...spec.cmd],
    Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
    Labels: { ...spec.labels },
    StopTimeout: spec.stopGraceSeconds,
    HostConfig: {
      Binds: [...spec.binds],
      NetworkMode: spec.networkMode,
      ...(spec.shmSizeBytes ? { ShmSize: spec.shmSizeBytes } : {}),
      ...(spec.gpus?.length
        ? {
            DeviceRequests: [{ Driver: 'nvidia', DeviceIDs: spec.gpus.map(String), Capabilities: [['gpu']] }],
          }
        : {}),
    },
  };
}

/** Waits for the container's exit; the signal stops it (SIGTERM, SIGKILL after the grace). */
async function waitOrStop(
  container: Docker.Container,
  graceSeconds: number,
  options: ContainerRunOptions,
): Promise<ContainerExit> {
  let interrupted = false;
  let stopping: Promise<unknown> | undefined;
  const stop = () => {
    if (interrupted) return;
    interrupted = true;
    options.onStop?.();
    stopping = container.stop({ t: graceSeconds }).catch(() => undefined);
  };
  if (options.signal?.aborted) stop();
  options.signal?.addEventListener('abort', stop);
  try {
    const status = (await container.wait()) as { StatusCode: number };
    // The engine finishes its stop before the container can be removed.
    await stopping;
    return { exitCode: status.StatusCode, interrupted };
  } finally {
    options.signal?.removeEventListener('abort', stop);
  }
}
