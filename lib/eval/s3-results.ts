/**
 * `rlvr eval results`: the rows of eval jobs and training jobs (their eval watchers) from S3.
 * One listing per job finds every unit record, harness results file and watcher summary; the files are
 * read in parallel and kept in a local cache by ETag, so a repeated table makes no GET. Units an eval
 * job reused from an earlier one (its plan's `reused`) are read where they are.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { IS3, S3ObjectInfo } from '../aws';
import { UserError } from '../errors';
import { RUN_FOLDER, type S3Layout } from '../layout';
import { mapLimited, readJsonFile, readTextFile, rlvrCacheDir, writeFileAtomic } from '../util';
import {
  EVAL_PLAN_FILE,
  checkpointsByLabelFolder,
  harnessResultsFile,
  parseUnitFileName,
  parseUnitRecord,
  rowOfUnit,
  rowOfUnreadableUnit,
  rowsOfWatcherSummary,
  WATCHER_SUMMARY,
  type EvalJobPlan,
  type ResultRow,
} from '../eval-records';

export interface ReadStats {
  /** Files the rows were read from. */
  files: number;
  /** Of those, fetched from S3 (the others came from the local cache). */
  fetched: number;
}

/** Reads JSON objects through a local cache keyed by bucket, key and ETag. */
export class ObjectCache {
  readonly stats: ReadStats = { files: 0, fetched: 0 };
  constructor(
    private readonly s3: IS3,
    private readonly dir = rlvrCacheDir('eval-results'),
  ) {}

  async json(bucket: string, o: S3ObjectInfo): Promise<unknown> {
    const text = await this.text(bucket, o);
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  }

  /** The object's text; kept in the cache only when it is JSON (one that is not may be rewritten). */
  async text(bucket: string, o: S3ObjectInfo): Promise<string> {
    this.stats.files++;
    const name = crypto
      .createHash('sha256')
      .update(`${bucket}\u0000${o.key}\u0000${o.etag ?? ''}`)
      .digest('hex');
    const file = path.join(this.dir, name.slice(0, 2), `${name}.json`);
    const cached = o.etag ? readTextFile(file) : undefined;
    if (cached !== undefined) return cached;
    const text = await this.s3.getObjectText(bucket, o.key);
    this.stats.fetched++;
    let json = true;
    try {
      JSON.parse(text);
    } catch {
      json = false;
    }
    if (o.etag && json) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      writeFileAtomic(file, text);
    }
    return text;
  }
}

/** Units read at once (each two small GETs): S3 serves many small reads best side by side. */
const READ_CONCURRENCY = 32;

/** A unit folder's listing: its record and its harness results, keyed relative to the folder. */
interface UnitFiles {
  record?: S3ObjectInfo;
  files: Map<string, S3ObjectInfo>;
}

function unitFolders(objects: readonly S3ObjectInfo[], base: string): Map<string, UnitFiles> {
  const units = new Map<string, UnitFiles>();
  const evals = `${base}${RUN_FOLDER.evals}/`;
  // Records first: a unit folder is the folder of a unit record.
  for (const o of objects) {
    if (!o.key.startsWith(evals) || !parseUnitFileName(path.posix.basename(o.key))) continue;
    const folder = path.posix.dirname(o.key);
    const u: UnitFiles = units.get(folder) ?? { files: new Map() };
    // A unit that failed and then succeeded (a later attempt) has both records: the success counts.
    if (!u.record || parseUnitFileName(path.posix.basename(o.key))!.ok) u.record = o;
    units.set(folder, u);
  }
  for (const o of objects) {
    for (let dir = path.posix.dirname(o.key); dir.length >= evals.length; dir = path.posix.dirname(dir)) {
      const u = units.get(dir);
      if (u) {
        u.files.set(o.key.slice(dir.length + 1), o);
        break;
      }
    }
  }
  return units;
}

