import { Readable } from 'node:stream';
import { BuildProgress, PushProgress, readJsonLines, type ImageEvent } from '../../lib/image/engine-streams';

/** A protobuf encoder just large enough for BuildKit's StatusResponse (varints and bytes). */
function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}
const bytesField = (field: number, value: Buffer | string) => {
  const b = Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8');
  return Buffer.concat([varint((field << 3) | 2), varint(b.length), b]);
};
const varintField = (field: number, value: number) => Buffer.concat([varint(field << 3), varint(value)]);
const TIMESTAMP = varintField(1, 1_700_000_000);

function vertex(v: { digest: string; name: string; cached?: boolean; completed?: boolean; error?: string }) {
  return bytesField(
    1,
    Buffer.concat([
      bytesField(1, v.digest),
      bytesField(3, v.name),
      ...(v.cached ? [varintField(4, 1)] : []),
      bytesField(5, TIMESTAMP),
      ...(v.completed ? [bytesField(6, TIMESTAMP)] : []),
      ...(v.error ? [bytesField(7, v.error)] : []),
    ]),
  );
}
const log = (digest: string, message: string) =>
  bytesField(3, Buffer.concat([bytesField(1, digest), varintField(3, 2), bytesField(4, message)]));
const traceLine = (...parts: Buffer[]) => ({
  id: 'moby.buildkit.trace',
  aux: Buffer.concat(parts).toString('base64'),
});

describe('BuildProgress', () => {
  it('reports each finished step once, skips internal ones, and returns the image and its steps', () => {
    const events: ImageEvent[] = [];
    const progress = new BuildProgress((e) => events.push(e));
    progress.onLine(traceLine(vertex({ digest: 'd0', name: '[internal] load build context' })));
    progress.onLine(
      traceLine(
        vertex({ digest: 'd0', name: '[internal] load build context', completed: true }),
        vertex({ digest: 'd1', name: '[1/2] COPY base/ /', cached: true, completed: true }),
        vertex({ digest: 'd2', name: '[2/2] RUN make' }),
      ),
    );
    // The same vertex reported complete again is not a second step.
    progress.onLine(
      traceLine(
        vertex({ digest: 'd1', name: '[1/2] COPY base/ /', cached: true, completed: true }),
        vertex({ digest: 'd2', name: '[2/2] RUN make', completed: true }),
      ),
    );
    progress.onLine({ id: 'moby.image.id', aux: { ID: 'sha256:abc' } });
    expect(events).toEqual([
      { type: 'build-step', name: '[1/2] COPY base/ /', cached: true },
      { type: 'build-step', name: '[2/2] RUN make', cached: false },
    ]);
    expect(progress.result()).toEqual({
      imageId: 'sha256:abc',
      steps: [
        { name: '[1/2] COPY base/ /', cached: true },
        { name: '[2/2] RUN make', cached: false },
      ],
    });
  });

  it('a failed step is named with the last lines of its output', () => {
    const progress = new BuildProgress();
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    progress.onLine(traceLine(vertex({ digest: 'd1', name: '[1/1] RUN pip install' }), log('d1', lines)));
    progress.onLine(
      traceLine(
        vertex({ digest: 'd1', name: '[1/1] RUN pip install', completed: true, error: 'exit code: 7' }),
      ),
    );
    progress.onLine({ error: 'failed to solve' });
    expect(() => progress.result()).toThrow(
      /failed at step \[1\/1\] RUN pip install: exit code: 7\nLast lines of its output:\n {2}line 5\n/,
    );
    expect(() => progress.result()).not.toThrow(/line 4\n/);
  });

  it('a stream that ends without an image is a failure', () => {
    const progress = new BuildProgress();
    expect(() => progress.result()).toThrow('The image build failed: the engine reported no image');
    progress.onLine({ error: 'no space left on device' });
    expect(() => progress.result()).toThrow('The image build failed: no space left on device');
  });
});

describe('PushProgress', () => {
  it('counts pushed and existing layers and returns the digest', async () => {
    const events: ImageEvent[] = [];
    const progress = new PushProgress((e) => events.push(e));
    const lines = [
      { status: 'Preparing', id: 'l1' },
      { status: 'Pushing', id: 'l1', progressDetail: { current: 10, total: 1000 } },
      { status: 'Pushed', id: 'l1' },
      { status: 'Layer already exists', id: 'l2' },
      { status: 'latest: digest: sha256:d size: 5', aux: { Tag: 'latest', Digest: 'sha256:d', Size: 5 } },
    ];
    // Split across chunks mid-line, as a socket delivers them.
    const text = lines.map((l) => JSON.stringify(l)).join('\r\n');
    await readJsonLines(Readable.from([text.slice(0, 37), text.slice(37)]), progress.onLine);
    expect(events).toEqual([
      { type: 'layer', id: 'l1', status: 'pushed', bytes: 1000 },
      { type: 'layer', id: 'l2', status: 'exists', bytes: 0 },
    ]);
    expect(progress.result()).toEqual({
      digest: 'sha256:d',
      pushedLayers: 1,
      existingLayers: 1,
      pushedBytes: 1000,
    });
  });

  it("an error line fails with the engine's words", () => {
    const progress = new PushProgress();
    progress.onLine({ errorDetail: { message: 'denied' }, error: 'denied: requested access is denied' });
    expect(() => progress.result()).toThrow('denied: requested access is denied');
    expect(() => new PushProgress().result()).toThrow('the engine reported no digest');
  });
});

describe('readJsonLines', () => {
  it('rejects a line that is not JSON', async () => {
    await expect(readJsonLines(Readable.from(['{"a":1}\nnot json\n']), () => undefined)).rejects.toThrow();
  });
});
