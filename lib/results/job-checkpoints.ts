import type { S3ObjectInfo } from '../aws';
import { weightsNamedByIndex, type CheckpointFiles, type Verdict } from '../checkpoints';
import { MODEL_INDEX_FILE, type S3Layout } from '../layout';
import { listedCheckpoints, listedCheckpointVerdict, type ListedCheckpoint } from './download';
import { resolveRunFolders, type RunFolder } from './run-folders';

/** What the listing of a job's prefix (`checkpoints/<job>/`) shows, relative to that prefix. */
export interface JobListing {
  readonly prefix: string;
  readonly objects: readonly S3ObjectInfo[];
  readonly relativeOf: (key: string) => string;
  /** The trainer's run folders, oldest attempt first. */
  readonly folders: readonly RunFolder[];
  readonly checkpointDirs: readonly string[];
}

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

/** The run folder a checkpoint belongs to (its index in `folders`), or -1. */
export function runFolderIndex(checkpoint: ListedCheckpoint, folders: readonly RunFolder[]): number {
  const exact = folders.findIndex((f) => f.checkpoints === checkpoint.parent);
  if (exact >= 0) return exact;
  return folders.findIndex((f) => f.folder !== '' && checkpoint.path.startsWith(`${f.folder}/`));
}

export interface JudgedCheckpoint {
  readonly checkpoint: ListedCheckpoint;
  readonly verdict: Verdict;
  /** The weight files its index names, when it has one. */
  readonly indexed: CheckpointFiles['indexed'];
  /** Its attempt's place among the run folders (-1: none). */
  readonly attempt: number;
}

/**
 * The checkpoints a job's listing shows, each judged by the completeness rule (lib/checkpoints, applied
 * to a listing by `listedCheckpointVerdict`), for those `wanted` picks. `indexText` reads a checkpoint's
 * `model.safetensors.index.json` (download reads its local copy when it has the same version).
 */
export async function judgeJobCheckpoints(
  listing: JobListing,
  options: {
    readonly jobEnded: boolean;
    readonly wanted: (checkpoint: ListedCheckpoint) => boolean;
    readonly indexText: (key: string, checkpoint: ListedCheckpoint) => Promise<string | undefined>;
  },
): Promise<JudgedCheckpoint[]> {
  const { objects, relativeOf, folders, checkpointDirs } = listing;
  const listed = listedCheckpoints(
    objects.map((o) => ({ relative: relativeOf(o.key), size: o.size })),
    checkpointDirs,
  );
  const out: JudgedCheckpoint[] = [];
  for (const ck of listed.filter(options.wanted)) {
    const indexed: CheckpointFiles['indexed'] = ck.sizes.has(MODEL_INDEX_FILE)
      ? weightsNamedByIndex(await options.indexText(`${listing.prefix}${ck.path}/${MODEL_INDEX_FILE}`, ck))
      : undefined;
    const attempt = runFolderIndex(ck, folders);
    const verdict = listedCheckpointVerdict(ck, {
      siblings: listed.filter((c) => c.parent === ck.parent).map((c) => c.folder),
      indexed,
      laterAttempt: attempt >= 0 && attempt < folders.length - 1,
      jobEnded: options.jobEnded,
    });
    out.push({ checkpoint: ck, verdict, indexed, attempt });
  }
  return out;
}
