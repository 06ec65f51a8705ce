/**
 * What an eval job is told: the file `eval-plan.json` in its config channel, written by the
 * launcher and read by the image's eval mode (lib/container/eval-batch.ts). Names and paths shared by
 * both sides live here.
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { CONTAINER, RUN_FOLDER } from '../layout';

/** The two evaluation harnesses: EleutherAI's lm_eval and AllenAI's OLMES. */
export type Harness = 'lm_eval' | 'olmes';

export const EVAL_PLAN_FILE = 'eval-plan.json';

/** A checkpoint as the job sees it. */
export interface PlannedCheckpoint {
  /** The results table's row name. */
  readonly label: string;
  /** Its identity across jobs: `<job>:step20` for a job's checkpoint, else its S3 URI or local path. */
  readonly id: string;
  /** Where it is read from in the container (a channel's folder). */
  readonly containerPath: string;
  /** Where the unit commands load it: a view of the folder (the index fix applied there, never in S3). */
  readonly modelPath: string;
  /** Where it comes from, for people: the S3 URI, or the local folder. */
  readonly from: string;
}

/** One (checkpoint, task) evaluation on one GPU of one host. */
export interface PlannedUnit {
  /** Identity across jobs: same checkpoint, task, shots, settings and harness → same id. */
  readonly id: string;
  readonly host: number;
  readonly gpu: number;
  readonly checkpoint: string;
  readonly task: string;
  readonly numFewshot: number;
  /** Its result folder, relative to the run folder. */
  readonly folder: string;
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly estimateS: number;
}

export interface EvalJobPlan {
  readonly version: 1;
  readonly harness: Harness;
  readonly checkpoints: readonly PlannedCheckpoint[];
  readonly units: readonly PlannedUnit[];
  /** Deviations from the standard, as `--deviate` named them (recorded with every result). */
  readonly deviations: readonly string[];
  /** Units not run because an earlier eval job has their results: the results table reads them there. */
  readonly reused: readonly { readonly id: string; readonly job: string; readonly folder: string }[];
}

/** A unit's record once it ran: `unit-<id>.json` when it succeeded, `failed-<id>.json` when not. */
export interface UnitRecord {
  readonly id: string;
  readonly checkpoint: { readonly label: string; readonly id: string; readonly from: string };
  readonly task: string;
  readonly numFewshot: number;
  readonly harness: Harness;
  readonly argv: readonly string[];
  readonly deviations: readonly string[];
  readonly host: string;
  readonly gpu: number;
  readonly startedAt: string;
  readonly wallS: number;
  readonly exitCode: number | null;
  /** Why it failed (the last lines of its log). */
  readonly failure?: string;
}

export const UNIT_FILES = {
  done: (id: string) => `unit-${id}.json`,
  failed: (id: string) => `failed-${id}.json`,
  log: 'log.txt',
  command: 'command.txt',
  /** The harness's own output (its results JSON, samples when asked). */
  harness: 'harness',
} as const;

/** `unit-<id>.json` / `failed-<id>.json` → the id and how it ended. */
export function parseUnitFileName(name: string): { id: string; ok: boolean } | undefined {
  const m = /^(unit|failed)-([0-9a-f]{16})\.json$/.exec(name);
  return m ? { id: m[2], ok: m[1] === 'unit' } : undefined;
}

/** A label as a folder name (the run folder's `evals/<label>/`). */
export function labelFolder(label: string): string {
  return label.replace(/[^\w.-]/g, '_');
}

export function unitFolder(label: string, task: string, numFewshot: number): string {
  // Their watcher's result key is `<task>_<n>shot` (eval_benchmarks.py:496): the same here.
  return `${RUN_FOLDER.evals}/${labelFolder(label)}/${task}_${numFewshot}shot`;
}

/** Where the unit commands load a checkpoint from, inside the job (made by the eval mode). */
export function modelViewPath(tmpRoot: string, label: string): string {
  return path.posix.join(tmpRoot, 'rlvr-eval-models', labelFolder(label));
}

/** A unit's result folder inside the container. */
export function unitContainerDir(folder: string): string {
  return path.posix.join(CONTAINER.checkpointsDir, folder);
}

export function unitId(input: {
  readonly checkpointId: string;
  readonly task: string;
  readonly numFewshot: number;
  readonly harness: Harness;
  readonly deviations: readonly string[];
}): string {
  const text = JSON.stringify([
    input.checkpointId,
    input.task,
    input.numFewshot,
    input.harness,
    [...input.deviations].sort(),
  ]);
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}
