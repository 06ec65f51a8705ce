import * as fs from 'node:fs';
import * as path from 'node:path';
import { localCheckpointFiles, weightsVerdict } from '../checkpoints';
import { MODEL_INDEX_FILE } from '../layout';

/**
 * A downloaded checkpoint folder must be loadable: every weights file its index names is present.
 * The known trap (BRIEF §1): a single file saved as `model.safetensors` while the index names
 * `model-00001-of-00001.safetensors` — fixed here by renaming, with a note.
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
  const check = checkNames(folder);
  return check.ok ? checkSizes(check) : check;
}

/**
 * The weights must be whole (lib/checkpoints): every safetensors file the size its own header gives.
 * A folder of other formats only (e.g. .distcp) is left to the name check.
 */
function checkSizes(check: CheckpointCheck): CheckpointCheck {
  const files = localCheckpointFiles(check.folder);
  if (![...files.sizes.keys()].some((f) => /\.(safetensors|bin|pt)$/.test(f) || f === MODEL_INDEX_FILE))
    return check;
  const verdict = weightsVerdict(files);
  return verdict.complete ? check : { ...check, ok: false, problem: verdict.why };
}

function checkNames(folder: string): CheckpointCheck {
  const files = new Set(fs.readdirSync(folder));
  const weights = [...files].filter((f) => f.endsWith('.safetensors'));
  if (!files.has(MODEL_INDEX_FILE)) {
    if (weights.length > 1)
      return { folder, ok: false, problem: `${weights.length} weights files but no ${MODEL_INDEX_FILE}` };
    if (
      weights.length === 0 &&
      ![...files].some((f) => f.endsWith('.bin') || f.endsWith('.pt') || f.endsWith('.distcp'))
    ) {
      return { folder, ok: false, problem: 'no weights files' };
    }
    return { folder, ok: true };
  }
  let named: string[];
  try {
    const index = JSON.parse(fs.readFileSync(path.join(folder, MODEL_INDEX_FILE), 'utf8')) as {
      weight_map?: Record<string, string>;
    };
    named = [...new Set(Object.values(index.weight_map ?? {}))];
  } catch (err) {
    return {
      folder,
      ok: false,
      problem: `${MODEL_INDEX_FILE} is not valid JSON (${(err as Error).message})`,
    };
  }
  const missing = named.filter((n) => !files.has(n));
  if (missing.length === 0) return { folder, ok: true };
  const strays = weights.filter((w) => !named.includes(w));
  if (missing.length === 1 && strays.length === 1) {
    fs.renameSync(path.join(folder, strays[0]), path.join(folder, missing[0]));
    return {
      folder,
      ok: true,
      fixed: `renamed ${strays[0]} to ${missing[0]}, the name ${MODEL_INDEX_FILE} gives it`,
      renamed: { from: path.join(folder, strays[0]), to: path.join(folder, missing[0]) },
    };
  }
  return {
    folder,
    ok: false,
    problem: `${MODEL_INDEX_FILE} names ${missing.join(', ')}, which the folder does not have`,
  };
}
