import { folderVerdict, localCheckpointFiles } from '../checkpoints';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UserError } from '../errors';
import { requireLayout, type JobContext } from '../aws/session';
import { DATASET_MARKERS } from '../layout';
import type { TransferEvent } from './download';
import { mapLimited } from '../util/pool';
import { matchesTag, partsTag } from './hash';
import { uploadFile } from './multipart-upload';

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

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? walk(full) : e.isFile() ? [full] : [];
  });
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

export async function uploadPath(context: JobContext, options: UploadOptions): Promise<UploadReport> {
  const layout = requireLayout(context);
  const local = path.resolve(options.localPath);
  if (!fs.existsSync(local))
    throw new UserError(`${options.localPath}: no such file or folder.`, 'NoSuchPath');
  const isDir = fs.statSync(local).isDirectory();
  if (!isDir && options.kind !== 'curricula') {
    throw new UserError(`${options.localPath}: a ${options.kind} is a folder.`, 'NotAFolder');
  }
  const files = isDir ? walk(local).filter((f) => !path.basename(f).startsWith('.')) : [local];
  if (files.length === 0) throw new UserError(`${options.localPath} has no files.`, 'Empty');
  checkShape(options.kind, local, files);
  const name = options.name ?? path.basename(local);
  if (!/^[A-Za-z0-9._-]+$/.test(name))
    throw new UserError(`--name ${name}: letters, digits, ".", "_" and "-" only.`, 'BadName');
  const prefix =
    options.kind === 'model'
      ? layout.modelPrefix(name)
      : options.kind === 'dataset'
        ? layout.datasetPrefix(name)
        : isDir
          ? `${layout.curriculaPrefix()}${options.name ? `${name}/` : ''}`
          : layout.curriculaPrefix();
  const emit = options.onEvent ?? (() => undefined);
  // One listing tells which files exist and their sizes; only a same-size file needs a HEAD (for its
  // SHA-256), so a fresh upload costs no request per file beyond the upload itself.
  const existingSizes = new Map(
    (await context.aws.s3.listObjects(layout.bucket, prefix)).map((o) => [o.key, o.size] as const),
  );
  let uploaded = 0;
  let skipped = 0;
  let bytes = 0;
  const uploadOne = async (file: string) => {
    const rel = isDir
      ? path.relative(local, file).split(path.sep).join('/')
      : (options.name ?? path.basename(file));
    const key = `${prefix}${rel}`;
    const size = fs.statSync(file).size;
    if (existingSizes.get(key) === size) {
      const remote = (await context.aws.s3.getObjectTags(layout.bucket, key))[SHA256_TAG];
      if (remote && (await matchesTag(file, remote))) {
        skipped++;
        emit({ type: 'file', key, bytes: size, skipped: true });
        return;
      }
    }
    const partSize = partSizeFor(size);
    if (size <= partSize) {
      const body = fs.readFileSync(file);
      const sha256 = createHash('sha256').update(body).digest('hex');
      await context.aws.s3.putObjectTagged(layout.bucket, key, body, { [SHA256_TAG]: sha256 });
    } else {
      const digests = await uploadFile(context.aws.s3, layout.bucket, key, file, {
        partSize,
        queueSize: options.concurrency ?? partsInFlight(partSize),
      });
      await context.aws.s3.putObjectTags(layout.bucket, key, { [SHA256_TAG]: partsTag(digests, partSize) });
    }
    uploaded++;
    bytes += size;
    emit({ type: 'file', key, bytes: size, skipped: false });
  };
  // Big files parallelise by parts; small ones several at a time.
  await mapLimited(files, 16, uploadOne);
  const uri = layout.uri(isDir || options.kind !== 'curricula' ? prefix : `${prefix}${name}`);
  const configLine =
    options.kind === 'model'
      ? `model.path: ${uri}`
      : options.kind === 'dataset'
        ? `data.dataset: ${uri}   (or the name ${name.replace(/_train$/, '')} with split train)`
        : `order: ${isDir ? `${uri}<file>` : uri}`;
  return { uri, uploaded, skipped, bytes, configLine };
}
