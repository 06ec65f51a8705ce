import { folderVerdict, localCheckpointFiles } from '../checkpoints';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RuntimeFailure, UserError } from '../errors';
import { requireLayout, type JobContext } from '../aws';
import { DATASET_MARKERS, type S3Layout } from '../layout';
import type { TransferEvent } from './download';
import { mapLimited } from '../util';
import { matchesTag, partsTag } from './hash';
import { checkInterrupt, Interrupted, uploadFile } from './multipart-upload';

/*
 * Datasets, model weights and curricula into the layout's prefixes, before jobs that cannot reach the
 * Hub. Multipart with parts sized so no file needs more than 10,000; a file whose S3 copy has the
 * same size and the same content tag (hash.ts) is skipped. The tag is an object tag, not metadata:
 * tags can be set after a multipart upload, so a large file is hashed on the same read that uploads
 * it (one pass over multi-GB weights, not two).
 */

export type UploadKind = 'model' | 'dataset' | 'curricula';

export interface UploadOptions {
  readonly kind: UploadKind;
  readonly localPath: string;
  readonly name?: string;
  readonly concurrency?: number;
  readonly onEvent?: (event: TransferEvent) => void;
  /** Ctrl-C (bin/interrupt.ts): stop, abort the multipart uploads in flight, reject with `Interrupted`. */
  readonly signal?: AbortSignal;
}

export interface UploadReport {
  readonly uri: string;
  readonly uploaded: number;
  readonly skipped: number;
  readonly bytes: number;
  /** The line to put in a config. */
  readonly configLine: string;
}

const MIB = 1024 * 1024;
const MAX_PARTS = 10_000;
export const SHA256_TAG = 'rlvr-sha256';

/** Files this large go in big parts: measured faster (bench/results.md), fewer requests per GiB. */
const BIG_FILE = 512 * MIB;

/** 8 MiB parts (64 MiB for big files), whole MiB, and large enough that the file fits in 10,000 parts. */
export function partSizeFor(bytes: number): number {
  return Math.max(bytes >= BIG_FILE ? 64 * MIB : 8 * MIB, Math.ceil(bytes / MAX_PARTS / MIB) * MIB);
}

/** Parts in flight per file: memory stays within about 256 MiB per big file. */
export function partsInFlight(partSize: number): number {
  return partSize >= 64 * MIB ? 4 : 10;
}

/** Whether `target` is `root` or below it (both real paths). */
function within(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Where the links of a folder may point: inside the folder, and — when the folder is a Hugging Face
 * cache snapshot (`…/models--org--name/snapshots/<rev>`, whose files link to `../../blobs/<sha>`) —
 * inside that repository's `blobs/`. Real paths.
 */
export function linkRoots(folder: string): string[] {
  const real = fs.realpathSync(folder);
  const snapshots = path.dirname(real);
  const repo = path.dirname(snapshots);
  const blobs = path.join(repo, 'blobs');
  const hfSnapshot =
    path.basename(snapshots) === 'snapshots' &&
    /^(models|datasets|spaces)--./.test(path.basename(repo)) &&
    fs.existsSync(blobs);
  return hfSnapshot ? [real, fs.realpathSync(blobs)] : [real];
}

/**
 * The name in the bucket when none is given: the folder's, or for a Hugging Face cache snapshot the
 * model's (`models--Qwen--Qwen3-0.6B/snapshots/<rev>` → `Qwen3-0.6B`), not the revision hash.
 */
export function defaultName(local: string): string {
  const [, repo] = linkRoots(local).map((r) => path.dirname(r));
  return repo ? path.basename(repo).split('--').at(-1)! : path.basename(local);
}

/** A folder's files, links followed: with the links that point nowhere or out of bounds. */
interface Walked {
  readonly files: string[];
  readonly dangling: string[];
  readonly outside: { readonly link: string; readonly target: string }[];
}

/**
 * Every file below `dir` (hidden files left out), symbolic links followed when their target is within
 * `roots` (a link to a folder is walked like a folder; one to a folder above it is a loop, reported
 * as dangling). Links elsewhere and links to nothing are collected, never silently dropped.
 */
function walk(dir: string, roots: readonly string[]): Walked {
  const out: Walked = { files: [], dangling: [], outside: [] };
  const visit = (folder: string, ancestors: ReadonlySet<string>) => {
    for (const e of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, e.name);
      let real = full;
      if (e.isSymbolicLink()) {
        try {
          real = fs.realpathSync(full);
        } catch {
          out.dangling.push(full);
          continue;
        }
        if (!roots.some((r) => within(r, real))) {
          out.outside.push({ link: full, target: real });
          continue;
        }
      }
      const st = e.isSymbolicLink() ? fs.statSync(full) : e;
      if (st.isDirectory()) {
        const key = fs.realpathSync(full);
        if (ancestors.has(key)) out.dangling.push(full);
        else visit(full, new Set([...ancestors, key]));
      } else if (st.isFile() && !e.name.startsWith('.')) {
        out.files.push(full);
      }
    }
  };
  visit(dir, new Set([fs.realpathSync(dir)]));
  return out;
}

