import * as fs from 'node:fs';
import * as path from 'node:path';
import { isAwsError, isTerminal, requireLayout, type JobContext, type S3ObjectInfo } from '../aws';
import { RlvrError, UserError } from '../errors';
import { LOCAL, RUN_FOLDER } from '../layout';
import type { TransferEvent } from './download';
import { fetchObject } from './fetch-object';
import { isSafeRelative, readJobRunInfo, jobListing, type RunFolder } from './run-folders';
import { appendFileAtomic, openRegularFile, readInto, readJsonFile, sleep, writeFileAtomic } from '../util';

/*
 * Keeps results/<job>/traces/*.jsonl (and config.yaml) current while a job runs — for a trainer with its
 * own run folder, results/<job>/<trainerRun>/traces/*.jsonl of every attempt's folder. Traces are
 * 100–600 MB and only grow, so a poll lists the job's prefix (one request; it shows every run folder's
 * traces, and a new run folder after a restart) and, for a file that grew, fetches its
 * new tail only — after proving the old bytes are still its prefix: the range starts OVERLAP bytes
 * before the local end, asks If-Match the listed ETag, and its first OVERLAP bytes must equal the local
 * file's last ones. A file that shrank or was rewritten is fetched whole. The local file is replaced
 * atomically (copy + append + rename), so readers never see it half-written.
 */

export const OVERLAP = 64 * 1024;
const STATE = '.rlvr-sync.json';
/** Per job: the run.json the run folders were read from, with its ETag. */
const FOLDERS_STATE = '.rlvr-sync-folders.json';

interface FoldersState {
  runInfoEtag?: string;
  runInfo?: unknown;
}

export interface SyncStats {
  polls: number;
  listRequests: number;
  /** Trace bodies and tails, and run.json when it changed (it names the trainer's run folders). */
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

/** The size of a regular file at `file` (never through a link), or -1. */
function regularSize(file: string): number {
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  return st?.isFile() ? st.size : -1;
}

/** The traces of one run folder, from the job's listing: returns whether anything changed. */
async function syncTracesFolder(
  context: JobContext,
  job: string,
  dir: string,
  folder: RunFolder,
  objects: readonly S3ObjectInfo[],
  stats: SyncStats,
  emit: (e: TransferEvent) => void,
): Promise<boolean> {
  const layout = requireLayout(context);
  // run.json comes from the job: its folders were checked to be plain relative paths (run-folders.ts).
  const tracesDir = path.join(dir, folder.traces);
  if (!isSafeRelative(folder.traces) || !tracesDir.startsWith(dir + path.sep)) return false;
  fs.mkdirSync(tracesDir, { recursive: true });
  const statePath = path.join(tracesDir, STATE);
  const state = readJsonFile<Record<string, FileState>>(statePath, {});
  const prefix = `${layout.checkpointsPrefix(job)}${folder.traces}/`;
  let changed = false;
  for (const o of objects) {
    if (!o.key.startsWith(prefix)) continue;
    const name = o.key.slice(prefix.length);
    if (!name.endsWith('.jsonl') || name.includes('/')) continue;
    const local = path.join(tracesDir, name);
    const known = state[name];
    const localSize = regularSize(local);
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
        const f = openRegularFile(local);
        const got = f ? readInto(f.fd, mine, 0, localSize - overlap, overlap) : 0;
        if (f) fs.closeSync(f.fd);
        if (
          got === overlap &&
          tail.length === o.size - localSize + overlap &&
          tail.subarray(0, overlap).equals(mine)
        ) {
          appendFileAtomic(local, tail.subarray(overlap));
          appended = true;
          emit({ type: 'file', key: o.key, bytes: tail.length - overlap, skipped: false, resumed: true });
        } else {
          emit({ type: 'note', message: `${job}/${name} was rewritten: fetching it whole` });
        }
      } catch (err) {
        if (!isAwsError(err, 'PreconditionFailed')) throw err;
        continue; // it changed between the list and the read: the next poll takes it
      }
    }
    if (!appended && !(await fetchWhole(context, o, local, stats, emit))) {
      emit({ type: 'note', message: `${job}/${name} changed while it was fetched: the next sync takes it` });
      continue;
    }
    state[name] = { etag: o.etag ?? '', size: o.size };
    writeFileAtomic(statePath, JSON.stringify(state));
  }
  return changed;
}

/** A trace fetched whole: false when it changed between the list and the read (412). */
async function fetchWhole(
  context: JobContext,
  o: S3ObjectInfo,
  local: string,
  stats: SyncStats,
  emit: (e: TransferEvent) => void,
): Promise<boolean> {
  try {
    const result = await fetchObject(context.aws.s3, requireLayout(context).bucket, o, local);
    stats.getRequests++;
    stats.bodyBytes += result.bytesDownloaded;
    emit({ type: 'file', key: o.key, bytes: o.size, skipped: false });
    return true;
  } catch (err) {
    if (err instanceof RlvrError && err.code === 'ObjectChanged') return false;
    throw err;
  }
}

/** One job's traces, in each of its trainer run folders: returns whether anything changed. */
async function syncJob(
  context: JobContext,
  job: string,
  dir: string,
  stats: SyncStats,
  emit: (e: TransferEvent) => void,
) {
  const layout = requireLayout(context);
  const prefix = layout.checkpointsPrefix(job);
  const objects = await context.aws.s3.listObjects(layout.bucket, prefix);
  stats.listRequests++;
  // The run folders: run.json's, read again only when its ETag changed (a restart rewrites it); else
  // those the listing shows; else the top (the old layout).
  fs.mkdirSync(dir, { recursive: true });
  const foldersPath = path.join(dir, FOLDERS_STATE);
  const known = readJsonFile<FoldersState>(foldersPath, {});
  const runInfoObject = objects.find((o) => o.key === `${prefix}${RUN_FOLDER.runInfo}`);
  let runInfo = runInfoObject ? known.runInfo : undefined;
  if (
    runInfoObject &&
    (known.runInfoEtag !== runInfoObject.etag || !runInfoObject.etag || known.runInfo === undefined)
  ) {
    runInfo = await readJobRunInfo(context.aws.s3, layout, job);
    stats.getRequests++;
    if (runInfo !== undefined)
      writeFileAtomic(foldersPath, JSON.stringify({ runInfoEtag: runInfoObject.etag, runInfo }));
  }
  const { folders } = jobListing(layout, job, objects, runInfo);
  let changed = false;
  for (const folder of folders) {
    if (await syncTracesFolder(context, job, dir, folder, objects, stats, emit)) changed = true;
  }
  // The config the job runs with, once.
  const config = path.join(dir, RUN_FOLDER.config);
  if (!fs.existsSync(config)) {
    // The listing shows it: no request when it is not there yet.
    const head = objects.find((o) => o.key === layout.runConfigKey(job));
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
    await sleep(options.intervalSeconds! * 1000, options.signal);
    if (options.signal?.aborted) break;
  }
  return { jobs, stats };
}
