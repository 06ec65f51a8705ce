import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DescribeTrainingJobResponse } from '@aws-sdk/client-sagemaker';
import {
  describeJob,
  isAwsError,
  isTerminal,
  requireLayout,
  type JobContext,
  type S3ObjectInfo,
} from '../aws';
import { RlvrError, RuntimeFailure, UserError } from '../errors';
import type { ProgressOf } from '../progress';
import { LOCAL, parseCheckpointFolder, parseS3Uri, RUN_FOLDER, type S3Layout } from '../layout';
import { writesResultsOnly } from '../job-kinds';
import { checkCheckpointFolder, type CheckpointCheck } from './checkpoint-check';
import { judgeJobCheckpoints } from './job-checkpoints';
import { extractTarGz, mapLimited, readJsonFile, readTextFile, walkTree, writeFileAtomic } from '../util';
import { fetchObject, freeBytes, isNoSpace, PARTIAL_SUFFIX } from './fetch-object';
import { checkpointOfKey, isSafeRelative, readJobListing, type JobListing } from './run-folders';

/** Which checkpoints to fetch: all, the final one, none, or named steps (`step20,step40`, `final`). */
export type CheckpointSelection = 'all' | 'final' | 'none' | readonly string[];

export function parseCheckpointSelection(text: string): CheckpointSelection {
  if (text === 'all' || text === 'final' || text === 'none') return text;
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0 || !items.every((i) => /^step\d+$/.test(i) || i === 'final')) {
    throw new UserError(
      `--checkpoints ${text}: use all, final, none, or steps such as step20,step40.`,
      'BadFlag',
    );
  }
  return items;
}

export type TransferEvent = ProgressOf<'file' | 'progress' | 'note'>;

export interface DownloadOptions {
  readonly job: string;
  readonly resultsDir?: string;
  readonly checkpoints?: CheckpointSelection;
  readonly concurrency?: number;
  readonly partSize?: number;
  /** Flush each file to disk before renaming it (see FetchOptions.fsync). */
  readonly fsync?: boolean;
  readonly onEvent?: (event: TransferEvent) => void;
}

export interface DownloadReport {
  readonly dir: string;
  readonly jobStatus: string;
  /** A batch evaluation or pass@k job (`rlvr eval`, `rlvr passk`): results only, no checkpoints expected. */
  readonly resultsOnly: boolean;
  readonly downloaded: number;
  readonly skipped: number;
  readonly bytes: number;
  readonly checkpointFolders: readonly string[];
  readonly availableCheckpoints: readonly string[];
  readonly checks: readonly CheckpointCheck[];
  readonly warnings: readonly string[];
}

const MANIFEST = '.rlvr-download.json';
const PROGRESS_EVERY_MS = 100;

/**
 * The run folder keeps checkpoints in `checkpoints/`, and so does `results/<job>/`; a job whose
 * trainer wrote `<run>_step20/…` at the top of the run folder gets them moved under `checkpoints/` too.
 */
export function localPathFor(relative: string): string {
  const parts = relative.split('/');
  return parts.length > 1 && parseCheckpointFolder(parts[0])
    ? `${RUN_FOLDER.checkpoints}/${relative}`
    : relative;
}

/**
 * `step20` or `final` for a key inside a checkpoint folder — in any `…/checkpoints/<name>/` (a trainer's
 * own run folder included), or at the top — else undefined.
 */
function checkpointName(relative: string, checkpointDirs: readonly string[] = []): string | undefined {
  return checkpointOfKey(relative, checkpointDirs)?.name;
}

/** Checkpoint folders under a local job folder, nested ones included (relative paths). */
export function localCheckpointFolders(dir: string, checkpointDirs: readonly string[] = []): string[] {
  const found: string[] = [];
  walkTree(dir, 4, (rel, e) => {
    if (!e.isDirectory() || e.name.startsWith('.')) return false;
    if (checkpointOfKey(`${rel}/x`, checkpointDirs)?.path === rel) {
      found.push(rel);
      return false;
    }
    return true;
  });
  return found.sort();
}

