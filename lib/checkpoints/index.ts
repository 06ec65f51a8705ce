/**
 * When is a checkpoint folder complete? One rule, used by the eval watcher's hand-off and the restart
 * in the job, and by `rlvr download`. The team's trainers export in place with no done
 * marker (their model.py `export_to_hf`): `model.safetensors` exists long before it is whole.
 *
 * Complete means both:
 * - **weights whole**: every file the index names (or, without an index, the weights files, every shard
 *   of a `-of-N` set) is present, a safetensors file has the size its own header gives (8 + header +
 *   last offset), and `config.json` is there (their export copies it after the weights);
 * - **writer finished**: a later checkpoint of the same run, or `_final`, exists; or training has
 *   ended; or nothing in the folder changed for a grace period.
 */
export { compareCheckpoints, laterCheckpointExists } from './checkpoint-order';
export {
  folderVerdict,
  weightsNamedByIndex,
  type CheckpointFiles,
  type FolderVerdict,
  type Verdict,
} from './folder-verdict';
export { checkpointFolders, localCheckpointFiles, localCheckpointVerdict } from './local-folder';
export { safetensorsHeadLength, safetensorsSize } from './safetensors';
export { CheckpointTracker } from './tracker';
