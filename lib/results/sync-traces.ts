import * as fs from 'node:fs';
import * as path from 'node:path';
import { UserError } from '../errors';
import { requireLayout, type JobContext } from '../jobs/context';
import { isTerminal } from '../jobs/inspect';
import { LOCAL, RUN_FOLDER } from '../layout';
import type { TransferEvent } from './download';
import { fetchObject, PARTIAL_SUFFIX } from './fetch-object';

/*
 * Keeps results/<job>/traces/*.jsonl (and config.yaml) current while a job runs. Traces are 100–600 MB
 * and only grow, so a poll lists the traces prefix (one request) and, for a file that grew, fetches its
 * new tail only — after proving the old bytes are still its prefix: the range starts OVERLAP bytes
 * before the local end, asks If-Match the listed ETag, and its first OVERLAP bytes must equal the local
 * file's last ones. A file that shrank or was rewritten is fetched whole. The local file is replaced
 * atomically (copy + append + rename), so readers never see it half-written.
 */

export const OVERLAP = 64 * 1024;
const STATE = '.rlvr-sync.json';

export interface SyncStats {
  polls: number;
  listRequests: number;
  getRequests: number;
  bodyBytes: number;
  changes: number;
}

export interface SyncOptions {
  /** An exact job name, or a fragment matching running jobs (a date like 20260125). */
  readonly target: string;
  readonly resultsDir?: string;
  /** Seconds between polls; none = sync once. */
  readonly intervalSeconds?: number;
  /** Stop after this long without a change. @default 3600 */
  readonly idleExitSeconds?: number;
  /** Check whether the jobs ended every this many polls (a DescribeTrainingJob each). @default 10 */
  readonly statusEveryPolls?: number;
  readonly onEvent?: (event: TransferEvent) => void;
  readonly signal?: AbortSignal;
}

interface FileState {
  etag: string;
  size: number;
}

async function resolveJobs(context: JobContext, target: string): Promise<string[]> {
  if (await context.aws.sagemaker.describeTrainingJob(target)) return [target];
  const running = await context.aws.sagemaker.listTrainingJobs({
    nameContains: target,
    status: 'InProgress',
    limit: 100,
  });
  const names = running
    .map((j) => j.TrainingJobName!)
    .filter((n) => n.startsWith(`${context.jobNamePrefix}-`));
  if (names.length === 0) {
    throw new UserError(
      `No job named ${target}, and no running job whose name contains "${target}".`,
      'NoSuchJob',
    );
  }
  return names.sort();
}

function replaceAtomically(file: string, write: (tmp: string) => void): void {
  const tmp = `${file}${PARTIAL_SUFFIX}`;
  write(tmp);
  const fd = fs.openSync(tmp, 'r');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
}

