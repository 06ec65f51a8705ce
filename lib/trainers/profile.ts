/**
 * What the launcher must know about a trainer to run it: its command, the config keys it reads, where
 * the config names models and data, how it writes checkpoints and what ends it. The team's trainers
 * change every week, so the facts live here as data (built-in profiles, each fact pointing at the
 * line of their source it came from) and a trainer repository can carry its own profile file.
 */

/**
 * Keys known at a place of the config, for typo detection: a nested tree. `true` is a leaf whose
 * inside is not checked; `'[]'` holds the tree of each element of a list of mappings.
 */
export interface KeyTree {
  readonly [key: string]: KeyTree | true;
}

/** A dotted key path from the top of the config, e.g. `training.alpha_sft`. */
export type DottedKey = string;

/** A dataset loader of the trainer (the value of `data.dataset` or a mixed entry's `name`). */
export interface DatasetLoader {
  /** Keyword parameters besides the dataset name (the valid keys beside it). */
  readonly params: readonly string[];
  /**
   * Where the loader's local copy comes from: `s3-cache` loaders read a `save_to_disk` copy
   * (`/tmp/<folder>_cache`) synced from `datasets/<folder>/`; `file` loaders read the file named by
   * `fileKey`; `hub` loaders only download from the Hugging Face Hub; `none` loaders make their data.
   */
  readonly source: 's3-cache' | 'file' | 'hub' | 'none';
  /** For `s3-cache`: the folder, `{split}` replaced by the split (default `train`). */
  readonly folder?: string;
  /** For `file`: the parameter naming the file. */
  readonly fileKey?: string;
  /** A prompt format whose next-question marker must be a stop sequence (e.g. GSM8K's `Q:`). */
  readonly nextQuestionStop?: string;
  /** Where the facts came from. */
  readonly cite: string;
}

/** A data section the trainer reads: the loader section and its iterator section. */
export interface DataSection {
  readonly section: string;
  readonly iterator: string;
  /** `skip_chat_template` when the iterator section does not set it. */
  readonly skipChatTemplateDefault: boolean;
  /** Dataset names accepted at the top of the section (undefined: any of the profile's loaders). */
  readonly datasets?: readonly string[];
}

export interface TrainerProfile {
  /** Short name, set with `launcher.trainer`. */
  readonly id: string;
  /** The script, relative to the trainer's source root. */
  readonly script: string;
  /** The command; `{config}` becomes the config's path inside the job. */
  readonly command: string;
  readonly summary: string;
  /** Top-level sections the trainer reads without a guard. */
  readonly requiredSections: readonly string[];
  /** Keys it indexes without a default, each with where (file:line). */
  readonly requiredKeys: Readonly<Record<DottedKey, string>>;
  /**
   * Said once when required keys are missing (e.g. which older trainer the config was written for), only
   * when one of `ifMissing` is among them: it describes configs that lack those.
   */
  readonly missingKeysHint?: { readonly text: string; readonly ifMissing: readonly DottedKey[] };
  /** Roles it looks up by name (all must be listed). */
  readonly requiredRoles: readonly string[];
  /**
   * The trainer's dataset loaders by name (undefined: not known, so dataset names are not checked and
   * map to S3 by name and split).
   */
  readonly loaders?: Readonly<Record<string, DatasetLoader>>;
  /** `loss.name` values it accepts; undefined when it does not read `loss.name`. */
  readonly losses?: readonly string[];
  /** Whether it samples completions with `sampling` (the rollout rules apply). */
  readonly samples: boolean;
  readonly dataSections: readonly DataSection[];
  readonly checkpoints: {
    /** false: it saves none, and a job would end with no checkpoint. */
    readonly writes: boolean;
    /** The save interval in optimizer steps (falsy: only the final checkpoint). */
    readonly intervalKey?: DottedKey;
    readonly intervalDefault?: number;
    /** Whether it always writes `<run>_final`. */
    readonly final: boolean;
    /** Where the trainer forces the trainer role's `checkpoint.enable` on (a `false` is then moot). */
    readonly titanEnableForced?: string;
  };
  /** What ends training: `max_steps`, and `num_epochs` when read (undefined: not known). */
  readonly ends?: {
    readonly maxSteps: 'required' | 'optional';
    readonly maxStepsDefault?: number;
    readonly numEpochs: boolean;
  };
  /** How a restarted job continues: `none`; `weights` (load path + step counter); `full`. */
  readonly resume: 'none' | 'weights' | 'full';
  /** How it behaves at run time: run folder, resume paths, dataset copies, shared folder, eval script. */
  readonly runtime: TrainerRuntime;
  /** Keys this trainer reads beyond the shared ones (for typo detection). */
  readonly keys: KeyTree;
  /** Keys whose presence identifies this trainer's configs (recognition of repo profiles). */
  readonly recognisedBy?: readonly DottedKey[];
  /** Where the facts come from. */
  readonly cite: string;
  /** The repository's profile file that defined or changed it (undefined: built in). */
  readonly fromFile?: string;
}

