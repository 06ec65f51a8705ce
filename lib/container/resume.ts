import * as path from 'node:path';
import { checkpointFolders, compareCheckpoints, localCheckpointVerdict } from '../checkpoints';
import { parseCheckpointFolder } from '../layout';
import { valueAtPath, WEIGHTS_ONLY_RESUME_NOTE, type ContractKeyPath, type JobContract } from '../trainers';

type Yaml = Record<string, unknown>;

export interface ResumePoint {
  readonly checkpoint: string;
  readonly path: string;
  readonly step: number;
  /** Checkpoints passed over, newest first, and why. */
  readonly skipped: readonly { readonly name: string; readonly why: string }[];
}

/**
 * The newest complete step checkpoint a restarted job finds in the folders of its earlier attempts
 * (restored from S3 by SageMaker). A folder cut off mid-export fails the completeness rule; every
 * attempt before this one has ended, so its writer is finished.
 */
export function findResumePoint(checkpointDirs: readonly string[]): ResumePoint | undefined {
  const all = checkpointDirs.flatMap((dir) =>
    checkpointFolders(dir)
      .filter((n) => parseCheckpointFolder(n)?.step !== undefined)
      .map((name) => ({ dir, name, step: parseCheckpointFolder(name)!.step! })),
  );
  all.sort((a, b) => b.step - a.step || compareCheckpoints(b.name, a.name));
  const skipped: { name: string; why: string }[] = [];
  for (const c of all) {
    const verdict = localCheckpointVerdict(c.dir, c.name, true);
    if (verdict.complete)
      return { checkpoint: c.name, path: path.join(c.dir, c.name), step: c.step, skipped };
    skipped.push({ name: c.name, why: verdict.why });
  }
  return undefined;
}

function setAt(config: Yaml, keyPath: ContractKeyPath, value: unknown): boolean {
  let node: unknown = config;
  for (const seg of keyPath.slice(0, -1)) {
    if (node === null || typeof node !== 'object') return false;
    const next = (node as Record<string | number, unknown>)[seg];
    if (next === undefined) (node as Record<string | number, unknown>)[seg] = {};
    node = (node as Record<string | number, unknown>)[seg];
  }
  if (node === null || typeof node !== 'object') return false;
  (node as Record<string | number, unknown>)[keyPath[keyPath.length - 1]] = value;
  return true;
}

/**
 * `weights` resume: the policy's load paths (trainer and rollout, never the reference: it stays the base
 * model for the KL term) point at the checkpoint, and the step counter continues from its step.
 * Returns what changed, for run.json and the log.
 */
export function applyWeightsResume(
  config: Yaml,
  contract: JobContract['resume'],
  point: ResumePoint,
): {
  kind: 'weights';
  from: string;
  step: number;
  rewritten: Record<string, { was: unknown; now: string }>;
  note: string;
} {
  const rewritten: Record<string, { was: unknown; now: string }> = {};
  for (const keyPath of contract.loadPaths ?? []) {
    const was = valueAtPath(config, keyPath);
    if (setAt(config, keyPath, point.path)) rewritten[keyPath.join('.')] = { was, now: point.path };
  }
  if (contract.stepKey) setAt(config, contract.stepKey, point.step);
  return {
    kind: 'weights',
    from: point.checkpoint,
    step: point.step,
    rewritten,
    note: WEIGHTS_ONLY_RESUME_NOTE,
  };
}