/** Links that point nowhere or outside the folder are bad input (exit 2), found before any upload. */
function checkLinks(given: string, local: string, walked: Walked, roots: readonly string[]): void {
  const rel = (p: string) => path.join(given, path.relative(local, p));
  const problems: string[] = [];
  if (walked.dangling.length > 0) {
    problems.push(
      `links that point nowhere (dangling, or a loop): ${walked.dangling.map((l) => `${rel(l)} → ${readLink(l)}`).join(', ')}. ` +
        'Restore their targets or remove the links.',
    );
  }
  if (walked.outside.length > 0) {
    const bounds = roots.length > 1 ? `${given} or its Hugging Face cache blobs/ (${roots[1]})` : given;
    problems.push(
      `links that point outside ${bounds}: ${walked.outside.map((o) => `${rel(o.link)} → ${o.target}`).join(', ')}. ` +
        'Links are followed only inside the folder given: copy the files in (cp -L) or upload the folder they point into.',
    );
  }
  if (problems.length > 0) {
    throw new UserError(`${given}: ${problems.join('; ')} Nothing was uploaded.`, 'BadLink');
  }
}

function readLink(link: string): string {
  try {
    return fs.readlinkSync(link);
  } catch {
    return '?';
  }
}

function checkShape(kind: UploadKind, local: string, files: string[]): void {
  const names = new Set(files.map((f) => path.relative(local, f)));
  if (kind === 'model') {
    // The rule the pre-flight will apply to the uploaded copy (lib/checkpoints).
    const verdict = folderVerdict(localCheckpointFiles(local));
    if (!verdict.loadable) {
      const fix = verdict.fix
        ? `Rename ${verdict.fix.rename.from} to ${verdict.fix.rename.to} first.`
        : 'Download it whole with `huggingface-cli download <id> --local-dir <folder>`.';
      throw new UserError(`${local} is not a loadable model folder: ${verdict.why}. ${fix}`, 'NotAModel');
    }
  }
  if (kind === 'dataset' && !DATASET_MARKERS.some((m) => [...names].some((n) => n.endsWith(m)))) {
    throw new UserError(
      `${local} is not a dataset saved with save_to_disk (no dataset_info.json / dataset_dict.json).`,
      'NotADataset',
    );
  }
}

/** The files to upload: one curriculum file, or every file of the folder (links checked). */
function localFiles(options: UploadOptions): { local: string; isDir: boolean; files: string[] } {
  const local = path.resolve(options.localPath);
  if (!fs.existsSync(local)) {
    const dangling = fs.lstatSync(local, { throwIfNoEntry: false })?.isSymbolicLink();
    throw new UserError(
      dangling
        ? `${options.localPath}: a link that points nowhere (→ ${readLink(local)}).`
        : `${options.localPath}: no such file or folder.`,
      'NoSuchPath',
    );
  }
  const isDir = fs.statSync(local).isDirectory();
  if (!isDir && options.kind !== 'curricula') {
    throw new UserError(`${options.localPath}: a ${options.kind} is a folder.`, 'NotAFolder');
  }
  if (!isDir) return { local, isDir, files: [local] };
  const roots = linkRoots(local);
  const walked = walk(local, roots);
  checkLinks(options.localPath, local, walked, roots);
  return { local, isDir, files: walked.files };
}

function prefixFor(layout: S3Layout, options: UploadOptions, name: string, isDir: boolean): string {
  if (options.kind === 'model') return layout.modelPrefix(name);
  if (options.kind === 'dataset') return layout.datasetPrefix(name);
  return isDir ? `${layout.curriculaPrefix()}${options.name ? `${name}/` : ''}` : layout.curriculaPrefix();
}

/** One upload's state, shared by its files. */
interface Uploading {
  readonly context: JobContext;
  readonly bucket: string;
  readonly options: UploadOptions;
  readonly existingSizes: ReadonlyMap<string, number>;
  readonly emit: (event: TransferEvent) => void;
  readonly tally: { uploaded: number; skipped: number; bytes: number };
}

