/**
 * Files a process appends to all job long, kept out of the run folder and copied into it in segments.
 * SageMaker uploads /opt/ml/checkpoints while the job runs, and nothing says it sends only a changed file's
 * new bytes: a file that grows all job would be sent whole on every sync, so upload traffic would grow
 * with the square of the output. Here the process writes its file in a work folder outside the run
 * folder, and the job copies the file's complete lines into segment files in the run folder (names:
 * passk-records' segments.ts), each written once under a temporary name and renamed, so each is uploaded
 * once. A segment is sealed when the complete lines not yet copied reach a size bound, or when the oldest
 * of them has waited an age bound (what a hard kill can lose), and at once when the process ends or the
 * job is told to stop. A partial last line is never copied (the process is still writing it).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { segmentName, segmentSeq, streamOrder } from '../passk-records';
import { copyBytes, NOFOLLOW, openRegularFile, writeFileAtomicWith } from '../util';

export interface SegmentBounds {
  /** Complete bytes waiting that seal a segment. */
  readonly bytes: number;
  /** How long complete bytes may wait before they are sealed: at most this much work is lost to a kill. */
  readonly ageMs: number;
  /** How often the files are looked at. */
  readonly tickMs: number;
}

export const SEGMENT_BOUNDS: SegmentBounds = { bytes: 8 * 1024 * 1024, ageMs: 60_000, tickMs: 2_000 };

const CHUNK = 1024 * 1024;

/** Where the last complete line of bytes [from, to) of `fd` ends (from when there is none). */
function lastLineEnd(fd: number, from: number, to: number): number {
  const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, to - from)));
  for (let end = to; end > from;) {
    const start = Math.max(from, end - buf.length);
    const n = fs.readSync(fd, buf, 0, end - start, start);
    const at = buf.subarray(0, n).lastIndexOf(0x0a);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return from;
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** The regular files of `dir` that make the stream of `name` (legacy file, then segments), in order. */
export function streamedFiles(dir: string, name: string): string[] {
  let entries: string[];
  try {
    entries = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return streamOrder(name, entries)
    .map((e) => path.join(dir, e))
    .filter((f) => fs.lstatSync(f, { throwIfNoEntry: false })?.isFile() === true);
}

/** The sequence number the next segment of `name` in `dir` takes: one past the highest there. */
export function nextSegmentSeq(dir: string, name: string): number {
  let next = 0;
  for (const f of streamedFiles(dir, name)) {
    const seq = segmentSeq(name, path.basename(f));
    if (seq !== undefined) next = Math.max(next, seq + 1);
  }
  return next;
}

/**
 * The work file rebuilt from what the run folder has of it: the complete lines of the legacy file and of
 * each segment, in order (a line cut off by a stop, only ever at a legacy file's end, is dropped: a resume
 * that parses every line would fail on it). Returns the bytes written and the bytes dropped.
 */
export function rebuildWorkFile(dir: string, name: string, work: string): { bytes: number; cut: number } {
  fs.mkdirSync(path.dirname(work), { recursive: true });
  let bytes = 0;
  let cut = 0;
  writeFileAtomicWith(work, (out) => {
    for (const file of streamedFiles(dir, name)) {
      const from = openRegularFile(file);
      if (!from) continue;
      try {
        const keep = lastLineEnd(from.fd, 0, from.size);
        copyBytes(from.fd, out, 0, keep);
        bytes += keep;
        cut += from.size - keep;
      } finally {
        fs.closeSync(from.fd);
      }
    }
  });
  return { bytes, cut };
}

/** One appended file: its work copy and where its segments go. */
export class SegmentedFile {
  /** Bytes of the work file already in segments. */
  private sealed: number;
  /** Where the complete lines seen so far end. */
  private complete: number;
  private nextSeq: number;
  /** When complete bytes past `sealed` were first seen. */
  private waitingSince: number | undefined;
  /** Whether only whole lines are copied (a JSONL file); a log's last bytes are copied at its end too. */
  private readonly lines: boolean;
  /** Segments written so far, and the bytes in them. */
  written = { segments: 0, bytes: 0 };

  constructor(
    readonly work: string,
    readonly dir: string,
    readonly name: string,
    options: { readonly from?: number; readonly nextSeq?: number; readonly lines?: boolean } = {},
  ) {
    this.sealed = options.from ?? 0;
    this.complete = this.sealed;
    this.nextSeq = options.nextSeq ?? nextSegmentSeq(dir, name);
    this.lines = options.lines ?? true;
  }

  /** Looks at the file's new bytes: how many complete ones wait, and since when. */
  observe(now: number): { waiting: number; since: number | undefined } {
    const size = fileSize(this.work);
    if (size > this.complete) {
      const fd = fs.openSync(this.work, fs.constants.O_RDONLY | NOFOLLOW);
      try {
        this.complete = lastLineEnd(fd, this.complete, size);
      } finally {
        fs.closeSync(fd);
      }
    }
    const waiting = this.complete - this.sealed;
    if (waiting > 0) this.waitingSince ??= now;
    return { waiting, since: this.waitingSince };
  }

  /**
   * Writes the complete lines seen as one segment; none when nothing waits. `ended`: the process is gone,
   * and a file that is not lines (a log) gives its last bytes too.
   */
  seal(ended = false): void {
    const end = ended && !this.lines ? Math.max(this.complete, fileSize(this.work)) : this.complete;
    if (end <= this.sealed) return;
    const target = path.join(this.dir, segmentName(this.name, this.nextSeq));
    const src = fs.openSync(this.work, fs.constants.O_RDONLY | NOFOLLOW);
    try {
      // The one atomic writer: a fresh temporary name no reader takes for a segment, renamed once whole.
      writeFileAtomicWith(target, (dest) => copyBytes(src, dest, this.sealed, end));
    } finally {
      fs.closeSync(src);
    }
    this.written = { segments: this.written.segments + 1, bytes: this.written.bytes + end - this.sealed };
    this.nextSeq++;
    this.sealed = end;
    this.complete = Math.max(this.complete, end);
    this.waitingSince = undefined;
  }
}

/**
 * A shard's appended files, sealed together: the files are looked at in the order given and then sealed,
 * so a file written before another (the script writes a prompt's completions, then its result) given
 * after it never has fewer of its lines sealed than the first has.
 */
export class Segmenter {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly files: readonly SegmentedFile[],
    readonly bounds: SegmentBounds = SEGMENT_BOUNDS,
    private readonly now: () => number = Date.now,
    private readonly onError: (e: unknown) => void = () => undefined,
  ) {}

  /** One look: seals every file when any has a size bound of complete bytes waiting, or waited the age bound. */
  tick(): boolean {
    const now = this.now();
    const due = this.files
      .map((f) => f.observe(now))
      .some(
        (w) =>
          w.waiting >= this.bounds.bytes || (w.since !== undefined && now - w.since >= this.bounds.ageMs),
      );
    if (due) for (const f of this.files) f.seal();
    return due;
  }

  /** Seals what is complete now (a stop); `ended` when the process has ended (see SegmentedFile.seal). */
  flush(ended = false): void {
    const now = this.now();
    for (const f of this.files) f.observe(now);
    for (const f of this.files) f.seal(ended);
  }

  start(): void {
    this.timer ??= setInterval(() => {
      try {
        this.tick();
      } catch (e) {
        this.onError(e);
      }
    }, this.bounds.tickMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