async function rowsOfUnits(
  cache: ObjectCache,
  bucket: string,
  units: Map<string, UnitFiles>,
  source: string,
): Promise<ResultRow[]> {
  const list = [...units.values()].filter((u) => u.record);
  // The record and the harness's results read together (a failed unit has no results file).
  const reads = await mapLimited(list, READ_CONCURRENCY, async (u) => {
    const harness = harnessResultsFile([...u.files.keys()]);
    const [text, json] = await Promise.all([
      cache.text(bucket, u.record!),
      harness ? cache.json(bucket, u.files.get(harness)!) : undefined,
    ]);
    return {
      record: u.record!,
      unitFolder: path.posix.dirname(u.record!.key),
      text,
      json,
      read: parseUnitRecord(text),
    };
  });
  // A record that is not one still has its place: the checkpoint its label folder's others name.
  const known = checkpointsByLabelFolder(reads);
  const rows = reads.map((r) =>
    'problem' in r.read
      ? rowOfUnreadableUnit(
          r.unitFolder,
          r.text,
          r.read.problem,
          `s3://${bucket}/${r.record.key}`,
          source,
          known.get(path.posix.dirname(r.unitFolder)),
        )
      : rowOfUnit(r.read.record, r.read.record.exitCode === 0 ? r.json : undefined, source),
  );
  return rows;
}

/**
 * The rows of one job, eval job or training job: its units, its watcher summaries, and the units it
 * reused from earlier eval jobs.
 */
export async function readJobResults(
  s3: IS3,
  layout: S3Layout,
  job: string,
  cache: ObjectCache,
): Promise<ResultRow[]> {
  const prefix = layout.checkpointsPrefix(job);
  // The listing and the eval plan (a training job has none) side by side.
  const [objects, planObject] = await Promise.all([
    s3.listObjects(layout.bucket, prefix),
    s3.headObject(layout.bucket, layout.jobKey(job, EVAL_PLAN_FILE)),
  ]);
  if (objects.length === 0 && !planObject)
    throw new UserError(
      `No results of ${job}: nothing under ${layout.uri(prefix)}. Is the job name right (rlvr jobs)?`,
      'NoSuchJob',
    );
  const rows = await rowsOfUnits(cache, layout.bucket, unitFolders(objects, prefix), `eval job ${job}`);
  const summaries = objects.filter(
    (o) =>
      o.key.startsWith(`${prefix}${RUN_FOLDER.evals}/`) &&
      WATCHER_SUMMARY.test(o.key.slice(`${prefix}${RUN_FOLDER.evals}/`.length)),
  );
  // Oldest first (their names carry a timestamp): a later summary's value for the same cell wins.
  summaries.sort((a, b) => a.key.localeCompare(b.key));
  for (const s of summaries)
    rows.push(...rowsOfWatcherSummary(await cache.json(layout.bucket, s), job, `eval watcher of ${job}`));
  if (planObject) {
    const plan = (await cache.json(layout.bucket, planObject)) as EvalJobPlan | undefined;
    const byJob = new Map<string, string[]>();
    for (const r of plan?.reused ?? []) byJob.set(r.job, [...(byJob.get(r.job) ?? []), r.folder]);
    for (const [earlier, folders] of byJob) {
      const base = layout.checkpointsPrefix(earlier);
      const listed = (
        await Promise.all(folders.map((f) => s3.listObjects(layout.bucket, `${base}${f}/`)))
      ).flat();
      rows.push(
        ...(await rowsOfUnits(
          cache,
          layout.bucket,
          unitFolders(listed, base),
          `eval job ${earlier} (reused by ${job})`,
        )),
      );
    }
  }
  return rows;
}

/** Seconds each task took, learned from unit records (the planner's estimates), newest last. */
export function learnedDurations(rows: readonly ResultRow[]): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const r of rows) if (r.wallS && r.wallS > 0 && !r.failed) (out[r.task] ??= []).push(r.wallS);
  return out;
}

const DURATIONS_FILE = () => path.join(rlvrCacheDir('eval-results'), 'durations.json');
const KEEP_PER_TASK = 50;

/** The durations learned so far (the planner's input). */
export function readLearnedDurations(): Record<string, number[]> {
  return readJsonFile<Record<string, number[]>>(DURATIONS_FILE(), {});
}

/** Adds what a results table read to the durations learned so far. */
export function recordLearnedDurations(rows: readonly ResultRow[]): void {
  const known = readLearnedDurations();
  for (const [task, seconds] of Object.entries(learnedDurations(rows)))
    known[task] = [...new Set([...(known[task] ?? []), ...seconds])].slice(-KEEP_PER_TASK);
  const file = DURATIONS_FILE();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, JSON.stringify(known));
}
