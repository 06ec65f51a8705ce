import {
  folderVerdict,
  laterCheckpointExists,
  weightsNamedByIndex,
  type CheckpointFiles,
  type Verdict,
} from '../checkpoints';
import { MODEL_INDEX_FILE, parseCheckpointFolder } from '../layout';
import { checkpointOfKey, type JobListing, type RunFolder } from './run-folders';

/** A checkpoint folder as the listing shows it. */
export interface ListedCheckpoint {
  /** Relative to the job prefix, e.g. `gsm8k_…/checkpoints/gsm8k_…_step20`. */
  readonly path: string;
  /** The folder holding it (`gsm8k_…/checkpoints`, `checkpoints`, or `` for the top). */
  readonly parent: string;
  /** `gsm8k_…_step20` */
  readonly folder: string;
  /** `step20` or `final` */
  readonly name: string;
  /** Sizes by path inside the folder. */
  readonly sizes: Map<string, number>;
}

/** The checkpoint folders of a listing (keys relative to the job prefix). */
export function listedCheckpoints(
  objects: readonly { readonly relative: string; readonly size: number }[],
  checkpointDirs: readonly string[] = [],
): ListedCheckpoint[] {
  const byPath = new Map<string, ListedCheckpoint>();
  for (const o of objects) {
    if (o.relative.endsWith('/')) continue;
    const ck = checkpointOfKey(o.relative, checkpointDirs);
    if (!ck) continue;
    let entry = byPath.get(ck.path);
    if (!entry) {
      entry = { path: ck.path, parent: ck.parent, folder: ck.folder, name: ck.name, sizes: new Map() };
      byPath.set(ck.path, entry);
    }
    entry.sizes.set(ck.inner, o.size);
  }
  return [...byPath.values()];
}

/**
 * The completeness rule (lib/checkpoints) on what a listing shows: weights whole (every file the index
 * names is there and not empty; the sizes safetensors headers give are not in a listing) and writer
 * finished — `_final`, a later checkpoint of the same run beside it, a later attempt's run folder
 * (the attempt that wrote it has ended), or the job has ended. (The listing has no LastModified, so the
 * "unchanged for a while" clause does not apply here.)
 */
export function listedCheckpointVerdict(
  checkpoint: ListedCheckpoint,
  context: {
    /** The folder names beside it (same parent). */
    readonly siblings: readonly string[];
    /** The index's weight files, when the folder has one. */
    readonly indexed?: CheckpointFiles['indexed'];
    /** A later attempt's run folder exists. */
    readonly laterAttempt: boolean;
    readonly jobEnded: boolean;
  },
): Verdict {
  // The known trap the local check fixes by renaming (checkpoint-check.ts) is worth downloading.
  const verdict = folderVerdict({ sizes: checkpoint.sizes, indexed: context.indexed });
  if (!verdict.loadable && !verdict.fix) return { complete: false, why: verdict.why };
  const weights: Verdict = { complete: true };
  const finished =
    parseCheckpointFolder(checkpoint.folder)?.final === true ||
    laterCheckpointExists(checkpoint.folder, context.siblings) ||
    context.laterAttempt ||
    context.jobEnded;
  return finished ? weights : { complete: false, why: 'the trainer may still be writing it' };
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