/** One file to `key`: skipped when S3 has it (same size, same content tag); else one PUT or multipart. */
async function uploadOne(u: Uploading, file: string, key: string): Promise<void> {
  const { context, bucket, options, tally } = u;
  checkInterrupt(options.signal, `the upload of ${key}`);
  const size = fs.statSync(file).size;
  if (u.existingSizes.get(key) === size) {
    const remote = (await context.aws.s3.getObjectTags(bucket, key))[SHA256_TAG];
    if (remote && (await matchesTag(file, remote))) {
      tally.skipped++;
      u.emit({ type: 'file', key, bytes: size, skipped: true });
      return;
    }
  }
  const partSize = partSizeFor(size);
  if (size <= partSize) {
    const body = fs.readFileSync(file);
    const sha256 = createHash('sha256').update(body).digest('hex');
    await context.aws.s3.putObjectTagged(bucket, key, body, { [SHA256_TAG]: sha256 });
  } else {
    const digests = await uploadFile(context.aws.s3, bucket, key, file, {
      partSize,
      queueSize: options.concurrency ?? partsInFlight(partSize),
      signal: options.signal,
    });
    // Once complete, the object is whole: its tag goes on even if Ctrl-C came meanwhile.
    await context.aws.s3.putObjectTags(bucket, key, { [SHA256_TAG]: partsTag(digests, partSize) });
  }
  tally.uploaded++;
  tally.bytes += size;
  u.emit({ type: 'file', key, bytes: size, skipped: false });
}

/**
 * Uploads a model folder, a dataset folder or curricula. Bad input (no such path, not the kind's
 * shape, a link that points nowhere or outside the folder, a bad name) fails before any request.
 * With `signal` (Ctrl-C), no file starts after it fires, multipart uploads in flight are aborted, and
 * this rejects with `Interrupted` (exit 1) saying what was kept.
 */
export async function uploadPath(context: JobContext, options: UploadOptions): Promise<UploadReport> {
  const layout = requireLayout(context);
  const { local, isDir, files } = localFiles(options);
  if (files.length === 0) throw new UserError(`${options.localPath} has no files.`, 'Empty');
  checkShape(options.kind, local, files);
  const name = options.name ?? defaultName(local);
  // An order file may sit in a folder of curricula/ (`pass-at-64/gsm8k_curriculum.txt`), as
  // `rlvr curriculum build --name` places it; every other name is one path segment.
  const nested = options.kind === 'curricula' && !isDir;
  const segments = nested ? name.split('/') : [name];
  if (segments.some((s) => !/^[A-Za-z0-9._-]+$/.test(s) || s === '.' || s === '..'))
    throw new UserError(
      `--name ${name}: letters, digits, ".", "_" and "-" only${nested ? ', in folders separated by "/" (not "." or "..")' : ''}.`,
      'BadName',
    );
  const prefix = prefixFor(layout, options, name, isDir);
  // One listing tells which files exist and their sizes; only a same-size file needs a HEAD (for its
  // SHA-256), so a fresh upload costs no request per file beyond the upload itself.
  const existingSizes = new Map(
    (await context.aws.s3.listObjects(layout.bucket, prefix)).map((o) => [o.key, o.size] as const),
  );
  const u: Uploading = {
    context,
    bucket: layout.bucket,
    options,
    existingSizes,
    emit: options.onEvent ?? (() => undefined),
    tally: { uploaded: 0, skipped: 0, bytes: 0 },
  };
  const keyOf = (file: string) =>
    `${prefix}${isDir ? path.relative(local, file).split(path.sep).join('/') : (options.name ?? path.basename(file))}`;
  try {
    // Big files parallelise by parts; small ones several at a time.
    await mapLimited(files, 16, (file) => uploadOne(u, file, keyOf(file)));
  } catch (err) {
    if (err instanceof Interrupted) throw interruptedUpload(u.tally, files.length);
    throw err;
  }
  const uri = layout.uri(isDir || options.kind !== 'curricula' ? prefix : `${prefix}${name}`);
  const configLine =
    options.kind === 'model'
      ? `model.path: ${uri}`
      : options.kind === 'dataset'
        ? `data.dataset: ${uri}   (or the name ${name.replace(/_train$/, '')} with split train)`
        : `order: ${isDir ? `${uri}<file>` : uri}`;
  return { uri, ...u.tally, configLine };
}

function interruptedUpload(tally: Uploading['tally'], total: number): RuntimeFailure {
  const done = tally.uploaded + tally.skipped;
  return new RuntimeFailure(
    `Interrupted: the unfinished uploads were aborted (no partial upload is left in S3). ` +
      `${done} of ${total} files are complete in S3 and kept; the copy in S3 is incomplete until the same ` +
      'upload is run again (it skips complete files).',
    'Interrupted',
  );
}
