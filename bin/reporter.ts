import type { ProgressEvent, ProgressListener } from '../lib/progress';
import { formatTime } from './commands/common';
import { formatBytes } from './output';

/** One event as the line a person reads (undefined: nothing to print on its own line). */
export function renderEvent(event: ProgressEvent): string | undefined {
  switch (event.type) {
    case 'step':
    case 'retry':
      return `• ${event.message}`;
    case 'note':
      return `note: ${event.message}`;
    case 'warning':
      return `  warning: ${event.message}`;
    case 'file':
      return `${event.skipped ? 'up to date' : event.resumed ? 'updated' : 'done'}  ${event.key} (${formatBytes(event.bytes)})`;
    case 'progress':
      return undefined;
    case 'build-step':
      return `  ${event.cached ? 'cached' : 'built '} ${event.name}`;
    case 'layer':
      return event.status === 'pushed'
        ? `  pushed layer ${event.id} (${formatBytes(event.bytes)})`
        : `  layer ${event.id} already in the registry`;
    case 'line':
      return `${formatTime(new Date(event.timestamp))} [${event.host}] ${event.message.replace(/\n$/, '')}`;
    case 'waiting':
      return `… ${event.message}`;
    case 'status':
      return `${formatTime(event.time)} == ${event.secondary}${event.message ? `: ${event.message}` : ''}`;
    case 'started':
      return [
        `• local run ${event.name}: ${event.image}`,
        ...event.binds.map((b) => `  ${b.what}: ${b.host}`),
        `  run folder: ${event.runDir}`,
        ...(event.hosts
          ? [
              `  hosts: ${event.hosts.names.join(', ')} (one container each, on network ${event.hosts.network})`,
            ]
          : []),
        ...(event.gpus ? [] : ['  no GPUs: pass --gpus 0,1,… to give the container host GPUs']),
      ].join('\n');
    case 'stopping':
      return `\n• stopping: SIGTERM to the job, SIGKILL after ${event.graceSeconds} s`;
    case 'failed':
      return `• the job failed: ${event.reason}`;
  }
}

function progressText(event: Extract<ProgressEvent, { type: 'progress' }>): string {
  const pct = event.totalBytes ? Math.floor((100 * event.bytes) / event.totalBytes) : 100;
  return `${formatBytes(event.bytes)} / ${formatBytes(event.totalBytes)} (${pct}%)`;
}

export interface ReporterOptions {
  /** `--json`: every event as one JSON line (stdout keeps only the command's result). */
  readonly json: boolean;
  /** Where events go: stderr by default (stdout carries the result). */
  readonly stream?: NodeJS.WriteStream | NodeJS.WritableStream;
  /** Where each event goes, when some belong elsewhere (e.g. `rlvr logs` prints log lines on stdout). */
  readonly streamFor?: (event: ProgressEvent) => NodeJS.WritableStream | undefined;
  /** Seconds between plain progress lines when not on a terminal. */
  readonly plainProgressEveryMs?: number;
}

/**
 * The CLI's one reporter for every long operation: a live progress line on a terminal, plain lines
 * otherwise (a progress line every few seconds), JSON lines with --json.
 */
export function createReporter(options: ReporterOptions): ProgressListener {
  const stream = options.stream ?? process.stderr;
  const tty = Boolean((stream as NodeJS.WriteStream).isTTY) && !options.json;
  const every = options.plainProgressEveryMs ?? 5000;
  let lastPlain = 0;
  let liveLine = false;
  return (event) => {
    const out = options.streamFor?.(event) ?? stream;
    if (options.json) {
      out.write(`${JSON.stringify(event)}\n`);
      return;
    }
    if (event.type === 'progress') {
      if (tty) {
        stream.write(`\r${progressText(event)}   `);
        liveLine = true;
      } else if (Date.now() - lastPlain > every) {
        lastPlain = Date.now();
        stream.write(`${progressText(event)}\n`);
      }
      return;
    }
    if (liveLine) {
      stream.write('\r\x1b[K');
      liveLine = false;
    }
    const text = renderEvent(event);
    if (text !== undefined) out.write(`${text}\n`);
  };
}