function selected(name: string | undefined, selection: CheckpointSelection): boolean {
  if (name === undefined) return true; // traces, config, evals: always
  if (selection === 'all') return true;
  if (selection === 'none') return false;
  if (selection === 'final') return name === 'final';
  return selection.includes(name);
}

interface ManifestEntry {
  etag?: string;
  size: number;
  /** Where the loadability fix moved the file (relative to the job folder). */
  renamedTo?: string;
}

function readManifest(dir: string): Record<string, ManifestEntry> {
  return readJsonFile<Record<string, ManifestEntry>>(path.join(dir, MANIFEST), {});
}

/**
 * Streams a .tar.gz into `dir`: each file to a temporary name renamed when complete, in a staging
 * folder moved into place once the archive is whole (nothing partial is left when it is not); unsafe
 * entries and everything but regular files are left out; one common top folder is stripped.
 */
async function unpackArtifact(body: NodeJS.ReadableStream, dir: string): Promise<string[]> {
  // A fresh folder of our own (mode 0700): nothing planted at a predictable name is written through.
  const staging = fs.mkdtempSync(path.join(dir, '.rlvr-extract-'));
  try {
    const written = await extractTarGz(body, staging, { unsafe: 'skip', partialSuffix: PARTIAL_SUFFIX });
    // Flatten: when everything sits under one folder, its contents go straight into `dir`.
    const tops = new Set(written.map((n) => n.split('/')[0]));
    const strip = tops.size === 1 && written.every((n) => n.includes('/')) ? `${[...tops][0]}/` : '';
    const placed: string[] = [];
    for (const name of written) {
      const rel = name.slice(strip.length);
      const to = path.join(dir, rel);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.renameSync(path.join(staging, name), to);
      placed.push(rel);
    }
    return placed;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** One download's state, shared by its steps. */
interface DownloadRun {
  readonly context: JobContext;
  readonly layout: S3Layout;
  readonly options: DownloadOptions;
  /** `checkpoints/<job>/`: the job's streamed checkpoints and traces. */
  readonly prefix: string;
  readonly job: DescribeTrainingJobResponse;
  /** `results/<job>/`, absolute. */
  readonly dir: string;
  readonly manifest: Record<string, ManifestEntry>;
  readonly saveManifest: () => void;
  readonly emit: (event: TransferEvent) => void;
  readonly warnings: string[];
  readonly tally: { downloaded: number; skipped: number; bytes: number };
}

/** The job's listing, and the checkpoint names it shows (`step20`, …, `final`), in step order. */
interface DownloadListing extends JobListing {
  readonly available: readonly string[];
}

/** The job described and its local folder opened, with the manifest of what earlier runs fetched. */
async function openDownload(
  context: JobContext,
  layout: S3Layout,
  options: DownloadOptions,
): Promise<DownloadRun> {
  const job = await describeJob(context, options.job);
  const dir = path.resolve(options.resultsDir ?? LOCAL.resultsDir, options.job);
  fs.mkdirSync(dir, { recursive: true });
  const manifest = readManifest(dir);
  return {
    context,
    layout,
    options,
    prefix: layout.checkpointsPrefix(options.job),
    job,
    dir,
    manifest,
    saveManifest: () => writeFileAtomic(path.join(dir, MANIFEST), JSON.stringify(manifest, null, 1)),
    emit: options.onEvent ?? (() => undefined),
    warnings: [],
    tally: { downloaded: 0, skipped: 0, bytes: 0 },
  };
}

/** The final artifact (small files only), streamed straight into its unpacked form; skipped when unchanged. */
async function fetchArtifact(run: DownloadRun): Promise<void> {
  const { context, job, manifest, emit, tally } = run;
  const artifact = job.ModelArtifacts?.S3ModelArtifacts
    ? parseS3Uri(job.ModelArtifacts.S3ModelArtifacts)
    : undefined;
  if (!artifact) return;
  const head = await context.aws.s3.headObject(artifact.bucket, artifact.key);
  if (!head) return;
  if (manifest[`artifact:${artifact.key}`]?.etag === head.etag) {
    tally.skipped++;
    emit({ type: 'file', key: artifact.key, bytes: head.size, skipped: true });
    return;
  }
  let files: string[];
  try {
    const body = await context.aws.s3.getObjectStream(artifact.bucket, artifact.key, { ifMatch: head.etag });
    files = await unpackArtifact(body, run.dir);
  } catch (err) {
    if (!isAwsError(err, 'PreconditionFailed')) throw err;
    throw new RuntimeFailure(
      `s3://${artifact.bucket}/${artifact.key} changed in S3 between its HEAD and its GET (If-Match ETag ` +
        `${head.etag}: 412 Precondition Failed); nothing of it was unpacked. Run again to fetch the new version.`,
      'ObjectChanged',
      { cause: err },
    );
  }
  manifest[`artifact:${artifact.key}`] = { etag: head.etag, size: head.size };
  run.saveManifest();
  tally.downloaded++;
  tally.bytes += head.size;
  emit({ type: 'file', key: artifact.key, bytes: head.size, skipped: false });
  emit({ type: 'note', message: `unpacked ${files.length} files from model.tar.gz` });
}

const checkpointOrder = (name: string) => (name === 'final' ? Infinity : Number(name.slice(4)));

/** The trainer's run folders (one per attempt) and the checkpoints the listing shows. */
async function readListing(run: DownloadRun, objects: readonly S3ObjectInfo[]): Promise<DownloadListing> {
  const listing = await readJobListing(run.context.aws.s3, run.layout, run.options.job, objects);
  const available = (
    [
      ...new Set(
        objects.map((o) => checkpointName(listing.relativeOf(o.key), listing.checkpointDirs)).filter(Boolean),
      ),
    ] as string[]
  ).sort((a, b) => checkpointOrder(a) - checkpointOrder(b));
  return { ...listing, available };
}

/** Named checkpoints must exist (a user error otherwise). */
function requireSelected(job: string, selection: CheckpointSelection, available: readonly string[]): void {
  if (!Array.isArray(selection)) return;
  const missing = selection.filter((s) => !available.includes(s));
  if (missing.length > 0) {
    throw new UserError(
      `--checkpoints: ${job} has no ${missing.join(', ')} (it has: ${available.join(', ') || 'none'}).`,
      'NoSuchCheckpoint',
    );
  }
}

/** The local file of `o` when an earlier run fetched this very version (same ETag and size). */
function sameLocalCopy(run: DownloadRun, o: S3ObjectInfo): string | undefined {
  const known = run.manifest[o.key];
  if (!known || known.etag !== o.etag) return undefined;
  // The manifest is a file in the results folder: a place it names must stay inside the job's folder.
  const renamedTo =
    typeof known.renamedTo === 'string' && isSafeRelative(known.renamedTo) ? known.renamedTo : undefined;
  if (known.renamedTo !== undefined && renamedTo === undefined) return undefined;
  const local = path.join(run.dir, renamedTo ?? localPathFor(o.key.slice(run.prefix.length)));
  const st = fs.lstatSync(local, { throwIfNoEntry: false });
  return st?.isFile() && st.size === o.size ? local : undefined;
}

/** The selected checkpoint folders the listing shows incomplete: left out, each with a warning. */
async function incompleteCheckpoints(
  run: DownloadRun,
  listing: DownloadListing,
  selection: CheckpointSelection,
): Promise<Set<string>> {
  const judged = await judgeJobCheckpoints(listing, {
    jobEnded: isTerminal(run.job.TrainingJobStatus),
    wanted: (c) => selected(c.name, selection),
    // From the local copy when it is the listed version (a repeat download makes no GET), else from S3.
    indexText: async (key) => {
      const listed = listing.objects.find((o) => o.key === key);
      const local = listed && sameLocalCopy(run, listed);
      return local
        ? readTextFile(local)
        : await run.context.aws.s3.getObjectText(run.layout.bucket, key).catch(() => undefined);
    },
  });
  const leftOut = new Set<string>();
  for (const { checkpoint: ck, verdict } of judged) {
    if (!verdict.complete) {
      leftOut.add(ck.path);
      run.warnings.push(`${ck.folder}: still being written or cut off (${verdict.why}): not downloaded`);
    }
  }
  return leftOut;
}

/** The objects to have locally: traces, config, evals, and the selected, complete checkpoints. */
function wantedObjects(
  run: DownloadRun,
  listing: DownloadListing,
  selection: CheckpointSelection,
  leftOut: ReadonlySet<string>,
): S3ObjectInfo[] {
  const { relativeOf, checkpointDirs } = listing;
  return listing.objects.filter((o) => {
    if (o.key.endsWith('/')) return false;
    // Keys come from the job: one that would land outside results/<job>/ is never written.
    if (!isSafeRelative(relativeOf(o.key))) {
      run.warnings.push(`${o.key}: not a plain relative path (empty, "." or ".." segments): not downloaded`);
      return false;
    }
    const ck = checkpointOfKey(relativeOf(o.key), checkpointDirs);
    return ck ? selected(ck.name, selection) && !leftOut.has(ck.path) : true;
  });
}

/**
 * Every wanted object in place: one the manifest says is there (same ETag, same size) is skipped; the
 * others are fetched, several at a time (large files also fetch their own ranges in parallel).
 */
async function fetchWanted(run: DownloadRun, wanted: readonly S3ObjectInfo[]): Promise<void> {
  const { context, layout, options, prefix, dir, manifest, emit, tally } = run;
  const totalBytes = wanted.reduce((n, o) => n + o.size, 0);
  let progressBytes = 0;
  let lastProgress = 0;
  const queue: S3ObjectInfo[] = [];
  for (const o of wanted) {
    if (sameLocalCopy(run, o)) {
      tally.skipped++;
      progressBytes += o.size;
      emit({ type: 'file', key: o.key, bytes: o.size, skipped: true });
    } else {
      queue.push(o);
    }
  }
  const fetchOne = async (o: S3ObjectInfo) => {
    const local = path.join(dir, localPathFor(o.key.slice(prefix.length)));
    let last = 0;
    const result = await fetchObject(context.aws.s3, layout.bucket, o, local, {
      partSize: options.partSize,
      concurrency: options.concurrency ?? 8,
      fsync: options.fsync,
      onBytes: (n) => {
        progressBytes += n - last;
        last = n;
        // A progress event per socket read would be 16,384 a GiB, each a line of --json output: ten a
        // second is what a person or a program reading them can use, and the last one always comes.
        const now = Date.now();
        if (now - lastProgress < PROGRESS_EVERY_MS && progressBytes < totalBytes) return;
        lastProgress = now;
        emit({ type: 'progress', bytes: progressBytes, totalBytes });
      },
    });
    manifest[o.key] = { etag: o.etag, size: o.size };
    run.saveManifest();
    tally.downloaded++;
    tally.bytes += result.bytesDownloaded;
    emit({ type: 'file', key: o.key, bytes: o.size, skipped: false, resumed: result.resumed });
  };
  // Large files fetch their own ranges in parallel; small files go several at a time.
  try {
    await mapLimited(queue, 4, fetchOne);
  } catch (err) {
    if (!(err instanceof RuntimeFailure && err.code === 'NoSpace')) throw err;
    const left = totalBytes - progressBytes;
    throw new RuntimeFailure(
      `${err.message} The whole download has ${left} bytes left to fetch.`,
      'NoSpace',
      {
        cause: err.cause,
      },
    );
  }
}

/**
 * Every local checkpoint folder, nested ones included, checked loadable (the known trap fixed by a
 * rename, recorded in the manifest so the next run does not fetch the file again).
 */
function verifyCheckpoints(
  run: DownloadRun,
  checkpointDirs: readonly string[],
): { checks: CheckpointCheck[]; folderNames: string[] } {
  const { dir, prefix, manifest } = run;
  const localFolders = localCheckpointFolders(dir, checkpointDirs);
  const checks = localFolders.map((f) => checkCheckpointFolder(path.join(dir, f)));
  const checkpointsPrefix = `${RUN_FOLDER.checkpoints}/`;
  const folderNames = localFolders.map((f) =>
    f.startsWith(checkpointsPrefix) ? f.slice(checkpointsPrefix.length) : f,
  );
  for (const c of checks) {
    if (c.renamed) {
      for (const [key, value] of Object.entries(manifest)) {
        if (
          !key.startsWith('artifact:') &&
          path.join(dir, localPathFor(key.slice(prefix.length))) === c.renamed.from
        ) {
          value.renamedTo = path.relative(dir, c.renamed.to);
        }
      }
      run.saveManifest();
    }
    if (c.fixed) run.emit({ type: 'note', message: `${path.basename(c.folder)}: ${c.fixed}` });
    if (!c.ok) run.warnings.push(`${path.basename(c.folder)} is not loadable: ${c.problem}`);
  }
  return { checks, folderNames };
}

/**
 * `results/<job>/`: the job's final artifact unpacked (config.yaml, run.json, …), its traces, and the
 * selected checkpoints from `checkpoints/<job>/`. Complete files are skipped; interrupted ones resume.
 */
export async function downloadJob(context: JobContext, options: DownloadOptions): Promise<DownloadReport> {
  try {
    return await downloadSteps(context, options);
  } catch (err) {
    throw explainDownloadFailure(err, options);
  }
}

/**
 * A full disk outside one object's ranges (the manifest, the unpacked artifact, a folder) named with
 * the path and the free space; the files already complete stay, so a rerun continues.
 */
function explainDownloadFailure(err: unknown, options: DownloadOptions): unknown {
  if (err instanceof RlvrError || !isNoSpace(err)) return err;
  const dir = path.resolve(options.resultsDir ?? LOCAL.resultsDir, options.job);
  const free = freeBytes(fs.existsSync(dir) ? dir : path.dirname(dir));
  return new RuntimeFailure(
    `No space left on the device writing ${err.path ?? dir}` +
      `${free === undefined ? '' : ` (${free} bytes free)`}. Free space (or choose another --results-dir) ` +
      'and run again: the files already complete are kept and skipped.',
    'NoSpace',
    { cause: err },
  );
}

async function downloadSteps(context: JobContext, options: DownloadOptions): Promise<DownloadReport> {
  const layout = requireLayout(context);
  // The listing of the streamed checkpoints and traces needs only the job's name: it runs while the job
  // is described and its artifact fetched.
  const listingDone = context.aws.s3.listObjects(layout.bucket, layout.checkpointsPrefix(options.job));
  listingDone.catch(() => undefined); // awaited below; no unhandled rejection if an earlier step throws
  const run = await openDownload(context, layout, options);
  await fetchArtifact(run);

  // Streamed checkpoints and traces: the trainer's run folders (one per attempt) stay sub-folders.
  const listing = await readListing(run, await listingDone);
  const selection = options.checkpoints ?? 'final';
  requireSelected(options.job, selection, listing.available);
  const leftOut = await incompleteCheckpoints(run, listing, selection);
  await fetchWanted(run, wantedObjects(run, listing, selection, leftOut));

  // Every checkpoint folder must be loadable and its weights whole, nested ones included.
  const { checks, folderNames } = verifyCheckpoints(run, listing.checkpointDirs);
  const { job, warnings, tally } = run;
  // An eval job writes results (evals/), never checkpoints; a pass@k job its shards (passk/).
  const resultsOnly = writesResultsOnly(job.Environment);
  if (listing.available.length === 0 && !resultsOnly) {
    warnings.push(
      `${options.job} has NO CHECKPOINTS in ${layout.uri(run.prefix)}${job.TrainingJobStatus === 'Completed' ? ' although it Completed' : ` (${job.TrainingJobStatus})`}`,
    );
  }
  return {
    dir: run.dir,
    jobStatus: job.TrainingJobStatus ?? 'Unknown',
    resultsOnly,
    downloaded: tally.downloaded,
    skipped: tally.skipped,
    bytes: tally.bytes,
    checkpointFolders: folderNames,
    availableCheckpoints: listing.available,
    checks,
    warnings,
  };
}