/**
 * The trainer's run-time contract: what it does with the job's folders and files, so the
 * entrypoint can stream its run folder, restart it and feed it data without guessing.
 */
export interface TrainerRuntime {
  /**
   * `launcher`: it writes into the `$RLVR_RUN_DIR` it is given (checkpoints in `$RLVR_CHECKPOINT_DIR`).
   * `own`: it creates `<$rootEnv>/<config file stem>_<YYYYmmdd-HHMMSS>[_N]/` itself and leaves a
   * `marker` file in it; the entrypoint points `rootEnv` into the streamed folder and finds it.
   */
  readonly runFolder:
    | { readonly kind: 'launcher' }
    | {
        readonly kind: 'own';
        readonly rootEnv: string;
        /** Where it goes when `rootEnv` is unset (never, in a job). */
        readonly fallback: string;
        readonly marker: string;
        readonly checkpoints: string;
        readonly traces: string;
        readonly cite: string;
      };
  /** `weights` resume: the load paths pointed at the checkpoint (never the reference), and the step key. */
  readonly resumeWith?: {
    readonly loadPaths: readonly {
      readonly role: string;
      readonly key: DottedKey;
      readonly ifPresent?: boolean;
    }[];
    readonly stepKey: DottedKey;
    readonly cite: string;
  };
  /** Where its loaders look for a local copy of an `s3-cache` dataset (`{folder}` = the loader's folder). */
  readonly datasetCache?: { readonly path: string; readonly marker: string; readonly cite: string };
  /** A folder all hosts of a multi-node job must share, by the variable that names it. */
  readonly sharedFolder?: { readonly env: string; readonly cite: string };
  /** Its eval script, when the repository's eval watcher runs beside it. */
  readonly evalScript?: EvalScriptContract;
  /** The repository's pass@k script (`rlvr passk`), when it has one. */
  readonly passkScript?: PasskScriptContract;
  /**
   * Folders of the shipped source its code imports from, besides those pyproject.toml gives (a src
   * layout): they go on PYTHONPATH for every process of the job.
   */
  readonly importRoots?: { readonly paths: readonly string[]; readonly cite: string };
  /** Where it reaches for the network at import or start-up (and its eval script), and how a job copes. */
  readonly networkUses?: readonly NetworkUse[];
}

/**
 * A place where the trainer (or its eval script) reaches for the network at import or start-up. Jobs run
 * without network, so each one is handled: provided through a channel the launcher maps, provided in the
 * image, refused at plan time when a config would reach it, harmless (it fails quietly and nothing
 * depends on it), or named here for the user to provide.
 */
export interface NetworkUse {
  readonly what: string;
  readonly when: 'import' | 'start-up' | 'data loading' | 'eval';
  readonly cite: string;
  readonly handled: 'channel' | 'image' | 'refused' | 'harmless' | 'named';
  readonly how: string;
}

