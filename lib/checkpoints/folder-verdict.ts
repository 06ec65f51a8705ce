/**
 * The rule on what is known of a folder's files (a local folder, an S3 listing): loadable, and the
 * weights half of complete.
 */
import { MODEL_INDEX_FILE } from '../layout';

const WEIGHTS = /\.(safetensors|bin|pt)$/;
const CONFIG_FILE = 'config.json';

/** `model-00002-of-00003.safetensors` → all three names; any other name → itself. */
function allShards(name: string): string[] {
  const m = /^(.*-)(\d+)-of-(\d+)(\.[a-z]+)$/.exec(name);
  if (!m) return [name];
  const [, head, k, n, ext] = m;
  const total = Number(n);
  if (total > 10_000) return [name];
  return Array.from(
    { length: total },
    (_, i) => `${head}${String(i + 1).padStart(k.length, '0')}-of-${n}${ext}`,
  );
}

/** What is known of a folder's files: sizes, the index's weight files, safetensors' expected sizes. */
export interface CheckpointFiles {
  /** Size of each file, by path relative to the folder. */
  readonly sizes: ReadonlyMap<string, number>;
  /** The weight files the index names; `'unreadable'` when the index is not (yet) valid JSON. */
  readonly indexed?: readonly string[] | 'unreadable';
  /** The size each safetensors file's header says it has, when the header was read. */
  readonly expectedSizes?: ReadonlyMap<string, number>;
}

export type Verdict = { readonly complete: true } | { readonly complete: false; readonly why: string };

/**
 * The weight files a `model.safetensors.index.json` names (its weight_map's values, once each), from
 * its text; 'unreadable' when there is no text (it could not be read) or it does not parse (yet).
 */
export function weightsNamedByIndex(text: string | undefined): readonly string[] | 'unreadable' {
  if (text === undefined) return 'unreadable';
  try {
    const index = JSON.parse(text) as { weight_map?: Record<string, string> };
    return [...new Set(Object.values(index.weight_map ?? {}))];
  } catch {
    return 'unreadable';
  }
}

/**
 * Whether a folder is a loadable Hugging Face model, on what is known of its files (a local folder, an
 * S3 listing): the one rule the pre-flight, `rlvr upload`, download, the eval watcher and the restart
 * apply. `fix` is the known trap (a checkpoint that would not load in evaluation): one weights file under another name than the index gives it.
 */
export type FolderVerdict =
  | { readonly loadable: true }
  | {
      readonly loadable: false;
      readonly why: string;
      readonly fix?: { readonly rename: { readonly from: string; readonly to: string } };
    };

export function folderVerdict(files: CheckpointFiles): FolderVerdict {
  const no = (why: string) => ({ loadable: false as const, why });
  const top = [...files.sizes.keys()].filter((f) => !f.includes('/'));
  const weights = top.filter((f) => WEIGHTS.test(f));
  if (files.indexed === 'unreadable') return no(`${MODEL_INDEX_FILE} is not valid JSON (yet)`);
  let needed: readonly string[];
  if (files.indexed) {
    if (files.indexed.length === 0) return no(`${MODEL_INDEX_FILE} names no file`);
    needed = files.indexed;
    const missing = needed.filter((f) => !files.sizes.has(f));
    const strays = weights.filter((w) => w.endsWith('.safetensors') && !needed.includes(w));
    if (missing.length === 1 && strays.length === 1) {
      return {
        loadable: false,
        why: `${MODEL_INDEX_FILE} names ${missing[0]}, and the folder holds ${strays[0]} instead`,
        fix: { rename: { from: strays[0], to: missing[0] } },
      };
    }
    if (missing.length > 0)
      return no(`${MODEL_INDEX_FILE} names ${missing.join(', ')}, which the folder does not have`);
  } else {
    if (weights.length === 0) {
      return top.some((f) => f.endsWith('.distcp'))
        ? no('a torchtitan DCP checkpoint (.distcp): neither vLLM nor Hugging Face loads it')
        : no('no weights file (yet)');
    }
    // Shards named `-0000k-of-0000N`: all N, and (written last) their index.
    const set = [...new Set(weights.flatMap(allShards))];
    const missing = set.filter((f) => !files.sizes.has(f));
    if (missing.length > 0) return no(`missing ${missing.join(', ')}`);
    if (weights.filter((w) => w.endsWith('.safetensors')).length > 1)
      return no(`${weights.length} weights files but no ${MODEL_INDEX_FILE}`);
    needed = weights;
  }
  for (const f of needed) {
    const size = files.sizes.get(f)!;
    const expected = files.expectedSizes?.get(f);
    if (size === 0) return no(`${f} is empty`);
    if (expected !== undefined && Number.isNaN(expected))
      return no(`${f} has no whole safetensors header (yet)`);
    if (expected !== undefined && size !== expected) return no(`${f} has ${size} of its ${expected} bytes`);
  }
  // Their export copies the config after the weights (model.py:476-486).
  if (!files.sizes.has(CONFIG_FILE)) return no(`no ${CONFIG_FILE} (yet)`);
  return { loadable: true };
}

/** The weights half of "complete": loadable as it is (a folder needing the rename fix is not). */
export function weightsVerdict(files: CheckpointFiles): Verdict {
  const v = folderVerdict(files);
  return v.loadable ? { complete: true } : { complete: false, why: v.why };
}
