import * as fs from 'node:fs';

/*
 * Traces in the trainer's event format (tracer.py: `json.dumps(event)`, so `", "` and `": "` spacing;
 * their tracer.py), for the dashboard's tests and benchmark. Per step, as their GRPO trainers emit: vLLM
 * generation spans per replica/slot, verify spans per worker/slot, ref_logprobs, forward_backward,
 * optim_step and sync spans; buffer events per put/pop/use with cumulative per-version fates; the
 * counters metrics, grpo.debug, reward_stats, titan.metrics, batch.padding, batch.finish_reasons,
 * batch.reward_vs_len, batch.lag and batch.datasets (two lag counters a step, each with its
 * trained_at_step), rewards; and one counter no panel knows (`custom.probe`).
 */

/** Python's json.dumps spacing. */
export function pyJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(pyJson).join(', ')}]`;
  if (v && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${pyJson(x)}`)
      .join(', ')}}`;
  return JSON.stringify(v);
}

export interface TraceOptions {
  readonly steps: number;
  /** Step seconds: @default 30 */
  readonly stepSeconds?: number;
  /** Completions per step. @default 16 */
  readonly batch?: number;
  /** Buffer events per step. @default 3 × batch */
  readonly bufferEvents?: number;
  /** Shifts the reward curve (a sweep's runs differ by it). @default 0 */
  readonly rewardOffset?: number;
  readonly firstStep?: number;
  readonly startTs?: number;
  readonly datasets?: readonly string[];
  /** Steps vary by up to ± this fraction of stepSeconds (their own stream: other values stay as they were). @default 0 */
  readonly stepJitter?: number;
  /**
   * A checkpoint export after every this many steps, as their trainers do it: after the step's counters,
   * before the next step (it shows in the trace only as the next step starting late). @default none
   */
  readonly exportEvery?: number;
  /** Seconds an export takes. @default 0 */
  readonly exportSeconds?: number;
}

/** A deterministic pseudo-random stream (tests compare exact values). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

const r6 = (x: number): number => Math.round(x * 1e6) / 1e6;

/** The lines of steps [firstStep, firstStep + steps), each ending in a newline. */
export function* traceLines(o: TraceOptions): Generator<string> {
  const stepSeconds = o.stepSeconds ?? 30;
  const batch = o.batch ?? 16;
  const bufferEvents = o.bufferEvents ?? 3 * batch;
  const datasets = o.datasets ?? ['gsm8k', 'math'];
  const first = o.firstStep ?? 1;
  const rand = rng(first * 7919 + Math.round((o.rewardOffset ?? 0) * 1000));
  const fates: Record<string, Record<string, number>> = { used: {}, wasted: {}, filtered: {}, failed: {} };
  if (first === 1)
    yield `${pyJson({ type: 'meta', ts: 0, model: 'Qwen/Qwen3-1.7B-Base', trainer: 'grpo', vllm_replicas: 2 })}\n`;
  const jitter = rng(first * 104729 + 17);
  let drift = 0;
  for (let step = first; step < first + o.steps; step++) {
    if (o.stepJitter) drift += (jitter() * 2 - 1) * o.stepJitter * stepSeconds;
    const exports = o.exportEvery ? Math.floor((step - 1) / o.exportEvery) * (o.exportSeconds ?? 0) : 0;
    const t0 = (o.startTs ?? 0.5) + (step - 1) * stepSeconds + drift + exports;
    const gen = stepSeconds * 0.5;
    for (let i = 0; i < batch; i++) {
      const replica = i % 2;
      const slot = Math.floor(i / 2) % 4;
      const ts = t0 + (gen * i) / batch;
      yield `${pyJson({ type: 'span', name: 'vllm.generate_single', ts: r6(ts), dur: r6((gen / batch) * 1.6), replica, slot })}\n`;
      yield `${pyJson({ type: 'span', name: 'verify', ts: r6(ts + 0.1), dur: 0.05, worker: i % 2, slot: 0, passed: i % 3 ? 1 : 0, prompt_id: `p${step}-${i}`, version: step - 1 })}\n`;
    }
    for (let i = 0; i < bufferEvents; i++) {
      const v = String(step - 1);
      fates.used[v] = (fates.used[v] ?? 0) + (i % 3 === 2 ? 1 : 0);
      if (i === 0) fates.wasted[v] = 1;
      yield `${pyJson({ type: 'buffer', ts: r6(t0 + (gen * i) / bufferEvents), size: (i % 7) + 1, by_version: { [v]: (i % 5) + 1 }, fates })}\n`;
    }
    const tr = t0 + gen;
    yield `${pyJson({ type: 'span', name: 'ref_logprobs', ts: r6(tr), dur: stepSeconds * 0.1 })}\n`;
    yield `${pyJson({ type: 'span', name: 'forward_backward', ts: r6(tr + stepSeconds * 0.1), dur: stepSeconds * 0.2 })}\n`;
    yield `${pyJson({ type: 'span', name: 'optim_step', ts: r6(tr + stepSeconds * 0.3), dur: stepSeconds * 0.05 })}\n`;
    const rewards: number[] = Array.from({ length: batch }, () =>
      rand() < 0.3 + step * 0.002 + (o.rewardOffset ?? 0) ? 1 : 0,
    );
    const lens = Array.from({ length: batch }, () => 50 + Math.floor(rand() * 400));
    const ds = Array.from({ length: batch }, (_, i) => datasets[i % datasets.length]);
    const avg = rewards.reduce((a, b) => a + b, 0) / batch;
    const tc = r6(tr + stepSeconds * 0.36);
    yield `${pyJson({ type: 'counter', name: 'batch.padding', ts: tc, seq_padding_pct: 12.5, completion_padding_pct: 20.25, padded_seq_len: 768, padded_completion_len: 512, seq_lens: lens.map((l) => l + 200), completion_lens: lens, step })}\n`;
    yield `${pyJson({ type: 'counter', name: 'batch.finish_reasons', ts: tc, stop: batch - 2, length: 2 })}\n`;
    yield `${pyJson({ type: 'counter', name: 'batch.reward_vs_len', ts: tc, rewards, completion_lens: lens, datasets: ds, step })}\n`;
    // two trained batches this step (their LEGACY trainer's per-batch counters, with their own step)
    yield `${pyJson({ type: 'counter', name: 'batch.lag', ts: tc, trained_at_step: step, lag_0: 3, lag_1: 1 })}\n`;
    yield `${pyJson({ type: 'counter', name: 'batch.lag', ts: tc, trained_at_step: step, lag_0: 2, lag_2: 1 })}\n`;
    yield `${pyJson({ type: 'counter', name: 'batch.datasets', ts: tc, trained_at_step: step, gsm8k: 2, gsm8k_tokens: 300, math: 2, math_tokens: 500 })}\n`;
    yield `${pyJson({ type: 'counter', name: 'rewards', ts: tc, mean: avg, max: Math.max(...rewards), num_positive: rewards.filter((r) => r > 0).length })}\n`;
    const tm = r6(tr + stepSeconds * 0.4);
    yield `${pyJson({ type: 'counter', name: 'metrics', ts: tm, loss: r6(1 / step), grad_norm: r6(0.5 + rand()), avg_reward: avg })}\n`;
    yield `${pyJson({ type: 'counter', name: 'grpo.debug', ts: tm, kl_mean: r6(0.01 * step), entropy_mean: r6(2 - step * 0.001), clip_frac: 0.1 })}\n`;
    yield `${pyJson({ type: 'counter', name: 'reward_stats', ts: tm, reward_overall: avg, reward_used: avg, frac_all_correct: 0.1, frac_all_wrong: 0.2 })}\n`;
    yield `${pyJson({ type: 'counter', name: 'titan.metrics', ts: tm, mfu: 41.5, tps: 12000, memory_max_reserved_gib: 60 })}\n`;
    yield `${pyJson({ type: 'counter', name: 'custom.probe', ts: tm, alpha: step * 2, beta: -step })}\n`;
    yield `${pyJson({ type: 'span', name: 'sync.trainer_to_vllm', ts: r6(tr + stepSeconds * 0.41), dur: stepSeconds * 0.04 })}\n`;
    if (step % 10 === 0)
      yield `${pyJson({ type: 'instant', name: 'checkpoint', ts: r6(tr + stepSeconds * 0.45), step })}\n`;
  }
}

/** Writes (or appends) a trace; returns its size. */
export function writeTrace(file: string, o: TraceOptions, append = false): number {
  const fd = fs.openSync(file, append ? 'a' : 'w');
  try {
    let chunk: string[] = [];
    for (const line of traceLines(o)) {
      chunk.push(line);
      if (chunk.length >= 4096) {
        fs.writeSync(fd, chunk.join(''));
        chunk = [];
      }
    }
    fs.writeSync(fd, chunk.join(''));
  } finally {
    fs.closeSync(fd);
  }
  return fs.statSync(file).size;
}
