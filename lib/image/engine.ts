import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { RuntimeFailure } from '../errors';
import { decodeBuildkitTrace } from './buildkit-trace';
import type { ProgressOf } from '../progress';

export type ImageEvent = ProgressOf<'step' | 'build-step' | 'layer' | 'retry'>;
export type ImageListener = (event: ImageEvent) => void;

export interface Engine {
  readonly docker: Docker;
  /** How the engine was reached, for messages. */
  readonly where: string;
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
  return { docker, where };
}

export interface LocalImage {
  readonly id: string;
  readonly repoDigests: readonly string[];
  /** Uncompressed bytes. */
  readonly size: number;
}

export async function inspectLocalImage(engine: Engine, ref: string): Promise<LocalImage | undefined> {
  try {
    const info = await engine.docker.getImage(ref).inspect();
    return { id: info.Id, repoDigests: info.RepoDigests ?? [], size: info.Size };
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return undefined;
    throw new RuntimeFailure(`Docker engine at ${engine.where}: ${(err as Error).message}`, 'EngineError', {
      cause: err,
    });
  }
}

/** Calls `onLine` for each JSON line of an Engine API progress stream. */
export function readJsonLines(
  stream: Readable,
  onLine: (obj: Record<string, unknown>) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const pump = (final: boolean) => {
      let pos;
      while ((pos = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, pos).trim();
        buf = buf.slice(pos + 1);
        if (line) onLine(JSON.parse(line));
      }
      if (final && buf.trim()) onLine(JSON.parse(buf.trim()));
    };
    stream.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      try {
        pump(false);
      } catch (err) {
        stream.destroy();
        reject(err);
      }
    });
    stream.on('error', reject);
    stream.on('end', () => {
      try {
        pump(true);
        resolve();
      } catch (err) {
        reject(err);
      }
    });
  });
}

export interface BuildResult {
  readonly imageId: string;
  /** The build's steps in order, and whether each came from the cache. */
  readonly steps: readonly { readonly name: string; readonly cached: boolean }[];
}

const LOG_TAIL_LINES = 25;

/**
 * Builds with BuildKit through the Engine API (`version: '2'`), streaming step names to the listener.
 * A failed build names the failing step and the last lines of its output.
 */
export async function buildImage(
  engine: Engine,
  contextTar: Buffer,
  options: {
    readonly tags: readonly string[];
    readonly buildArgs: Readonly<Record<string, string>>;
    readonly labels?: Readonly<Record<string, string>>;
    /** `host` works with and without a bridge network on the daemon. */
    readonly networkMode?: string;
    readonly listener?: ImageListener;
  },
): Promise<BuildResult> {
  const { Readable } = await import('node:stream');
  const vertexes = new Map<string, { name: string; cached: boolean; completed: boolean; error?: string }>();
  const logs = new Map<string, string[]>();
  let imageId: string | undefined;
  let streamError: string | undefined;
  let stream: Readable;
  try {
    stream = (await engine.docker.buildImage(Readable.from([contextTar]), {
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
      `The Docker engine at ${engine.where} refused the build: ${(err as Error).message}`,
      'BuildFailed',
      {
        cause: err,
      },
    );
  }
  await readJsonLines(stream, (obj) => {
    if (obj.id === 'moby.buildkit.trace' && typeof obj.aux === 'string') {
      const trace = decodeBuildkitTrace(obj.aux);
      for (const v of trace.vertexes) {
        const seen = vertexes.get(v.digest);
        const next = {
          name: v.name,
          cached: v.cached,
          completed: v.completed,
          ...(v.error ? { error: v.error } : {}),
        };
        vertexes.set(v.digest, next);
        if (
          v.completed &&
          !seen?.completed &&
          !v.error &&
          v.name.startsWith('[') &&
          !v.name.startsWith('[internal]')
        ) {
          options.listener?.({ type: 'build-step', name: v.name, cached: v.cached });
        }
      }
      for (const l of trace.logs) {
        const lines = logs.get(l.vertex) ?? [];
        lines.push(...l.message.split('\n').filter((s) => s.length > 0));
        logs.set(l.vertex, lines.slice(-LOG_TAIL_LINES));
      }
    } else if (obj.id === 'moby.image.id' && obj.aux && typeof obj.aux === 'object') {
      imageId = (obj.aux as { ID?: string }).ID;
    } else if (typeof obj.error === 'string') {
      streamError = obj.error;
    }
  });
  const failed = [...vertexes.entries()].find(([, v]) => v.error);
  if (failed) {
    const [digest, v] = failed;
    const tail = logs.get(digest) ?? [];
    throw new RuntimeFailure(
      `The image build failed at step ${v.name}: ${v.error}` +
        (tail.length ? `\nLast lines of its output:\n  ${tail.join('\n  ')}` : ''),
      'BuildFailed',
    );
  }
  if (streamError || !imageId) {
    throw new RuntimeFailure(
      `The image build failed: ${streamError ?? 'the engine reported no image'}`,
      'BuildFailed',
    );
  }
  for (const extra of options.tags.slice(1)) {
    const at = extra.lastIndexOf(':');
    await engine.docker.getImage(imageId).tag({ repo: extra.slice(0, at), tag: extra.slice(at + 1) });
  }
  const steps = [...vertexes.values()]
    .filter((v) => !v.name.startsWith('[internal]'))
    .map((v) => ({ name: v.name, cached: v.cached }));
  return { imageId, steps };
}
