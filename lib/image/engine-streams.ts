/**
 * What the Engine API streams back while it builds or pushes: JSON lines, read here into results and
 * progress events. Pure (no engine): the wrapper in engine.ts feeds the lines in.
 */
import type { Readable } from 'node:stream';
import { RuntimeFailure } from '../errors';
import type { ProgressOf } from '../progress';
import { decodeBuildkitTrace } from './buildkit-trace';

export type ImageEvent = ProgressOf<'step' | 'build-step' | 'layer' | 'retry'>;
export type ImageListener = (event: ImageEvent) => void;

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

interface VertexState {
  readonly name: string;
  readonly cached: boolean;
  readonly completed: boolean;
  readonly error?: string;
}

/**
 * Follows a BuildKit build (`version: '2'`) through its JSON lines: reports each finished step to the
 * listener, keeps the last lines of each step's output, and tells the image ID or why the build failed.
 */
export class BuildProgress {
  private readonly vertexes = new Map<string, VertexState>();
  private readonly logs = new Map<string, string[]>();
  private imageId: string | undefined;
  private streamError: string | undefined;

  constructor(private readonly listener?: ImageListener) {}

  readonly onLine = (obj: Record<string, unknown>): void => {
    if (obj.id === 'moby.buildkit.trace' && typeof obj.aux === 'string') {
      this.onTrace(obj.aux);
    } else if (obj.id === 'moby.image.id' && obj.aux && typeof obj.aux === 'object') {
      this.imageId = (obj.aux as { ID?: string }).ID;
    } else if (typeof obj.error === 'string') {
      this.streamError = obj.error;
    }
  };

  private onTrace(aux: string): void {
    const trace = decodeBuildkitTrace(aux);
    for (const v of trace.vertexes) {
      const seen = this.vertexes.get(v.digest);
      this.vertexes.set(v.digest, {
        name: v.name,
        cached: v.cached,
        completed: v.completed,
        ...(v.error ? { error: v.error } : {}),
      });
      const isStep = v.name.startsWith('[') && !v.name.startsWith('[internal]');
      if (v.completed && !seen?.completed && !v.error && isStep) {
        this.listener?.({ type: 'build-step', name: v.name, cached: v.cached });
      }
    }
    for (const l of trace.logs) {
      const lines = this.logs.get(l.vertex) ?? [];
      lines.push(...l.message.split('\n').filter((s) => s.length > 0));
      this.logs.set(l.vertex, lines.slice(-LOG_TAIL_LINES));
    }
  }

  /** The built image, or a RuntimeFailure naming the failing step and the last lines of its output. */
  result(): BuildResult {
    const failed = [...this.vertexes.entries()].find(([, v]) => v.error);
    if (failed) {
      const [digest, v] = failed;
      const tail = this.logs.get(digest) ?? [];
      throw new RuntimeFailure(
        `The image build failed at step ${v.name}: ${v.error}` +
          (tail.length ? `\nLast lines of its output:\n  ${tail.join('\n  ')}` : ''),
        'BuildFailed',
      );
    }
    if (this.streamError || !this.imageId) {
      throw new RuntimeFailure(
        `The image build failed: ${this.streamError ?? 'the engine reported no image'}`,
        'BuildFailed',
      );
    }
    const steps = [...this.vertexes.values()]
      .filter((v) => !v.name.startsWith('[internal]'))
      .map((v) => ({ name: v.name, cached: v.cached }));
    return { imageId: this.imageId, steps };
  }
}

export interface PushResult {
  readonly digest: string;
  /** Layers uploaded in this push and layers the registry already had. */
  readonly pushedLayers: number;
  readonly existingLayers: number;
  readonly pushedBytes: number;
}

/** Follows an image push through its JSON lines: one `layer` event per layer, then the digest. */
export class PushProgress {
  private readonly totals = new Map<string, number>();
  private digest: string | undefined;
  private error: string | undefined;
  private pushedLayers = 0;
  private existingLayers = 0;
  private pushedBytes = 0;

  constructor(private readonly listener?: ImageListener) {}

  readonly onLine = (obj: Record<string, unknown>): void => {
    const id = typeof obj.id === 'string' ? obj.id : '';
    const detail = obj.progressDetail as { total?: number } | undefined;
    if (obj.status === 'Pushing' && detail?.total) this.totals.set(id, detail.total);
    if (obj.status === 'Pushed') {
      this.pushedLayers++;
      this.pushedBytes += this.totals.get(id) ?? 0;
      this.listener?.({ type: 'layer', id, status: 'pushed', bytes: this.totals.get(id) ?? 0 });
    } else if (obj.status === 'Layer already exists') {
      this.existingLayers++;
      this.listener?.({ type: 'layer', id, status: 'exists', bytes: 0 });
    }
    const aux = obj.aux as { Digest?: string } | undefined;
    if (aux?.Digest) this.digest = aux.Digest;
    if (typeof obj.error === 'string') this.error = obj.error;
  };

  /** The push's outcome; a plain Error with the engine's own words when it failed (the caller classifies it). */
  result(): PushResult {
    if (this.error) throw new Error(this.error);
    if (!this.digest) throw new Error('the engine reported no digest for the push');
    const { digest, pushedLayers, existingLayers, pushedBytes } = this;
    return { digest, pushedLayers, existingLayers, pushedBytes };
  }
}
