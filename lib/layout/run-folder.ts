import * as path from 'node:path';

/** The run folder: the same names in `checkpoints/<job>/` and in `results/<job>/`. */
export const RUN_FOLDER = {
  config: 'config.yaml',
  results: 'RESULTS.md',
  runInfo: 'run.json',
  patches: 'patches',
  logs: 'logs',
  evals: 'evals',
  /** Small final artifacts the entrypoint copies into /opt/ml/model. */
  summary: 'summary.json',
  /** Local runs: the container's whole output, and the job's failure file when it failed. */
  localRunLog: 'logs-local-run.txt',
  failure: 'failure.txt',
  traces: 'traces',
  trace: 'trace.jsonl',
  /** Where checkpoint folders go in `results/<job>/`. */
  checkpoints: 'checkpoints',
} as const;

/**
 * A worker host's own file in the run folder its hosts share: `run.json` → `run-algo-2.json`. The head's
 * (or the one host's) files keep their names: they are the job's.
 */
export function workerFileName(name: string, host: string): string {
  const ext = path.posix.extname(name);
  return `${name.slice(0, name.length - ext.length)}-${host}${ext}`;
}

/** A checkpoint folder is `<run>_step<N>` or `<run>_final`. */
export function parseCheckpointFolder(
  name: string,
): { readonly step?: number; readonly final: boolean } | undefined {
  const m = /_(?:step(\d+)|(final))$/.exec(name);
  if (!m) return undefined;
  return m[2] ? { final: true } : { step: Number(m[1]), final: false };
}

/** A checkpoint folder a key lies in (keys relative to `checkpoints/<job>/`). */
export interface CheckpointFolderKey {
  /** e.g. `A/checkpoints/A_step20`, `checkpoints/r_step20`, or `r_step40` (a trainer that wrote at the top). */
  readonly path: string;
  /** The folder holding it: `A/checkpoints`, `checkpoints`, or `` (the top). */
  readonly parent: string;
  /** `A_step20` */
  readonly folder: string;
  /** The step, or undefined for `<run>_final`. */
  readonly step?: number;
  readonly final: boolean;
  /** The key's path inside the checkpoint folder. */
  readonly inner: string;
}

/**
 * The checkpoint folder of a key relative to `checkpoints/<job>/`: `<run>_step<N>/` or `<run>_final/`
 * inside any `…/checkpoints/` (the entrypoint's RLVR_CHECKPOINT_DIR `checkpoints/`, or a trainer's own run
 * folder's `<folder>/checkpoints/`), inside a folder in `checkpointDirs`, or at the top of the job prefix.
 * A folder of that name elsewhere (e.g. `evals/<checkpoint>/`) is not a checkpoint. The checkpoint-expiry
 * function and download (lib/transfers/run-folders.ts) read the job prefix by this one rule.
 */
export function checkpointFolderOfKey(
  relative: string,
  checkpointDirs: readonly string[] = [],
): CheckpointFolderKey | undefined {
  const parts = relative.split('/');
  for (let i = 0; i < parts.length - 1; i++) {
    const parsed = parseCheckpointFolder(parts[i]);
    if (!parsed) continue;
    const parent = parts.slice(0, i).join('/');
    if (i === 0 || parts[i - 1] === RUN_FOLDER.checkpoints || checkpointDirs.includes(parent)) {
      return {
        path: parts.slice(0, i + 1).join('/'),
        parent,
        folder: parts[i],
        ...(parsed.step !== undefined ? { step: parsed.step } : {}),
        final: parsed.final,
        inner: parts.slice(i + 1).join('/'),
      };
    }
  }
  return undefined;
}
