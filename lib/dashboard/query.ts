import { STEP_MARKERS } from '../trainers';
import type { TraceIndex } from './trace-index';

/*
 * What the page asks of an index: series on a step or time axis, downsampled to the pixels drawn
 * (min and max per pixel column, so spikes survive), the pipeline timeline merged to pixels, and where
 * each step's time went.
 *
 * The step axis: tracer.py's counters carry only `ts`, so a step is counted: the trainer emits one
 * `metrics` counter per optimizer step (else `titan.metrics`, `reward_stats`, `grpo.debug`), and an event
 * belongs to the first step whose marker is at or after it. Where counters carry an explicit `step`
 * (batch.padding does), the count is shifted to agree with it (a resumed run starts past step 1).
 */

export type Axis = 'step' | 'time';

const MARKERS = STEP_MARKERS;

function lowerBound(sorted: Float64Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface StepTable {
  /** The ts of each step's marker, ascending. */
  readonly markers: Float64Array;
  /** The step number of the first marker. */
  readonly first: number;
  readonly marker: string | undefined;
}

/** The marker counter with the most records among `name|*`. */
function markerTs(index: TraceIndex, name: string): Float64Array | undefined {
  let best: string | undefined;
  for (const key of index.keys('series')) {
    if (!key.startsWith(`${name}|`)) continue;
    if (!best || index.manifest.series[key].n > index.manifest.series[best].n) best = key;
  }
  if (!best) return undefined;
  const pairs = index.column('series', best);
  const ts = new Float64Array(pairs.length / 2);
  for (let i = 0; i < ts.length; i++) ts[i] = pairs[2 * i];
  return ts.sort();
}

export function stepTable(index: TraceIndex): StepTable {
  const explicit = index.column('steps', 'step');
  for (const name of MARKERS) {
    const markers = markerTs(index, name);
    if (!markers || markers.length === 0) continue;
    let first = 1;
    if (explicit.length >= 2) first = explicit[1] - lowerBound(markers, explicit[0]);
    return { markers, first, marker: name };
  }
  if (explicit.length >= 2) {
    const markers = new Float64Array(explicit.length / 2);
    for (let i = 0; i < markers.length; i++) markers[i] = explicit[2 * i];
    markers.sort();
    return { markers, first: explicit[1], marker: 'step' };
  }
  return { markers: new Float64Array(0), first: 1, marker: undefined };
}

export function stepOf(table: StepTable, ts: number): number {
  return table.first + lowerBound(table.markers, ts);
}

export interface XY {
  readonly x: number[];
  readonly y: number[];
  /** Records in the range before downsampling. */
  readonly n: number;
}

function round(v: number): number {
  return Number.isFinite(v) ? Number(v.toPrecision(7)) : v;
}

/**
 * Min and max per pixel column of x in [from, to] (both in the order they occur), so a series of any
 * length comes back as at most 2 × width points and its extremes are kept.
 */
export function downsample(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  width: number,
  from: number,
  to: number,
): XY {
  const outX: number[] = [];
  const outY: number[] = [];
  let n = 0;
  const span = to - from || 1;
  let bucket = -1;
  let minI = -1;
  let maxI = -1;
  const emit = (): void => {
    if (minI < 0) return;
    const [a, b] = minI <= maxI ? [minI, maxI] : [maxI, minI];
    outX.push(round(x[a]));
    outY.push(round(y[a]));
    if (b !== a) {
      outX.push(round(x[b]));
      outY.push(round(y[b]));
    }
  };
  for (let i = 0; i < x.length; i++) {
    const xi = x[i];
    if (xi < from || xi > to || Number.isNaN(y[i])) continue;
    n++;
    const b = Math.min(width - 1, Math.floor(((xi - from) / span) * width));
    if (b !== bucket) {
      emit();
      bucket = b;
      minI = i;
      maxI = i;
      continue;
    }
    if (y[i] < y[minI]) minI = i;
    if (y[i] > y[maxI]) maxI = i;
  }
  emit();
  return { x: outX, y: outY, n };
}

/** One series on the axis asked for, in x order. */
/** Fields a counter may carry its own step in (batch.padding: `step`; batch.lag, batch.datasets: `trained_at_step`). */
const OWN_STEP_FIELDS = ['step', 'trained_at_step'];

/** A counter's own step per record ts, when it carries one. */
function ownSteps(index: TraceIndex, key: string): Map<number, number> | undefined {
  const name = key.slice(0, key.indexOf('|'));
  for (const field of OWN_STEP_FIELDS) {
    const pairs = index.column('series', `${name}|${field}`);
    if (pairs.length === 0) continue;
    const steps = new Map<number, number>();
    for (let i = 0; i < pairs.length; i += 2) steps.set(pairs[i], pairs[i + 1]);
    return steps;
  }
  return undefined;
}

/**
 * One series on the axis asked for, in x order. On the step axis a record of a counter that carries
 * its own step is placed at that step, any other at the step counted from the markers.
 */
export function seriesOn(
  index: TraceIndex,
  key: string,
  axis: Axis,
  table: StepTable,
): { x: Float64Array; y: Float64Array } {
  const pairs = index.column('series', key);
  const n = pairs.length / 2;
  const own = axis === 'step' ? ownSteps(index, key) : undefined;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const ts = pairs[2 * i];
    x[i] = axis === 'time' ? ts : (own?.get(ts) ?? stepOf(table, ts));
    y[i] = pairs[2 * i + 1];
  }
  let sorted = true;
  for (let i = 1; i < n; i++)
    if (x[i] < x[i - 1]) {
      sorted = false;
      break;
    }
  if (sorted) return { x, y };
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => x[a] - x[b] || a - b);
  return { x: Float64Array.from(order, (i) => x[i]), y: Float64Array.from(order, (i) => y[i]) };
}

