import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { CheckpointTracker } from '../../lib/checkpoints';
import { runEntrypoint } from '../../lib/container/entrypoint';
import { packSource, stageSource } from '../../lib/source';
import { safetensorsWith, tempDir } from '../helpers/fixtures';
import { entrypointEnv, fakeMlRoot, type MlRootOptions } from '../helpers/ml-root';

jest.setTimeout(60_000);

/**
 * The entrypoint in this process, on a folder standing in for /opt/ml, with real child processes
 * (sh): the container contract's edges that the Docker tests do not reach.
 */
const TITAN_CONFIG =
  'run:\n  name: r\ntraining:\n  checkpoint_interval: 1\nroles:\n  - name: trainer\n    kind: titan\n    config:\n      optimizer:\n        lr: 1.0e-6\n';

/** /opt/ml for a trainer without a profile (`sh train.sh`): it writes where it is told. */
function mlRoot(options: MlRootOptions = {}): string {
  return fakeMlRoot({ config: TITAN_CONFIG, ...options });
}

const envFor = entrypointEnv;

// The smallest whole safetensors file: an 8-byte header length (2), then the header `{}`.
const WRITE_FINAL =
  'mkdir -p "$RLVR_CHECKPOINT_DIR/r_final" && printf \'\\002\\000\\000\\000\\000\\000\\000\\000{}\' > "$RLVR_CHECKPOINT_DIR/r_final/model.safetensors" && echo {} > "$RLVR_CHECKPOINT_DIR/r_final/config.json"';

function withCode(root: string): void {
  fs.mkdirSync(path.join(root, 'code'), { recursive: true });
  fs.writeFileSync(path.join(root, 'code', 'train.sh'), `${WRITE_FINAL}\n`);
}

