/** How the bench runs and times a command, and the files it measures with. */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const MIB = 1024 * 1024;
/** Runs of each side in a timed pair (the two downloads and the 1 GiB upload). */
export const RUNS = 7;

/**
 * A safetensors file of exactly `bytes` bytes: a header that names one tensor and random data, so the
 * checkpoint rule (lib/checkpoints: each file at the size its header gives) finds it whole.
 */
export function writeSafetensorsFile(file: string, bytes: number): void {
  const HEADER = 128; // padded with spaces, as the format allows
  const data = bytes - 8 - HEADER;
  const json = JSON.stringify({ w: { dtype: 'U8', shape: [data], data_offsets: [0, data] } }).padEnd(
    HEADER,
    ' ',
  );
  const head = Buffer.alloc(8 + HEADER);
  head.writeBigUInt64LE(BigInt(HEADER));
  head.write(json, 8, 'utf8');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, head);
  for (let done = 0; done < data; done += 16 * MIB)
    fs.writeSync(fd, randomBytes(Math.min(16 * MIB, data - done)));
  fs.closeSync(fd);
}

/** Runs a command in `cwd`; with `time`, under /usr/bin/time for its peak RSS and CPU seconds. */
export async function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { time?: boolean; cwd?: string } = {},
) {
  const argv = options.time ? ['-f', 'MAXRSS=%M CPU=%U+%S', cmd, ...args] : args;
  const exe = options.time ? '/usr/bin/time' : cmd;
  const started = process.hrtime.bigint();
  return new Promise<{ seconds: number; stdout: string; stderr: string; maxRssKb?: number; cpu?: number }>(
    (resolve, reject) => {
      const child = spawn(exe, argv, { env, cwd: options.cwd });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code) => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        if (code !== 0)
          return reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`));
        const rss = /MAXRSS=(\d+) CPU=([\d.]+)\+([\d.]+)/.exec(stderr);
        resolve({
          seconds,
          stdout,
          stderr,
          maxRssKb: rss ? Number(rss[1]) : undefined,
          cpu: rss ? Number(rss[2]) + Number(rss[3]) : undefined,
        });
      });
    },
  );
}

export type Timed = Awaited<ReturnType<typeof run>>;

/** A run of ours that moved fewer bytes than the row is about (a skip, say) would make a false figure. */
export function movedAtLeast(r: Timed, atLeast: number): Timed {
  const bytes = (JSON.parse(r.stdout) as { bytes: number }).bytes;
  if (bytes < atLeast) throw new Error(`moved ${bytes} bytes where the row needs at least ${atLeast}`);
  return r;
}

/**
 * Five runs of each side; the median run of each. Each pair alternates who goes first, and every run
 * starts with the page cache's dirty data written out (\`sync\`), so neither side pays for the
 * other's writeback (aws s3 cp leaves 1 GiB of dirty pages behind; our download fsyncs its own).
 */
export async function medianPair(
  baseline: () => Promise<Timed>,
  ours: () => Promise<Timed>,
  runs = RUNS,
  baselineName = 'aws',
): Promise<{ baseline: Timed; ours: Timed; spread: string; oursCpu: number }> {
  const b: Timed[] = [];
  const o: Timed[] = [];
  const settled = async <T>(f: () => Promise<T>) => {
    spawnSync('sync');
    return f();
  };
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      b.push(await settled(baseline));
      o.push(await settled(ours));
    } else {
      o.push(await settled(ours));
      b.push(await settled(baseline));
    }
  }
  const median = (xs: Timed[]) => [...xs].sort((x, y) => x.seconds - y.seconds)[Math.floor(runs / 2)];
  const mid = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const list = (xs: Timed[]) => xs.map((r) => r.seconds.toFixed(2)).join(' ');
  // CPU seconds (user + sys of the command): steadier than wall time on a shared machine.
  const cpu = (xs: Timed[]) => mid(xs.map((r) => r.cpu ?? NaN));
  return {
    baseline: median(b),
    ours: median(o),
    oursCpu: cpu(o),
    spread:
      `wall s, rlvr: ${list(o)}; ${baselineName}: ${list(b)}; median CPU s (user+sys), ` +
      `rlvr ${cpu(o).toFixed(2)} vs ${baselineName} ${cpu(b).toFixed(2)}`,
  };
}