/** Values at the same x added up (several counters of one step: batch.lag per trained batch). */
export function sumByX(s: { x: Float64Array; y: Float64Array }): { x: Float64Array; y: Float64Array } {
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = 0; i < s.x.length; i++) {
    if (Number.isNaN(s.y[i])) continue;
    if (xs.length && xs[xs.length - 1] === s.x[i]) ys[ys.length - 1] += s.y[i];
    else {
      xs.push(s.x[i]);
      ys.push(s.y[i]);
    }
  }
  return { x: Float64Array.from(xs), y: Float64Array.from(ys) };
}

// ---- the pipeline timeline ----

export type Phase = 'generation' | 'verify' | 'reference' | 'training' | 'sync' | 'other';

export function phaseOf(span: string): Phase {
  const s = span.toLowerCase();
  if (s.startsWith('sync')) return 'sync';
  if (s.includes('logprob') || s.startsWith('ref') || s.includes('teacher')) return 'reference';
  if (s.startsWith('vllm') || s.includes('generat') || s.includes('rollout')) return 'generation';
  if (s.includes('verif')) return 'verify';
  if (s.includes('forward') || s.includes('backward') || s.includes('optim') || s.includes('train'))
    return 'training';
  return 'other';
}

export interface TimelineLane {
  readonly lane: string;
  readonly span: string;
  readonly phase: Phase;
  /** [start, end, spans merged] triples, flattened. */
  readonly bars: number[];
}

function laneName(span: string, group: number, slot: number): string {
  if (Number.isNaN(group) && Number.isNaN(slot)) return span;
  return `${span} ${Number.isNaN(group) ? '' : `#${group}`}${Number.isNaN(slot) ? '' : `/${slot}`}`.trim();
}

/** Spans in [from, to] per lane, neighbours closer than a pixel merged (at most ~width bars a lane). */
export function timeline(index: TraceIndex, from: number, to: number, width: number): TimelineLane[] {
  const px = (to - from) / Math.max(1, width);
  const lanes = new Map<string, { span: string; bars: number[][] }>();
  for (const span of index.keys('spans')) {
    const c = index.column('spans', span);
    const records: number[][] = [];
    for (let i = 0; i < c.length; i += 4) {
      const start = c[i];
      const end = start + (Number.isNaN(c[i + 1]) ? 0 : c[i + 1]);
      if (end < from || start > to) continue;
      records.push([start, end, c[i + 2], c[i + 3]]);
    }
    records.sort((a, b) => a[0] - b[0]);
    for (const [start, end, group, slot] of records) {
      const lane = laneName(span, group, slot);
      let l = lanes.get(lane);
      if (!l) {
        l = { span, bars: [] };
        lanes.set(lane, l);
      }
      const last = l.bars[l.bars.length - 1];
      if (last && start - last[1] < px) {
        last[1] = Math.max(last[1], end);
        last[2]++;
      } else l.bars.push([start, end, 1]);
    }
  }
  return [...lanes]
    .map(([lane, l]) => ({
      lane,
      span: l.span,
      phase: phaseOf(l.span),
      bars: l.bars.flatMap(([a, b, k]) => [round(a), round(b), k]),
    }))
    .sort(
      (a, b) => a.phase.localeCompare(b.phase) || a.lane.localeCompare(b.lane, undefined, { numeric: true }),
    );
}

