import { isMap, valueAtPath, type YamlMap } from './config-tree';
import type { EvalScriptContract, TrainerProfile, TrainerRuntime } from './profile';

/** A key path into a config: `['roles', 0, 'config', 'model', 'hf_assets_path']`. */
export type ContractKeyPath = readonly (string | number)[];

/**
 * What the entrypoint must know of the trainer at run time, computed by the launcher from the trainer's
 * profile and the config, and shipped with the job (`jobs/<job>/contract.json` in the config channel):
 * the entrypoint stays generic and interprets no profile.
 */
export interface JobContract {
  readonly trainer: string;
  /** The config's file name as the user gave it: their runtime names the run after its stem. */
  readonly configName: string;
  readonly runFolder: TrainerRuntime['runFolder'];
  /** Whether the job must end with at least one checkpoint. */
  readonly expectCheckpoints: boolean;
  readonly resume: {
    readonly kind: TrainerProfile['resume'];
    /** `weights`: where the config names the policy's load paths, and the step counter's key. */
    readonly loadPaths?: readonly ContractKeyPath[];
    readonly stepKey?: ContractKeyPath;
    readonly cite?: string;
  };
  /** Dataset channels and where the trainer's loaders look for them. */
  readonly datasetCaches: readonly {
    readonly channel: string;
    readonly path: string;
    readonly marker: string;
  }[];
  readonly sharedFolder?: TrainerRuntime['sharedFolder'];
  /**
   * Folders of the shipped source (relative to it) that go first on PYTHONPATH for the trainer, its
   * eval script and Ray on every host: where the trainer's own packages are imported from.
   */
  readonly importRoots?: readonly string[];
  readonly eval?: EvalScriptContract & {
    /** The result keys every checkpoint must have before the watcher is stopped. */
    readonly resultKeys: readonly string[];
  };
  /**
   * A job mounting the shared file system: whether it runs with network isolation and why (AWS does
   * not document a file-system channel with isolation, so shared_fs_network_isolation may turn it off
   * for such a job alone). Kept in run.json with the job's other inputs.
   */
  readonly networkIsolation?: { readonly value: boolean; readonly reason: string };
  /**
   * The forecast the plan gave (the run's shape, its steps, the rate and wall time similar runs said),
   * kept in run.json beside what happened: the next forecasts learn from it, `rlvr jobs --forecast`
   * checks it.
   */
  readonly forecast?: JobForecastRecord;
  /**
   * The job holds the platform's values of the variables it owns (hold_platform_env) in every Python
   * process, against the writes the plan found at import (`src/x.py:15 NCCL_SOCKET_IFNAME="ens32"`).
   */
  readonly holdPlatformEnv?: { readonly against: readonly string[] };
  /** What the submit let through on the user's word (`--allow-missing-order-ids`), kept in run.json. */
  readonly acknowledged?: {
    readonly missingOrderIds?: readonly {
      readonly order: string;
      readonly missing: number;
      readonly of: number;
      readonly dataset: string;
    }[];
  };
}

/** A job's forecast as recorded (lib/forecast makes it). */
export interface JobForecastRecord {
  readonly shape: Readonly<Record<string, string>>;
  readonly maxSteps?: number;
  readonly secondsPerStep?: number;
  readonly wallSeconds?: number;
  readonly similarRuns: number;
  /** Made only from runs not enough alone (no checkpoint seen, or under a tenth of their steps). */
  readonly rough?: boolean;
}

export const WEIGHTS_ONLY_RESUME_NOTE = 'weights-only resume: optimizer state and data order restart';

function roleIndex(config: YamlMap, name: string): number {
  const roles = Array.isArray(config.roles) ? config.roles : [];
  return roles.findIndex((r) => isMap(r) && r.name === name);
}

/** Where the config names a role's key (undefined: no such role). */
export function roleKeyPath(config: YamlMap, role: string, dotted: string): ContractKeyPath | undefined {
  const i = roleIndex(config, role);
  return i < 0 ? undefined : ['roles', i, 'config', ...dotted.split('.')];
}

/** The benchmarks an eval config asks for: its watch task groups' (the job's watcher), else its list. */
export function evalBenchmarks(evalConfig: YamlMap): { task: string; shots: string; at: ContractKeyPath }[] {
  const benchmarks: { b: unknown; at: ContractKeyPath }[] = [];
  const watch = isMap(evalConfig.watch) ? evalConfig.watch : {};
  const groups = Array.isArray(watch.task_groups) ? watch.task_groups : [];
  const list = (v: unknown, at: ContractKeyPath) =>
    Array.isArray(v) ? v.forEach((b, i) => benchmarks.push({ b, at: [...at, i] })) : undefined;
  if (groups.length > 0) {
    groups.forEach((g, i) => isMap(g) && list(g.benchmarks, ['watch', 'task_groups', i, 'benchmarks']));
  } else list(evalConfig.benchmarks, ['benchmarks']);
  return benchmarks.map(({ b, at }) => ({
    task: isMap(b) ? String(b.task) : String(b),
    shots: isMap(b) && b.num_fewshot !== undefined && b.num_fewshot !== null ? String(b.num_fewshot) : '0',
    at: isMap(b) ? [...at, 'task'] : at,
  }));
}

/** The result keys an eval config asks for (`{task}_{shots}shot` for their script). */
export function evalResultKeys(
  evalConfig: YamlMap,
  contract: Pick<EvalScriptContract, 'resultKey'>,
): string[] {
  const keys = evalBenchmarks(evalConfig).map(({ task, shots }) =>
    contract.resultKey.replaceAll('{task}', task).replaceAll('{shots}', shots),
  );
  return [...new Set(keys)];
}

export interface JobContractInput {
  readonly profile: TrainerProfile;
  /** The trainer's config (roles as written: their indices are the resolved config's). */
  readonly config: YamlMap;
  readonly configName: string;
  readonly expectCheckpoints: boolean;
  /** Folder datasets of `s3-cache` loaders: channel and loader folder. */
  readonly cachedDatasets: readonly { readonly channel: string; readonly folder: string }[];
  readonly evalConfig?: YamlMap;
}

export function buildJobContract(input: JobContractInput): JobContract {
  const { profile, config } = input;
  const runtime = profile.runtime;
  const loadPaths =
    profile.resume === 'weights' && runtime.resumeWith
      ? runtime.resumeWith.loadPaths
          .map((p) => ({ p, at: roleKeyPath(config, p.role, p.key) }))
          .filter(({ p, at }) => at !== undefined && (!p.ifPresent || valueAtPath(config, at) !== undefined))
          .map(({ at }) => at!)
      : undefined;
  const cache = runtime.datasetCache;
  const evalScript = runtime.evalScript;
  return {
    trainer: profile.id,
    configName: input.configName,
    runFolder: runtime.runFolder,
    expectCheckpoints: input.expectCheckpoints,
    resume: {
      kind: profile.resume,
      ...(loadPaths && runtime.resumeWith
        ? { loadPaths, stepKey: runtime.resumeWith.stepKey.split('.'), cite: runtime.resumeWith.cite }
        : {}),
    },
    datasetCaches: cache
      ? input.cachedDatasets.map((d) => ({
          channel: d.channel,
          path: cache.path.replaceAll('{folder}', d.folder),
          marker: cache.marker,
        }))
      : [],
    ...(runtime.sharedFolder ? { sharedFolder: runtime.sharedFolder } : {}),
    ...(input.evalConfig && evalScript
      ? { eval: { ...evalScript, resultKeys: evalResultKeys(input.evalConfig, evalScript) } }
      : {}),
  };
}
