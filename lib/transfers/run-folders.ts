import { isAwsError, type IS3, type S3ObjectInfo } from '../aws';
import { checkpointFolderOfKey, RUN_FOLDER, type S3Layout } from '../layout';
import { isObject } from '../util';

/*
 * Where a job's trainer put its traces and checkpoints inside `checkpoints/<job>/`. A trainer with its
 * own run folder (their `Runtime.from_plan`) writes `<trainerRun>/checkpoints/…` and
 * `<trainerRun>/traces/…`, one such folder per attempt (a restarted spot job gets a second one); our
 * run.json at the top records them. A trainer without one keeps `checkpoints/` and `traces/` at the top.
 */

/** One trainer run folder, relative to the job prefix; `folder: ''` is the old layout (the top). */
export interface RunFolder {
  readonly folder: string;
  readonly checkpoints: string;
  readonly traces: string;
}

/** What a restart did, as run.json records it. */
export interface ResumeInfo {
  readonly kind?: string;
  readonly from?: string;
  readonly step?: number;
  readonly note: string;
}

export const TOP_RUN_FOLDER: RunFolder = {
  folder: '',
  checkpoints: RUN_FOLDER.checkpoints,
  traces: RUN_FOLDER.traces,
};

type Json = Record<string, unknown>;

/** A relative path that stays inside the job's folder (run.json comes from the job: never trusted). */
export function isSafeRelative(p: string): boolean {
  return p !== '' && !p.includes('\\') && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}
const cleanFolder = (f: string) => {
  const c = f.replace(/^\/+|\/+$/g, '');
  return isSafeRelative(c) ? c : '';
};

function folderOf(name: string, recorded?: Json): RunFolder {
  const folder = cleanFolder(name);
  const rel = (v: unknown, fallback: string) =>
    typeof v === 'string' && cleanFolder(v) ? cleanFolder(v) : `${folder}/${fallback}`;
  return {
    folder,
    checkpoints: rel(recorded?.checkpoints, RUN_FOLDER.checkpoints),
    traces: rel(recorded?.traces, RUN_FOLDER.traces),
  };
}

/**
 * The trainer run folders our run.json names, oldest attempt first: each attempt's `trainerRun`, then
 * `earlierTrainerRun` and `trainerRun.folder` when no attempt named them. Empty when it names none.
 */
export function runFoldersFromRunInfo(runInfo: unknown): RunFolder[] {
  if (!isObject(runInfo)) return [];
  const recorded = new Map<string, Json>();
  for (const key of ['earlierTrainerRun', 'trainerRun']) {
    const t = runInfo[key];
    if (isObject(t) && typeof t.folder === 'string' && cleanFolder(t.folder))
      recorded.set(cleanFolder(t.folder), t);
  }
  const names: string[] = [];
  const add = (n: unknown) => {
    if (typeof n !== 'string' || !cleanFolder(n)) return;
    if (!names.includes(cleanFolder(n))) names.push(cleanFolder(n));
  };
  for (const a of Array.isArray(runInfo.attempts) ? runInfo.attempts : []) {
    if (!isObject(a)) continue;
    add(isObject(a.trainerRun) ? a.trainerRun.folder : a.trainerRun);
  }
  // Folders recorded only at the top: the earlier one before the current one.
  for (const name of recorded.keys()) add(name);
  return names.map((n) => folderOf(n, recorded.get(n)));
}

/** The restart run.json records: its top `resume`, else the latest attempt's. */
export function resumeFromRunInfo(runInfo: unknown): ResumeInfo | undefined {
  if (!isObject(runInfo)) return undefined;
  const attempts = Array.isArray(runInfo.attempts) ? runInfo.attempts.filter(isObject) : [];
  const r = isObject(runInfo.resume) ? runInfo.resume : attempts[attempts.length - 1]?.resume;
  if (!isObject(r) || typeof r.note !== 'string' || !r.note) return undefined;
  return {
    note: r.note,
    ...(typeof r.kind === 'string' ? { kind: r.kind } : {}),
    ...(typeof r.from === 'string' ? { from: r.from } : {}),
    ...(typeof r.step === 'number' ? { step: r.step } : {}),
  };
}

/**
 * Trainer run folders found in a listing (keys relative to the job prefix), for a job whose run.json
 * is missing or names none: any `X/run.json` directly under the job prefix whose `X/` also holds
 * `checkpoints/` or `traces/` objects. Sorted by name (their names end with a timestamp).
 */
export function runFoldersFromListing(relativeKeys: readonly string[]): RunFolder[] {
  const marked = new Set<string>();
  const holding = new Set<string>();
  for (const key of relativeKeys) {
    const parts = key.split('/');
    if (parts.length === 2 && parts[1] === RUN_FOLDER.runInfo) marked.add(parts[0]);
    if (parts.length > 2 && (parts[1] === RUN_FOLDER.checkpoints || parts[1] === RUN_FOLDER.traces))
      holding.add(parts[0]);
  }
  return [...marked]
    .filter((f) => holding.has(f))
    .sort()
    .map((f) => folderOf(f));
}

