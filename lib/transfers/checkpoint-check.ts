import * as fs from 'node:fs';
import * as path from 'node:path';
import { folderVerdict, localCheckpointFiles } from '../checkpoints';
import { MODEL_INDEX_FILE } from '../layout';

/**
 * A downloaded checkpoint folder must be loadable (lib/checkpoints `folderVerdict`, the rule every other
 * place applies). The known trap (a checkpoint that would not load in evaluation), one file saved as `model.safetensors` while the index names
 * `model-00001-of-00001.safetensors`, is fixed here by renaming, with a note.
 */
export interface CheckpointCheck {
  readonly folder: string;
  readonly ok: boolean;
  readonly fixed?: string;
  /** The file renamed by the fix, and its new name. */
  readonly renamed?: { readonly from: string; readonly to: string };
  readonly problem?: string;
}

export function checkCheckpointFolder(folder: string): CheckpointCheck {
  const verdict = folderVerdict(localCheckpointFiles(folder));
  if (verdict.loadable) return { folder, ok: true };
  if (!verdict.fix) return { folder, ok: false, problem: verdict.why };
  const { from, to } = verdict.fix.rename;
  fs.renameSync(path.join(folder, from), path.join(folder, to));
  const after = folderVerdict(localCheckpointFiles(folder));
  return {
    folder,
    ok: after.loadable,
    fixed: `renamed ${from} to ${to}, the name ${MODEL_INDEX_FILE} gives it`,
    renamed: { from: path.join(folder, from), to: path.join(folder, to) },
    ...(after.loadable ? {} : { problem: after.why }),
  };
}