/** How the repository's eval script is called and how it ends (their eval_benchmarks.py). */
export interface EvalScriptContract {
  readonly script: string;
  /** `{python}`, `{config}` (the rewritten eval config), `{watch}` (a glob of complete checkpoints). */
  readonly command: string;
  /** `never`: a watch loop the entrypoint stops once results are in; `done-file`: exits after `RLVR_EVAL_DONE_FILE`. */
  readonly ends: 'never' | 'done-file';
  /** Where a checkpoint's results are recorded: summaries (glob in `output_dir`) with `results.<checkpoint>.<key>`. */
  readonly summaries: string;
  /** The result key of a benchmark: `{task}` and `{shots}` (num_fewshot, 0 when unset). */
  readonly resultKey: string;
  /** The weight files one of which it needs to take a checkpoint (undefined: any complete one). */
  readonly accepts?: readonly string[];
  /** The watch loop's poll interval key and default (seconds). */
  readonly pollKey: DottedKey;
  readonly pollDefault: number;
  readonly cite: string;
}

/**
 * How the repository's pass@k script is called and what it writes (their eval_pass_at_k.py): one process
 * per GPU, each taking its shard of the prompts; a shard's output folder grows a line per finished prompt.
 */
export interface PasskScriptContract {
  readonly script: string;
  /**
   * The command, one argv word per entry: `{python}`, `{script}`, `{dataset}`, `{model}`, `{gpus}`,
   * `{shard}`, `{shards}`, `{output}`, and `{<setting>}` for each of `settings`. A `[flag, value]` pair
   * whose value is an unset setting is left out.
   */
  readonly argv: readonly (string | readonly [string, string])[];
  /** The settings the launcher records and passes, with the script's own default (undefined: unset). */
  readonly settings: Readonly<Record<string, { readonly flag: string; readonly default?: string }>>;
  /** Its dataset names: the loader whose copy it reads, or why a job (no network) cannot run it. */
  readonly datasets: Readonly<Record<string, { readonly loader: string } | { readonly hubOnly: string }>>;
  /** Output files in each shard folder (`{shard}`: its index). */
  readonly files: {
    readonly shardFolder: string;
    readonly results: string;
    readonly completions: string;
    readonly summary: string;
  };
  /** The arguments that make it skip the prompt ids its results file already has. */
  readonly resumeArgs: readonly string[];
  /**
   * How its `--gpus` and `--gpu-index` pick the device: it sets CUDA_VISIBLE_DEVICES to the
   * `--gpu-index`-th entry of `--gpus`, so `--gpus` lists every shard's device, shard by shard.
   */
  readonly gpuRule: string;
  readonly cite: string;
}

/** The contract of a trainer without a profile: it writes where the launcher says. */
export const LAUNCHER_RUNTIME: TrainerRuntime = { runFolder: { kind: 'launcher' } };

/** Merges key trees (a leaf wins over a subtree: its inside is then free). */
export function mergeKeyTrees(...trees: readonly KeyTree[]): KeyTree {
  const out: Record<string, KeyTree | true> = {};
  for (const tree of trees) {
    for (const [key, value] of Object.entries(tree)) {
      const current = out[key];
      if (current === undefined) out[key] = value;
      else if (current === true || value === true) out[key] = true;
      else out[key] = mergeKeyTrees(current, value);
    }
  }
  return out;
}

/** A key tree from a list of keys: `['a', 'b.c']` → `{a: true, b: {c: true}}`. */
export function keyTree(keys: readonly string[]): KeyTree {
  return mergeKeyTrees(
    ...keys.map(
      (k) =>
        k
          .split('.')
          .reverse()
          .reduce<KeyTree | true>((inner, segment) => ({ [segment]: inner }), true) as KeyTree,
    ),
  );
}
