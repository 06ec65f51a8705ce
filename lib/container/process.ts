import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { segmentName, segmentSeq } from '../passk-records';
import { NOFOLLOW } from '../util';

/** A log is appended to in place, never through a link planted at its name. */
const APPEND_NOFOLLOW = fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | NOFOLLOW;

/** The last lines a process wrote, for the failure file. */
export class LineTail {
  private readonly lines: string[] = [];
  constructor(private readonly max: number) {}
  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.max) this.lines.shift();
  }
  get(): string[] {
    return [...this.lines];
  }
}

/**
 * How a log file in the run folder is kept from growing all job: SageMaker sends a changed file whole on
 * every sync of /opt/ml/checkpoints, so the live file (its name, e.g. `trainer.log`) is moved aside to a
 * numbered part (`trainer.00000.log`, …, never changed again, so sent once) when it reaches `bytes`, or
 * when its first bytes have waited `ageMs` and it has `minBytes` (a quiet log is not cut into a file a
 * minute). Each sync then resends at most the live file: about a minute of output, or `minBytes`.
 * Reading order: the parts by number, then the live file.
 */
export interface LogRotation {
  readonly bytes: number;
  readonly ageMs: number;
  readonly minBytes: number;
}

export const LOG_ROTATION: LogRotation = { bytes: 4 * 1024 * 1024, ageMs: 60_000, minBytes: 64 * 1024 };

/** A process's log file, appended to line by line, rotated by `rotation` (see LogRotation). */
export class RotatingLog {
  private fd: number | undefined;
  private size = 0;
  private since: number | undefined;
  private nextSeq = 0;

  constructor(
    readonly file: string,
    private readonly rotation: LogRotation | false = LOG_ROTATION,
    private readonly now: () => number = Date.now,
  ) {
    const name = path.basename(file);
    try {
      for (const e of fs.readdirSync(path.dirname(file))) {
        const seq = segmentSeq(name, e);
        if (seq !== undefined) this.nextSeq = Math.max(this.nextSeq, seq + 1);
      }
    } catch {
      // No folder yet: the open below says so.
    }
    this.fd = fs.openSync(file, APPEND_NOFOLLOW, 0o644);
    this.size = fs.fstatSync(this.fd).size;
    // An earlier attempt's log (a restart restored the run folder) becomes a part: this attempt's starts empty.
    if (this.rotation && this.size > 0) this.rotate();
  }

  write(text: string): void {
    if (this.fd === undefined) return;
    const r = this.rotation;
    const now = this.now();
    if (
      r &&
      this.size > 0 &&
      (this.size >= r.bytes || (this.size >= r.minBytes && now - (this.since ?? now) >= r.ageMs))
    )
      this.rotate();
    try {
      const buf = Buffer.from(text);
      fs.writeSync(this.fd, buf);
      this.size += buf.length;
      this.since ??= now;
    } catch {
      // A full disk: the line is still on stdout (CloudWatch) and in the tail.
    }
  }

  private rotate(): void {
    try {
      fs.closeSync(this.fd!);
      const part = path.join(path.dirname(this.file), segmentName(path.basename(this.file), this.nextSeq));
      fs.renameSync(this.file, part);
      this.nextSeq++;
    } catch {
      // Not moved: the live file goes on growing rather than losing lines.
    }
    this.fd = fs.openSync(this.file, APPEND_NOFOLLOW, 0o644);
    this.size = fs.fstatSync(this.fd).size;
    this.since = undefined;
  }

  end(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}

export interface Started {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly tail: LineTail;
}

/**
 * Runs `command` with sh, streaming each line of its output with a prefix to our stdout (which
 * SageMaker sends to CloudWatch) and unprefixed to `logFile`.
 */
export function startProcess(options: {
  readonly name: string;
  readonly command: string;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly logFile: string;
  /** Where each line goes with the process's name in front (the entrypoint's stdout: CloudWatch). */
  readonly out: NodeJS.WritableStream;
  /** How many of its last lines are kept (default 40: the failure file's tail). */
  readonly keepLines?: number;
  /** How the log file is rotated (LOG_ROTATION by default; false: one file, for a log kept elsewhere). */
  readonly rotate?: LogRotation | false;
}): Started {
  const { out } = options;
  const log = new RotatingLog(options.logFile, options.rotate ?? LOG_ROTATION);
  const tail = new LineTail(options.keepLines ?? 40);
  const child = spawn('sh', ['-c', options.command], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so a signal reaches sh and everything it started.
    detached: true,
  });
  const pipeLines = (stream: NodeJS.ReadableStream) => {
    let buf = '';
    stream.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        out.write(`[${options.name}] ${line}\n`);
        log.write(`${line}\n`);
        tail.push(line);
      }
    });
    stream.on('end', () => {
      if (buf) {
        out.write(`[${options.name}] ${buf}\n`);
        log.write(`${buf}\n`);
        tail.push(buf);
        buf = '';
      }
    });
  };
  pipeLines(child.stdout!);
  pipeLines(child.stderr!);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('error', (err) => {
      tail.push(`could not start: ${err.message}`);
      log.end();
      resolve({ code: 127, signal: null });
    });
    child.on('close', (code, signal) => {
      log.end();
      resolve({ code, signal });
    });
  });
  return { child, exited, tail };
}

/** Runs a command to its end (Ray's start and stop). */
export async function runToEnd(
  command: string,
  options: {
    cwd: string;
    env: NodeJS.ProcessEnv;
    logFile: string;
    name: string;
    out: NodeJS.WritableStream;
    keepLines?: number;
  },
): Promise<{ code: number | null; tail: string[] }> {
  const p = startProcess({ ...options, command });
  const { code } = await p.exited;
  return { code, tail: p.tail.get() };
}

/** `'…'` for sh. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A signal to the process group: sh and everything it started (no-op once it has exited). */
export function signalGroup(p: Started | undefined, signal: NodeJS.Signals): void {
  if (!p?.child.pid || p.child.exitCode !== null || p.child.signalCode !== null) return;
  try {
    process.kill(-p.child.pid, signal);
  } catch {
    try {
      p.child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** SIGTERM, and SIGKILL `termGraceMs` later (at once when 0); resolves when it has exited. */
export async function stopProcess(p: Started, termGraceMs: number): Promise<{ code: number | null }> {
  signalGroup(p, termGraceMs > 0 ? 'SIGTERM' : 'SIGKILL');
  const killTimer = setTimeout(() => signalGroup(p, 'SIGKILL'), termGraceMs);
  const { code } = await p.exited;
  clearTimeout(killTimer);
  return { code };
}

/**
 * Waits for `p`; once `stopping()` turns true, at most `graceMs` more, then SIGKILL (`onKill` says so).
 */
export async function waitWithGrace(
  p: Started,
  stopping: () => boolean,
  graceMs: number,
  onKill: () => void,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; killedAfterGrace: boolean }> {
  let killedAfterGrace = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = setInterval(() => {
    if (stopping() && !timer) {
      timer = setTimeout(() => {
        killedAfterGrace = true;
        onKill();
        signalGroup(p, 'SIGKILL');
      }, graceMs);
    }
  }, 100);
  const result = await p.exited;
  clearInterval(arm);
  clearTimeout(timer);
  return { ...result, killedAfterGrace };
}