describe('container entrypoint (in process)', () => {
  it('unpacks the code channel and runs the trainer from it', async () => {
    const root = mlRoot();
    const src = tempDir('rlvr-src-');
    fs.mkdirSync(path.join(src, 'entrypoints'));
    fs.writeFileSync(path.join(src, 'entrypoints', 'train.sh'), `${WRITE_FINAL}\necho "ran from $(pwd)"\n`);
    const packed = await packSource(await stageSource({ root: src }));
    fs.mkdirSync(path.join(root, 'input', 'data', 'code'), { recursive: true });
    fs.writeFileSync(path.join(root, 'input', 'data', 'code', `${packed.sha256}.tar.gz`), packed.gzip);
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString()));
    const code = await runEntrypoint({
      root,
      env: envFor(root, 'sh entrypoints/train.sh {config}', { RLVR_SOURCE_SHA256: packed.sha256 }),
      out,
      pollMs: 50,
      stableMs: 0,
    });
    expect(code).toBe(0);
    expect(text).toContain(`[trainer] ran from ${path.join(root, 'code')}`);
    expect(fs.readdirSync(path.join(root, 'model')).sort()).toEqual([
      'RESULTS.md',
      'config.yaml',
      'run.json',
      'summary.json',
    ]);
    // The config keeps the trainer's float spelling that PyYAML reads as a float.
    expect(fs.readFileSync(path.join(root, 'checkpoints', 'config.yaml'), 'utf8')).toContain('lr: 1.0e-6');
  });

  it("keeps the forecast the job was given in run.json, beside each attempt's start and its trainer's start and end", async () => {
    const forecast = {
      shape: { trainer: 'custom' },
      maxSteps: 3,
      secondsPerStep: 1.5,
      wallSeconds: 20,
      similarRuns: 2,
    };
    const base = JSON.parse(
      fs.readFileSync(path.join(mlRoot(), 'input', 'data', 'config', 'contract.json'), 'utf8'),
    );
    const root = mlRoot({ contract: { ...base, forecast } });
    withCode(root);
    const code = await runEntrypoint({
      root,
      env: envFor(root, `sleep 0.3; ${WRITE_FINAL}`),
      out: new PassThrough(),
      pollMs: 50,
      stableMs: 0,
    });
    expect(code).toBe(0);
    const runInfo = JSON.parse(fs.readFileSync(path.join(root, 'model', 'run.json'), 'utf8'));
    expect(runInfo.forecast).toEqual(forecast);
    const [attempt] = runInfo.attempts;
    const started = Date.parse(attempt.startedAt);
    const trainerStarted = Date.parse(attempt.trainerStartedAt);
    const trainerEnded = Date.parse(attempt.trainerEndedAt);
    expect(trainerStarted).toBeGreaterThanOrEqual(started);
    expect(trainerEnded - trainerStarted).toBeGreaterThanOrEqual(300);
    expect(Date.parse(attempt.endedAt)).toBeGreaterThanOrEqual(trainerEnded);
  });

  it("turns CUDA forward compatibility on for a driver older than the image's compat library, for every process, and says so", async () => {
    const proc = tempDir('rlvr-proc-');
    fs.mkdirSync(path.join(proc, 'driver', 'nvidia'), { recursive: true });
    fs.writeFileSync(
      path.join(proc, 'driver', 'nvidia', 'version'),
      'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n',
    );
    const compatDir = tempDir('rlvr-compat-');
    fs.writeFileSync(path.join(compatDir, 'libcuda.so.570.124.06'), '');
    fs.symlinkSync('libcuda.so.570.124.06', path.join(compatDir, 'libcuda.so.1'));
    const root = mlRoot();
    withCode(root);
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString()));
    const code = await runEntrypoint({
      root,
      env: envFor(root, `echo "LD=$LD_LIBRARY_PATH"; ${WRITE_FINAL}`, {
        LD_LIBRARY_PATH: '/opt/amazon/efa/lib',
        CUDA_VERSION: '12.8.1',
      }),
      out,
      pollMs: 50,
      stableMs: 0,
      cudaCompat: { procRoot: proc, compatDir },
    });
    expect(code).toBe(0);
    expect(text).toContain(`[trainer] LD=${compatDir}:/opt/amazon/efa/lib`);
    expect(text).toMatch(/\[rlvr\] CUDA forward compatibility: on .*host driver 535\.104\.05 is older/);
    const runInfo = JSON.parse(fs.readFileSync(path.join(root, 'model', 'run.json'), 'utf8'));
    expect(runInfo.cudaCompat).toMatchObject({ enabled: true });
  });

  it('refuses an eval config with tensor parallelism other than 1, before starting anything', async () => {
    const root = mlRoot({ evalConfig: 'vllm:\n  tensor_parallel_size: 2\nwatch:\n  enable: true\n' });
    withCode(root);
    const code = await runEntrypoint({
      root,
      env: envFor(root, `${WRITE_FINAL}; touch "$RLVR_RUN_DIR/trainer-started"`, {
        RLVR_EVAL_CONFIG: path.join(root, 'input', 'data', 'config', 'eval-config.yaml'),
        RLVR_EVAL_GPUS: '1',
      }),
      out: new PassThrough(),
    });
    expect(code).toBe(1);
    expect(fs.readFileSync(path.join(root, 'output', 'failure'), 'utf8')).toMatch(
      /^the eval config asks for tensor_parallel_size 2/,
    );
    expect(fs.existsSync(path.join(root, 'checkpoints', 'trainer-started'))).toBe(false);
  });

  it('a multi-host job without Ray fails on every host, saying why (no host trains alone)', async () => {
    for (const host of ['algo-1', 'algo-2']) {
      const root = mlRoot({ hosts: ['algo-1', 'algo-2'], host });
      withCode(root);
      const code = await runEntrypoint({
        root,
        env: envFor(root, 'sh train.sh'),
        out: new PassThrough(),
        pollMs: 50,
        stableMs: 0,
      });
      expect(code).toBe(1);
      expect(fs.readFileSync(path.join(root, 'output', 'failure'), 'utf8')).toMatch(
        /^2 hosts but RLVR_USE_RAY is not 1: nothing would join them into one cluster/,
      );
      expect(fs.existsSync(path.join(root, 'checkpoints', 'checkpoints'))).toBe(false);
    }
  });

  it('gives the eval watcher a bounded time to finish once training has ended', async () => {
    const root = mlRoot({ evalConfig: 'vllm:\n  tensor_parallel_size: 1\nwatch:\n  enable: true\n' });
    withCode(root);
    const code = await runEntrypoint({
      root,
      env: envFor(root, 'sh train.sh', {
        RLVR_EVAL_CONFIG: path.join(root, 'input', 'data', 'config', 'eval-config.yaml'),
        RLVR_EVAL_GPUS: '1',
        // A watcher that never notices the done file.
        RLVR_EVAL_COMMAND: 'while true; do sleep 0.1; done',
      }),
      out: new PassThrough(),
      pollMs: 50,
      stableMs: 0,
      evalFinalTimeoutMs: 500,
      evalTermGraceMs: 200,
      tmpRoot: path.join(root, 'tmp'),
    });
    expect(code).toBe(0);
    const summary = JSON.parse(fs.readFileSync(path.join(root, 'checkpoints', 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({ status: 'Completed', eval: { timedOut: true } });
    // The watcher sees a folder of links: what it adds there stays out of the streamed checkpoint.
    const view = path.join(root, 'tmp', 'rlvr-eval-view', 'r_final');
    expect(fs.readdirSync(view).sort()).toEqual(['config.json', 'model.safetensors']);
    expect(fs.readlinkSync(path.join(view, 'model.safetensors'))).toBe(
      path.join(root, 'checkpoints', 'checkpoints', 'r_final', 'model.safetensors'),
    );
  });

  it('kills a trainer that ignores SIGTERM once the grace period is over', async () => {
    const root = mlRoot();
    withCode(root);
    const started = Date.now();
    const stop = new AbortController();
    const run = runEntrypoint({
      root,
      env: envFor(root, `trap "" TERM; ${WRITE_FINAL}; while true; do sleep 0.1; done`),
      out: new PassThrough(),
      graceMs: 700,
      pollMs: 50,
      signal: stop.signal,
    });
    await new Promise((r) => setTimeout(r, 500));
    stop.abort(); // main.ts does this on SIGTERM
    await run;
    expect(Date.now() - started).toBeLessThan(10_000);
    const summary = JSON.parse(fs.readFileSync(path.join(root, 'checkpoints', 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({ status: 'Stopped', killedAfterGrace: true, checkpoints: ['r_final'] });
  });
});

/** A whole safetensors file of `elems` 2-byte values (the shared fixture helper). */
const safetensors = (elems: number): Buffer => safetensorsWith(Buffer.alloc(2 * elems, 1));

describe('checkpoint completeness (one rule: weights whole, writer finished)', () => {
  it('needs every indexed shard at the size its header gives, then a later checkpoint or stableMs without change', () => {
    const dir = tempDir('rlvr-ckpt-');
    let now = 0;
    const tracker = new CheckpointTracker(
      () => [dir],
      1000,
      () => now,
    );
    const names = () => tracker.complete().map((c) => c.name);
    const ckpt = path.join(dir, 'run_step10');
    fs.mkdirSync(ckpt);
    fs.writeFileSync(
      path.join(ckpt, 'model.safetensors.index.json'),
      JSON.stringify({
        weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' },
      }),
    );
    fs.writeFileSync(path.join(ckpt, 'config.json'), '{}');
    fs.writeFileSync(path.join(ckpt, 'model-00001-of-00002.safetensors'), safetensors(100));
    expect(tracker.scan()).toEqual([]); // a shard missing
    const shard2 = safetensors(200);
    fs.writeFileSync(path.join(ckpt, 'model-00002-of-00002.safetensors'), shard2.subarray(0, 300));
    now += 5000;
    expect(tracker.scan()).toEqual([]); // shorter than its header says: still being written
    expect(tracker.scan()).toEqual([]);
    fs.writeFileSync(path.join(ckpt, 'model-00002-of-00002.safetensors'), shard2);
    expect(tracker.scan()).toEqual([]); // whole, first look: not yet known to be finished
    now += 999;
    expect(tracker.scan()).toEqual([]);
    now += 1;
    expect(tracker.scan()).toEqual([{ name: 'run_step10', path: ckpt }]);
    expect(tracker.scan()).toEqual([]); // shown once
    // Their export: model.safetensors, and the indexed shard names as links to it.
    const next = path.join(dir, 'run_step20');
    fs.mkdirSync(next);
    fs.writeFileSync(path.join(next, 'model.safetensors'), safetensors(100));
    fs.writeFileSync(
      path.join(next, 'model.safetensors.index.json'),
      JSON.stringify({ weight_map: { a: 'model-00001-of-00001.safetensors' } }),
    );
    fs.symlinkSync('model.safetensors', path.join(next, 'model-00001-of-00001.safetensors'));
    expect(tracker.scan()).toEqual([]);
    fs.mkdirSync(path.join(dir, 'run_step30'));
    expect(tracker.scan()).toEqual([]); // weights whole, but their export copies config.json after them
    fs.writeFileSync(path.join(next, 'config.json'), '{}');
    // A later checkpoint says the writer moved on: complete without waiting.
    fs.mkdirSync(path.join(dir, 'run_final'));
    expect(tracker.scan().map((c) => c.name)).toEqual(['run_step20']);
    // Shards without their index yet (save_pretrained writes it last): every one of the set, then the index.
    const sharded = path.join(dir, 'other_step5');
    fs.mkdirSync(sharded);
    fs.writeFileSync(path.join(sharded, 'config.json'), '{}');
    fs.writeFileSync(path.join(sharded, 'model-00001-of-00002.safetensors'), safetensors(10));
    expect(tracker.scan(true)).toEqual([]);
    fs.writeFileSync(path.join(sharded, 'model-00002-of-00002.safetensors'), safetensors(10));
    expect(tracker.scan(true)).toEqual([]);
    fs.writeFileSync(
      path.join(sharded, 'model.safetensors.index.json'),
      JSON.stringify({
        weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' },
      }),
    );
    expect(tracker.scan(true).map((c) => c.name)).toEqual(['other_step5']);
    fs.mkdirSync(path.join(dir, 'not-a-checkpoint'));
    fs.writeFileSync(path.join(dir, 'not-a-checkpoint', 'model.safetensors'), safetensors(1));
    now += 5000;
    tracker.scan(true);
    // run_final and run_step30 have no weights.
    expect(names()).toEqual(['other_step5', 'run_step10', 'run_step20']);
  });
});
