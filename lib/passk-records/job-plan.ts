/**
 * What a pass@k campaign job is told: the file `passk-plan.json` in its config channel, written by the
 * launcher (lib/passk) and read by the image's passk mode (lib/container/passk-batch.ts); a copy lands in
 * the run folder so its results say what they are. The script's outputs are in the run folder under
 * `passk/shard_<i>/` (the script's own layout under its --output-dir), streamed to S3 with it.
 */
import * as path from 'node:path';

export const PASSK_PLAN_FILE = 'passk-plan.json';
/** The script's --output-dir, relative to the run folder. */
export const PASSK_DIR = 'passk';

/** What a campaign measures: the same campaign gives the same id, whatever job runs it. */
export interface PasskCampaign {
  /** The script's dataset name (its DATASET_REGISTRY key): `gsm8k`, `math`, … */
  readonly dataset: string;
  readonly split: string;
  /** MATH levels as the script takes them (`3,4,5`), when given. */
  readonly level?: string;
  /** Completions per prompt. */
  readonly n: number;
  /** Every sampling and generation setting passed to the script, by its flag name without dashes. */
  readonly sampling: Readonly<Record<string, string>>;
  readonly model: { readonly label: string; readonly id: string; readonly from: string };
  /** The trainer profile whose script ran. */
  readonly trainer: string;
}

/** One shard: one process of the script on one GPU of one host. */
export interface PlannedShard {
  /** The script's --gpu-index (0 … shards-1): its output folder is `shard_<index>`. */
  readonly index: number;
  readonly host: number;
  /** The GPU on its host. */
  readonly gpu: number;
  readonly argv: readonly string[];
}

export interface PasskJobPlan {
  readonly version: 1;
  readonly campaign: PasskCampaign;
  /** A digest of the campaign and the shard count: earlier output of the same id may be resumed. */
  readonly campaignId: string;
  readonly shards: readonly PlannedShard[];
  /** The script's files, as the trainer profile names them. */
  readonly files: PasskFiles;
  /** Where the model is read from in the container, and the view the script loads. */
  readonly model: { readonly containerPath: string; readonly modelPath: string };
  /** The arguments that make the script skip the prompt ids its results file already has. */
  readonly resumeArgs: readonly string[];
  /** Dataset channels and where the script's loader looks for them. */
  readonly datasetCaches: readonly {
    readonly channel: string;
    readonly path: string;
    readonly marker: string;
  }[];
  /** Folders of the shipped source that go first on PYTHONPATH. */
  readonly importRoots: readonly string[];
  /** Prompts the dataset copy has (before the script's own filters), when the plan could read it. */
  readonly datasetPrompts?: number;
}

/** The script's output files in each shard folder. */
export interface PasskFiles {
  /** `shard_{shard}` */
  readonly shardFolder: string;
  /** One line per finished prompt: `prompt_id`, `scores`, `num_correct`, `num_completions`, `completions`. */
  readonly results: string;
  /** One line per generated prompt: `prompt_id`, `prompt`, `problem`, `completions`. */
  readonly completions: string;
  readonly summary: string;
}

/**
 * Why a plan's file names would lead out of its run folder (or its job's prefix), else undefined: each
 * must be relative and never go up (`..`). The plan may come from anyone's folder or bucket, and the
 * reader must not be sent to read (and report on) files that are not the campaign's.
 */
export function planPathProblem(files: unknown): string | undefined {
  if (typeof files !== 'object' || files === null) return undefined;
  const f = files as Record<string, unknown>;
  for (const key of ['shardFolder', 'results'] as const) {
    const value = f[key];
    if (typeof value !== 'string') continue;
    const shown = `files.${key} ${JSON.stringify(value)}`;
    if (value === '' || value.includes('\0')) return `${shown} is no file name`;
    if (path.posix.isAbsolute(value) || path.win32.isAbsolute(value))
      return `${shown} is absolute: a plan's paths are relative, inside the run folder`;
    if (value.split(/[\\/]/).includes('..')) return `${shown} goes up (..) outside the run folder`;
  }
  return undefined;
}

export function shardFolder(files: Pick<PasskFiles, 'shardFolder'>, index: number): string {
  return files.shardFolder.replaceAll('{shard}', String(index));
}

/** More shards than any campaign runs (one per GPU): a plan naming more is not read. */
export const MAX_PLAN_SHARDS = 4096;

/** What the job writes beside a shard's output: each attempt of its process, for rates and restarts. */
export const SHARD_RECORD_FILE = 'rlvr-shard.json';

export interface ShardAttempt {
  readonly host: string;
  readonly gpu: number;
  /** `local` for a local run. */
  readonly instanceType: string;
  readonly startedAt: string;
  readonly endedAt?: string;
  /** Finished prompts in the results file when the attempt started and when it ended. */
  readonly promptsBefore: number;
  readonly promptsAfter?: number;
  readonly exitCode?: number | null;
  /** Why it ended other than by finishing (stopped, failed). */
  readonly outcome?: 'finished' | 'stopped' | 'failed';
}

export interface ShardRecord {
  readonly index: number;
  readonly attempts: readonly ShardAttempt[];
}
