/** The rule on a local folder: its files read from disk, the checkpoint folders beside it, its verdict. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MODEL_INDEX_FILE, parseCheckpointFolder } from '../layout';
import { readTextFile } from '../util';
import { compareCheckpoints, laterCheckpointExists } from './checkpoint-order';
import { weightsNamedByIndex, weightsVerdict, type CheckpointFiles, type Verdict } from './folder-verdict';
import { safetensorsHeadLength, safetensorsSize } from './safetensors';

function readHead(file: string): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const first = Buffer.alloc(8);
    const got = fs.readSync(fd, first, 0, 8, 0);
    const length = safetensorsHeadLength(first.subarray(0, got));
    if (length === undefined) return first.subarray(0, got);
    const head = Buffer.alloc(length);
    const n = fs.readSync(fd, head, 0, length, 0);
    return head.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

/** A local folder's files (symlinks followed: their export links shards to `model.safetensors`). */
export function localCheckpointFiles(folder: string): CheckpointFiles & { readonly signature: string } {
  const sizes = new Map<string, number>();
  const stamps: string[] = [];
  const visit = (rel: string) => {
    for (const e of fs.readdirSync(path.join(folder, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      let st: fs.Stats;
      try {
        st = fs.statSync(path.join(folder, r));
      } catch {
        continue; // a dangling link, or removed while we looked
      }
      if (st.isDirectory()) visit(r);
      else if (st.isFile()) {
        sizes.set(r, st.size);
        stamps.push(`${r}:${st.size}:${st.mtimeMs}`);
      }
    }
  };
  visit('');
  const indexed = sizes.has(MODEL_INDEX_FILE)
    ? weightsNamedByIndex(readTextFile(path.join(folder, MODEL_INDEX_FILE)))
    : undefined;
  const expectedSizes = new Map<string, number>();
  for (const f of sizes.keys()) {
    if (!f.endsWith('.safetensors')) continue;
    try {
      const expected = safetensorsSize(readHead(path.join(folder, f)));
      if (expected !== undefined) expectedSizes.set(f, expected);
      else expectedSizes.set(f, Number.NaN); // header not whole yet: never complete
    } catch {
      // removed while we looked
    }
  }
  return { sizes, indexed, expectedSizes, signature: stamps.sort().join('|') };
}

/** Checkpoint folders directly inside `dir`, sorted by run then step (final last). */
export function checkpointFolders(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && parseCheckpointFolder(e.name))
    .map((e) => e.name)
    .sort(compareCheckpoints);
}

/**
 * The rule on a local folder whose writer is known to be finished or not (`writerFinished`): the
 * restart's choice of a checkpoint after a job ended or was cut off.
 */
export function localCheckpointVerdict(
  dir: string,
  name: string,
  writerFinished: boolean | 'by-siblings',
): Verdict {
  const weights = weightsVerdict(localCheckpointFiles(path.join(dir, name)));
  if (!weights.complete) return weights;
  const finished =
    writerFinished === 'by-siblings'
      ? laterCheckpointExists(name, checkpointFolders(dir)) || parseCheckpointFolder(name)?.final === true
      : writerFinished;
  return finished ? weights : { complete: false, why: 'the trainer may still be writing it' };
}