/** One job's traces: returns whether anything changed. */
async function syncJob(
  context: JobContext,
  job: string,
  dir: string,
  stats: SyncStats,
  emit: (e: TransferEvent) => void,
) {
  const layout = requireLayout(context);
  const tracesDir = path.join(dir, RUN_FOLDER.traces);
  fs.mkdirSync(tracesDir, { recursive: true });
  const statePath = path.join(tracesDir, STATE);
  let state: Record<string, FileState> = {};
  try {
    state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
  } catch {
    // first sync
  }
  const prefix = layout.tracesPrefix(job);
  const objects = await context.aws.s3.listObjects(layout.bucket, prefix);
  stats.listRequests++;
  let changed = false;
  for (const o of objects) {
    const name = o.key.slice(prefix.length);
    if (!name.endsWith('.jsonl') || name.includes('/')) continue;
    const local = path.join(tracesDir, name);
    const known = state[name];
    const localSize = fs.existsSync(local) ? fs.statSync(local).size : -1;
    if (known && known.etag === o.etag && known.size === o.size && localSize === o.size) continue;
    changed = true;
    let appended = false;
    if (known && localSize === known.size && o.size > localSize && localSize > 0) {
      const overlap = Math.min(OVERLAP, localSize);
      try {
        const tail = await context.aws.s3.getObjectRange(
          layout.bucket,
          o.key,
          localSize - overlap,
          o.size - 1,
          o.etag,
        );
        stats.getRequests++;
        stats.bodyBytes += tail.length;
        const mine = Buffer.alloc(overlap);
        const fd = fs.openSync(local, 'r');
        fs.readSync(fd, mine, 0, overlap, localSize - overlap);
        fs.closeSync(fd);
        if (tail.length === o.size - localSize + overlap && tail.subarray(0, overlap).equals(mine)) {
          replaceAtomically(local, (tmp) => {
            fs.copyFileSync(local, tmp, fs.constants.COPYFILE_FICLONE);
            fs.appendFileSync(tmp, tail.subarray(overlap));
          });
          appended = true;
          emit({ type: 'file', key: o.key, bytes: tail.length - overlap, skipped: false, resumed: true });
        } else {
          emit({ type: 'note', message: `${job}/${name} was rewritten: fetching it whole` });
        }
      } catch (err) {
        const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (status !== 412) throw err;
        continue; // it changed between the list and the read: the next poll takes it
      }
    }
    if (!appended) {
      const result = await fetchObject(context.aws.s3, layout.bucket, o, local);
      stats.getRequests++;
      stats.bodyBytes += result.bytesDownloaded;
      emit({ type: 'file', key: o.key, bytes: o.size, skipped: false });
    }
    state[name] = { etag: o.etag ?? '', size: o.size };
    fs.writeFileSync(statePath, JSON.stringify(state));
  }
  // The config the job runs with, once.
  const config = path.join(dir, RUN_FOLDER.config);
  if (!fs.existsSync(config)) {
    const head = await context.aws.s3.headObject(layout.bucket, layout.runConfigKey(job));
    if (head) {
      await fetchObject(context.aws.s3, layout.bucket, head, config);
      changed = true;
    }
  }
  return changed;
}

/** Syncs once, or polls until idle for `idleExitSeconds` or until every matched job has ended. */
export async function syncTraces(
  context: JobContext,
  options: SyncOptions,
): Promise<{ jobs: string[]; stats: SyncStats }> {
  const emit = options.onEvent ?? (() => undefined);
  const jobs = await resolveJobs(context, options.target);
  const stats: SyncStats = { polls: 0, listRequests: 0, getRequests: 0, bodyBytes: 0, changes: 0 };
  const root = path.resolve(options.resultsDir ?? LOCAL.resultsDir);
  const idleMs = (options.idleExitSeconds ?? 3600) * 1000;
  let lastChange = Date.now();
  const active = [...jobs];
  for (;;) {
    stats.polls++;
    for (const job of active) {
      if (await syncJob(context, job, path.join(root, job), stats, emit)) {
        stats.changes++;
        lastChange = Date.now();
      }
    }
    if (options.intervalSeconds === undefined || options.signal?.aborted) break;
    if (stats.polls % (options.statusEveryPolls ?? 10) === 0) {
      const states = await Promise.all(active.map((j) => context.aws.sagemaker.describeTrainingJob(j)));
      const ended = active.filter((_, i) => isTerminal(states[i]?.TrainingJobStatus));
      if (ended.length === active.length) {
        // One last pass picks up what they wrote at the end.
        for (const job of active) await syncJob(context, job, path.join(root, job), stats, emit);
        emit({ type: 'note', message: `every matched job has ended (${ended.join(', ')})` });
        break;
      }
    }
    if (Date.now() - lastChange >= idleMs) {
      emit({ type: 'note', message: `no change for ${Math.round(idleMs / 1000)} s: stopping` });
      break;
    }
    await new Promise((r) => setTimeout(r, options.intervalSeconds! * 1000));
  }
  return { jobs, stats };
}
