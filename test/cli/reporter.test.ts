import { Writable } from 'node:stream';
import { createReporter, renderEvent } from '../../bin/reporter';
import type { ProgressEvent } from '../../lib/progress';

/** A stream that keeps what is written, and says whether it is a terminal. */
function sink(isTTY: boolean): Writable & { text: () => string; isTTY: boolean } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  }) as Writable & { text: () => string; isTTY: boolean };
  stream.isTTY = isTTY;
  stream.text = () => chunks.join('');
  return stream;
}

const EVENTS: ProgressEvent[] = [
  { type: 'step', message: 'staging the source' },
  { type: 'progress', bytes: 512, totalBytes: 1024 },
  { type: 'progress', bytes: 1024, totalBytes: 1024 },
  { type: 'file', key: 'checkpoints/x/model.safetensors', bytes: 2048, skipped: false },
  { type: 'note', message: 'r_final: renamed' },
];

describe('the one progress reporter', () => {
  it('on a terminal: progress is one live line, cleared before the next event', () => {
    const out = sink(true);
    const report = createReporter({ json: false, stream: out });
    for (const e of EVENTS) report(e);
    expect(out.text()).toBe(
      '• staging the source\n' +
        '\r512 B / 1.0 KiB (50%)   \r1.0 KiB / 1.0 KiB (100%)   \r\x1b[K' +
        'done  checkpoints/x/model.safetensors (2.0 KiB)\nnote: r_final: renamed\n',
    );
  });

  it('elsewhere: plain lines, progress at most every few seconds, no control characters', () => {
    const out = sink(false);
    const report = createReporter({ json: false, stream: out, plainProgressEveryMs: 60_000 });
    for (const e of EVENTS) report(e);
    expect(out.text()).toBe(
      '• staging the source\n512 B / 1.0 KiB (50%)\n' +
        'done  checkpoints/x/model.safetensors (2.0 KiB)\nnote: r_final: renamed\n',
    );
  });

  it('with --json: every event as one JSON line, even on a terminal', () => {
    const out = sink(true);
    const report = createReporter({ json: true, stream: out });
    for (const e of EVENTS) report(e);
    const lines = out.text().trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual(EVENTS);
  });

  it('routes events where the command says (rlvr logs: log lines to stdout, waiting notes to stderr)', () => {
    const stdout = sink(false);
    const stderr = sink(false);
    const report = createReporter({
      json: false,
      stream: stderr,
      streamFor: (e) => (e.type === 'waiting' ? stderr : stdout),
    });
    report({ type: 'line', timestamp: Date.UTC(2026, 0, 25, 10, 0, 0), host: 'algo-1', message: 'step 1\n' });
    report({ type: 'waiting', message: 'no log streams yet' });
    expect(stdout.text()).toMatch(/^\S.* \[algo-1\] step 1\n$/);
    expect(stderr.text()).toBe('… no log streams yet\n');
  });

  it('renders every kind of event of every long operation', () => {
    const kinds: ProgressEvent[] = [
      { type: 'warning', message: 'GPU 7 would sit idle' },
      { type: 'retry', message: 'retrying push' },
      { type: 'build-step', name: 'RUN uv sync', cached: true },
      { type: 'layer', id: 'sha256:ab', status: 'pushed', bytes: 1024 },
      { type: 'layer', id: 'sha256:cd', status: 'exists', bytes: 0 },
      { type: 'status', status: 'InProgress', secondary: 'Training', message: 'running', time: new Date() },
      {
        type: 'started',
        name: 'x',
        image: 'img',
        binds: [{ what: 'model', host: '/m' }],
        runDir: '/r',
        gpus: 0,
      },
      { type: 'stopping', graceSeconds: 120 },
      { type: 'failed', reason: 'exit 1' },
    ];
    const lines = kinds.map(renderEvent);
    expect(lines).toEqual([
      '  warning: GPU 7 would sit idle',
      '• retrying push',
      '  cached RUN uv sync',
      '  pushed layer sha256:ab (1.0 KiB)',
      '  layer sha256:cd already in the registry',
      expect.stringMatching(/ == Training: running$/),
      '• local run x: img\n  model: /m\n  run folder: /r\n  no GPUs: pass --gpus 0,1,… to give the container host GPUs',
      '\n• stopping: SIGTERM to the job, SIGKILL after 120 s',
      '• the job failed: exit 1',
    ]);
  });
});