/** Intervals sorted by start, with the longest one's length (a window's first candidate is found by bisection). */
interface Intervals {
  readonly list: number[][];
  readonly maxLength: number;
}

function intervals(list: number[][]): Intervals {
  list.sort((a, b) => a[0] - b[0]);
  let maxLength = 0;
  for (const [a, b] of list) maxLength = Math.max(maxLength, b - a);
  return { list, maxLength };
}

/** The total length of the union of the intervals clipped to [lo, hi]. */
function unionLength(iv: Intervals, lo: number, hi: number): number {
  const list = iv.list;
  // the first interval that can reach lo starts at or after lo - maxLength
  let i = 0;
  let j = list.length;
  const from = lo - iv.maxLength;
  while (i < j) {
    const mid = (i + j) >>> 1;
    if (list[mid][0] < from) i = mid + 1;
    else j = mid;
  }
  let total = 0;
  let curA = NaN;
  let curB = NaN;
  for (; i < list.length && list[i][0] < hi; i++) {
    const a = Math.max(list[i][0], lo);
    const b = Math.min(list[i][1], hi);
    if (b <= a) continue;
    if (Number.isNaN(curA) || a > curB) {
      if (!Number.isNaN(curA)) total += curB - curA;
      curA = a;
      curB = b;
    } else curB = Math.max(curB, b);
  }
  if (!Number.isNaN(curA)) total += curB - curA;
  return total;
}

export interface StepBreakdown {
  readonly steps: number[];
  /** Seconds per step. */
  readonly duration: number[];
  /** Wall seconds per step with at least one span of the phase running. */
  readonly phases: Record<Phase, number[]>;
  /** Seconds per step the trainer ran nothing (no training, reference or sync span). */
  readonly trainerIdle: number[];
  /** Mean over generation lanes (replica/slot) of the seconds each sat without a request. */
  readonly rolloutIdle: number[];
}

/** Where each step's time went, from the spans between consecutive step markers. */
export function stepBreakdown(index: TraceIndex, table: StepTable): StepBreakdown {
  const byPhase = new Map<Phase, number[][]>();
  const byLane = new Map<string, number[][]>();
  for (const span of index.keys('spans')) {
    const phase = phaseOf(span);
    const c = index.column('spans', span);
    const list = byPhase.get(phase) ?? [];
    for (let i = 0; i < c.length; i += 4) {
      const iv = [c[i], c[i] + (Number.isNaN(c[i + 1]) ? 0 : c[i + 1])];
      list.push(iv);
      if (phase === 'generation') {
        const lane = laneName(span, c[i + 2], c[i + 3]);
        const l = byLane.get(lane) ?? [];
        l.push(iv);
        byLane.set(lane, l);
      }
    }
    byPhase.set(phase, list);
  }
  const phaseIv = new Map([...byPhase].map(([p, l]) => [p, intervals(l)]));
  const laneIv = [...byLane.values()].map(intervals);
  const phases = Object.fromEntries(
    (['generation', 'verify', 'reference', 'training', 'sync', 'other'] as Phase[]).map((p) => [
      p,
      [] as number[],
    ]),
  ) as Record<Phase, number[]>;
  const out: StepBreakdown = { steps: [], duration: [], phases, trainerIdle: [], rolloutIdle: [] };
  const trainer = intervals([
    ...(byPhase.get('training') ?? []),
    ...(byPhase.get('reference') ?? []),
    ...(byPhase.get('sync') ?? []),
  ]);
  const none = intervals([]);
  const m = table.markers;
  for (let k = 0; k < m.length; k++) {
    const lo = k === 0 ? index.manifest.tsMin : m[k - 1];
    const hi = m[k];
    out.steps.push(table.first + k);
    out.duration.push(round(hi - lo));
    for (const p of Object.keys(phases) as Phase[])
      phases[p].push(round(unionLength(phaseIv.get(p) ?? none, lo, hi)));
    out.trainerIdle.push(round(hi - lo - unionLength(trainer, lo, hi)));
    let idle = 0;
    for (const l of laneIv) idle += hi - lo - unionLength(l, lo, hi);
    out.rolloutIdle.push(round(laneIv.length ? idle / laneIv.length : 0));
  }
  return out;
}