/** run.json's folders, else the listing's, else the top. */
export function resolveRunFolders(runInfo: unknown, relativeKeys: readonly string[]): RunFolder[] {
  const named = runFoldersFromRunInfo(runInfo);
  if (named.length > 0) return named;
  const found = runFoldersFromListing(relativeKeys);
  return found.length > 0 ? found : [TOP_RUN_FOLDER];
}

/** A checkpoint folder a key lies in: its relative path, its container folder and its name. */
export interface CheckpointKey {
  /** e.g. `A/checkpoints/A_step20`, `checkpoints/r_step20`, or `r_step40` (a trainer that wrote at the top). */
  readonly path: string;
  /** The folder holding it: `A/checkpoints`, `checkpoints`, or `` (the top). */
  readonly parent: string;
  /** `A_step20` */
  readonly folder: string;
  /** `step20` or `final` */
  readonly name: string;
  /** The key's path inside the checkpoint folder. */
  readonly inner: string;
}

/**
 * The checkpoint folder of a key relative to the job prefix: `<name>_step<N>/` or `<name>_final/`
 * inside any `…/checkpoints/` (or a folder run.json names as one), or at the top of the job prefix.
 * A folder of that name elsewhere (e.g. `evals/<checkpoint>/`) is not a checkpoint.
 */
export function checkpointOfKey(
  relative: string,
  checkpointDirs: readonly string[] = [],
): CheckpointKey | undefined {
  const found = checkpointFolderOfKey(relative, checkpointDirs);
  if (!found) return undefined;
  const { path, parent, folder, inner } = found;
  return { path, parent, folder, name: found.final ? 'final' : `step${found.step}`, inner };
}

/**
 * Our run.json at the top of the job prefix, parsed; undefined when it does not exist (a job not yet
 * started) or is not JSON. With a `listing` of the job prefix, it is read only when listed.
 */
export async function readJobRunInfo(
  s3: IS3,
  layout: S3Layout,
  job: string,
  listing?: readonly S3ObjectInfo[],
): Promise<unknown> {
  const key = `${layout.checkpointsPrefix(job)}${RUN_FOLDER.runInfo}`;
  if (listing && !listing.some((o) => o.key === key)) return undefined;
  let text: string;
  try {
    text = await s3.getObjectText(layout.bucket, key);
  } catch (err) {
    if (isAwsError(err, 'NotFound')) return undefined;
    throw err;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined; // being rewritten: the listing decides
  }
}

/** What the listing of a job's prefix (`checkpoints/<job>/`) shows, relative to that prefix. */
export interface JobListing {
  readonly prefix: string;
  readonly objects: readonly S3ObjectInfo[];
  readonly relativeOf: (key: string) => string;
  /** The trainer's run folders, oldest attempt first. */
  readonly folders: readonly RunFolder[];
  readonly checkpointDirs: readonly string[];
}

/**
 * The one run-folder lookup: the folders (relative to `checkpoints/<job>/`) that hold the trainer's
 * traces and checkpoints, oldest attempt first — run.json's, else the listing's, else the top — from a
 * listing of the job prefix and its run.json as read.
 */
export function jobListing(
  layout: S3Layout,
  job: string,
  objects: readonly S3ObjectInfo[],
  runInfo: unknown,
): JobListing {
  const prefix = layout.checkpointsPrefix(job);
  const relativeOf = (key: string) => key.slice(prefix.length);
  const folders = resolveRunFolders(
    runInfo,
    objects.map((o) => relativeOf(o.key)),
  );
  return { prefix, objects, relativeOf, folders, checkpointDirs: folders.map((f) => f.checkpoints) };
}

/**
 * The job prefix listed (unless `listing` is given) and its run.json read when the listing shows one:
 * the job's run folders. A job not yet started costs one listing and no other request.
 */
export async function readJobListing(
  s3: IS3,
  layout: S3Layout,
  job: string,
  listing?: readonly S3ObjectInfo[],
): Promise<JobListing & { readonly runInfo: unknown }> {
  const objects = listing ?? (await s3.listObjects(layout.bucket, layout.checkpointsPrefix(job)));
  const runInfo = await readJobRunInfo(s3, layout, job, objects);
  return { ...jobListing(layout, job, objects, runInfo), runInfo };
}

/**
 * The trace a listing shows: the newest run folder's (the latest attempt); an older attempt's when the
 * newest has none yet; else the shortest `…/traces/trace.jsonl` key.
 */
export function newestTrace(
  listing: Pick<JobListing, 'prefix' | 'objects' | 'folders'>,
): { key: string; size: number } | undefined {
  const { prefix, objects, folders } = listing;
  const sizes = new Map(objects.map((o) => [o.key, o.size]));
  for (const f of [...folders].reverse()) {
    const key = `${prefix}${f.traces}/${RUN_FOLDER.trace}`;
    if (sizes.has(key)) return { key, size: sizes.get(key)! };
  }
  let trace: { key: string; size: number } | undefined;
  const traceSuffix = `${RUN_FOLDER.traces}/${RUN_FOLDER.trace}`;
  for (const o of objects) {
    if (o.key.endsWith(traceSuffix) && (!trace || o.key.length < trace.key.length))
      trace = { key: o.key, size: o.size };
  }
  return trace;
}
