import * as fs from 'node:fs';
import { OWN_STEP_FIELD, STEP_MARKERS } from '../trainers';
import { forEachLineBlock, NOFOLLOW } from '../util';

/*
 * How long a run's steps take, from its trace: the trainer's once-a-step counters (STEP_MARKERS) and
 * their `ts`. Only counter lines are parsed (a few per step, against hundreds of spans and buffer
 * events), and a trace is never read whole: the head up to its first step and a tail hold all a
 * forecast needs (when training began; the rate of its recent steps), whatever the trace's size.
 */

/** What a trace says of its steps. */
export interface StepClock {
  /** The counter counted as the step (undefined: no step seen). */
  readonly marker: string | undefined;
  /** The `ts` of each marker seen, in file order. */
  readonly markers: readonly number[];
  /** The highest step a counter carried itself, if any did. */
  readonly lastStep: number | undefined;
}

const COUNTER = Buffer.from('{"type": "counter"', 'latin1');
const OPEN = 0x7b;

/** Collects counter records from whole lines. */
export class StepClockReader {
  private readonly byName = new Map<string, number[]>();
  private lastStep: number | undefined;

  /** Reads buf[start, stop), whole lines (a cut first line is the caller's to skip). */
  lines(buf: Buffer, start: number, stop: number): void {
    let at = start;
    while (at < stop) {
      let nl = buf.indexOf(10, at);
      if (nl < 0 || nl >= stop) nl = stop;
      if (buf[at] === OPEN) this.line(buf, at, nl);
      at = nl + 1;
    }
  }

  private line(buf: Buffer, start: number, end: number): void {
    const counter =
      end - start > COUNTER.length &&
      buf.compare(COUNTER, 0, COUNTER.length, start, start + COUNTER.length) === 0;
    if (!counter) return;
    let event: unknown;
    try {
      event = JSON.parse(buf.toString('utf8', start, end));
    } catch {
      return; // a line still being written, or not the trainer's
    }
    if (!event || typeof event !== 'object') return;
    const { name, ts } = event as Record<string, unknown>;
    if (typeof ts !== 'number' || !Number.isFinite(ts)) return;
    const own = (event as Record<string, unknown>)[OWN_STEP_FIELD];
    if (typeof own === 'number' && Number.isInteger(own) && own >= 0)
      this.lastStep = Math.max(this.lastStep ?? 0, own);
    if (typeof name !== 'string' || !(STEP_MARKERS as readonly string[]).includes(name)) return;
    let list = this.byName.get(name);
    if (!list) this.byName.set(name, (list = []));
    list.push(ts);
  }

  clock(): StepClock {
    const marker = STEP_MARKERS.find((m) => (this.byName.get(m)?.length ?? 0) > 0);
    return {
      marker,
      markers: marker ? this.byName.get(marker)! : [],
      lastStep: this.lastStep,
    };
  }
}

/** A clock from a block of text that may begin mid-line (a ranged read of a trace's tail). */
export function clockOfTail(tail: Buffer, cutFirstLine: boolean): StepClock {
  const reader = new StepClockReader();
  let start = 0;
  if (cutFirstLine) {
    const nl = tail.indexOf(10);
    start = nl < 0 ? tail.length : nl + 1;
  }
  const lastNl = tail.lastIndexOf(10);
  reader.lines(tail, start, lastNl < start ? start : lastNl + 1);
  return reader.clock();
}

/** The seconds between consecutive markers (a restart's trace starts its clock again: such gaps are left out). */
export function stepIntervals(markers: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < markers.length; i++) {
    const d = markers[i] - markers[i - 1];
    if (d > 0) out.push(d);
  }
  return out;
}

/** How much of a trace is read at each end: a few hundred steps of their trainers' events. */
export const TRACE_WINDOW = 16 * 1024 * 1024;

/** What one trace file says: when its first step ended, and its recent steps' seconds. */
export interface TraceTiming {
  /** Seconds from the tracer's start to the end of the first step (undefined: no step yet). */
  readonly firstStepTs: number | undefined;
  /** Seconds of each step in the tail read (a finished run's steady rate). */
  readonly intervals: readonly number[];
  /** Seconds from the tracer's start to the end of the last step seen. */
  readonly lastStepTs: number | undefined;
  readonly lastStep: number | undefined;
  /** Markers counted in the whole file, when it was read whole (small traces). */
  readonly steps: number | undefined;
}

/** A local trace's timing: its head up to the first step, and its tail (the whole file when small). */
export function traceTiming(file: string, window = TRACE_WINDOW): TraceTiming {
  // Never blocks: a FIFO swapped in after the folder was listed is refused, not waited on.
  const fd = fs.openSync(file, fs.constants.O_RDONLY | NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0));
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new Error(`${file} is not a regular file`);
    const size = st.size;
    if (size <= 2 * window) {
      const reader = new StepClockReader();
      forEachLineBlock(fd, 0, size, window, (buf, start, stop) => reader.lines(buf, start, stop));
      const c = reader.clock();
      return {
        firstStepTs: c.markers[0],
        intervals: stepIntervals(c.markers),
        lastStepTs: c.markers[c.markers.length - 1],
        lastStep: c.lastStep,
        steps: c.markers.length,
      };
    }
    const head = new StepClockReader();
    forEachLineBlock(fd, 0, window, window, (buf, start, stop) => head.lines(buf, start, stop));
    const tailBuf = Buffer.alloc(window);
    const got = fs.readSync(fd, tailBuf, 0, window, size - window);
    const tail = clockOfTail(tailBuf.subarray(0, got), true);
    return {
      firstStepTs: head.clock().markers[0],
      intervals: stepIntervals(tail.markers),
      lastStepTs: tail.markers[tail.markers.length - 1],
      lastStep: tail.lastStep,
      steps: undefined,
    };
  } finally {
    fs.closeSync(fd);
  }
}
