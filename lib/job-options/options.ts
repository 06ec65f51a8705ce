import {
  formatGpuList,
  parseDuration,
  parseGpuList,
  type JobOptionName,
  type JobTemplate,
  type LauncherSection,
  type YamlFile,
} from '../config';
import type { Problem, SourceLocation } from '../errors';
import { checkInstanceType, gpuCount } from './instance-types';
import { BUILT_IN_DEFAULTS, DEFAULT_EVAL_GPU_COUNT } from './templates';

/** SageMaker's limits. */
export const MAX_RUNTIME_SECONDS = 28 * 24 * 3600;
export const MAX_KEEP_ALIVE_SECONDS = 3600;

/** Where a value came from: shown in the plan, and named in every error about it. */
export type OptionSource =
  | { readonly kind: 'flag'; readonly flag: string }
  | { readonly kind: 'config'; readonly location: SourceLocation; readonly path: string }
  | { readonly kind: 'template'; readonly name: string }
  | { readonly kind: 'default'; readonly note?: string };

export interface Sourced<T> {
  readonly value: T;
  readonly source: OptionSource;
}

export interface JobOptions {
  readonly instanceType: string;
  readonly instanceCount: number;
  readonly volumeGb: number;
  readonly trainGpus: readonly number[];
  readonly evalGpus: readonly number[];
  readonly maxRuntimeSeconds: number;
  readonly spot: boolean;
  readonly maxWaitSeconds: number | undefined;
  /** SageMaker's RetryStrategy.MaximumRetryAttempts (1–30); undefined: no RetryStrategy. */
  readonly maxRetries: number | undefined;
  readonly keepAliveSeconds: number;
  readonly evalWaitSeconds: number;
  /** Multi-host jobs: how long every host has to join the head's Ray cluster. */
  readonly clusterJoinTimeoutSeconds: number;
  readonly modelInputMode: 'FastFile' | 'File';
  readonly networkIsolation: boolean;
  /** Network isolation of a job that mounts the shared file system (the others keep networkIsolation). */
  readonly sharedFsNetworkIsolation: boolean;
  readonly useRay: boolean;
  /** Keep the platform's values of the variables it owns in every Python process of the job. */
  readonly holdPlatformEnv: boolean;
  readonly trainerCommand: string;
  readonly metricDefinitions: readonly { readonly Name: string; readonly Regex: string }[];
  readonly tags: Readonly<Record<string, string>>;
}
export type ResolvedJobOptions = { readonly [K in keyof JobOptions]: Sourced<JobOptions[K]> };

/** Raw option values from CLI flags, in the launcher section's vocabulary. */
export type JobOptionFlags = Partial<Record<JobOptionName, unknown>>;

/** The flag that sets each option (for messages and the plan). */
export const OPTION_FLAGS: Readonly<Record<JobOptionName, string>> = {
  instance_type: '--instance-type',
  instance_count: '--instance-count',
  volume_gb: '--volume-gb',
  train_gpus: '--train-gpus',
  eval_gpus: '--eval-gpus',
  max_runtime: '--max-runtime',
  spot: '--spot',
  max_wait: '--max-wait',
  max_retries: '--max-retries',
  keep_alive: '--keep-alive',
  eval_wait: '--eval-wait',
  cluster_join_timeout: '--cluster-join-timeout',
  model_input_mode: '--model-input-mode',
  network_isolation: '--no-network-isolation',
  shared_fs_network_isolation: '--no-shared-fs-network-isolation',
  use_ray: '--no-ray',
  hold_platform_env: '--hold-platform-env',
  trainer_command: '--trainer-command',
  metric_definitions: '(config only)',
  tags: '--tag',
};

export interface OptionLayers {
  readonly flags: JobOptionFlags;
  readonly launcher: LauncherSection | undefined;
  /** Where the launcher section's values are (the training config file). */
  readonly configFile: YamlFile | undefined;
  readonly template: { readonly name: string; readonly values: JobTemplate } | undefined;
  /** Whether an eval config is in play (decides the default GPU split). */
  readonly hasEvalConfig: boolean;
  /** The trainer profile's command, when nothing else names one. */
  readonly defaultTrainerCommand?: { readonly value: string; readonly note: string };
}

export function describeSource(source: OptionSource): string {
  switch (source.kind) {
    case 'flag':
      return `flag ${source.flag}`;
    case 'config':
      return `config ${source.location.file}:${source.location.line}:${source.location.column}`;
    case 'template':
      return `template ${source.name}`;
    case 'default':
      return source.note ? `default (${source.note})` : 'default';
  }
}

const PRECEDENCE: Record<OptionSource['kind'], number> = { flag: 3, config: 2, template: 1, default: 0 };

/** Flags > the config's launcher section > the named template > built-in defaults. */
function pick(layers: OptionLayers, name: JobOptionName): Sourced<unknown> | undefined {
  if (layers.flags[name] !== undefined)
    return { value: layers.flags[name], source: { kind: 'flag', flag: OPTION_FLAGS[name] } };
  const fromConfig = layers.launcher?.[name];
  if (fromConfig !== undefined && layers.configFile) {
    return {
      value: fromConfig,
      source: {
        kind: 'config',
        location: layers.configFile.locate(['launcher', name]),
        path: `launcher.${name}`,
      },
    };
  }
  const fromTemplate = layers.template?.values[name];
  if (fromTemplate !== undefined)
    return { value: fromTemplate, source: { kind: 'template', name: layers.template!.name } };
  if (name === 'trainer_command' && layers.defaultTrainerCommand) {
    return {
      value: layers.defaultTrainerCommand.value,
      source: { kind: 'default', note: layers.defaultTrainerCommand.note },
    };
  }
  const fallback = (BUILT_IN_DEFAULTS as Record<string, unknown>)[name];
  return fallback === undefined ? undefined : { value: fallback, source: { kind: 'default' } };
}

export function problemAt(source: OptionSource, option: string, message: string, hint?: string): Problem {
  return {
    location: source.kind === 'config' ? source.location : undefined,
    where:
      source.kind === 'config'
        ? source.path
        : source.kind === 'flag'
          ? source.flag
          : `${option} (${describeSource(source)})`,
    message,
    hint,
  };
}

/** Reads one option through the layers and parses it, recording a problem when it does not parse. */
type OptionReader = <T>(
  name: JobOptionName,
  parse: (v: unknown) => T | undefined,
  what: string,
) => Sourced<T>;

function optionReader(layers: OptionLayers, problems: Problem[]): OptionReader {
  return <T>(name: JobOptionName, parse: (v: unknown) => T | undefined, what: string): Sourced<T> => {
    const picked = pick(layers, name)!;
    const value = parse(picked.value);
    if (value === undefined) {
      problems.push(problemAt(picked.source, name, `${JSON.stringify(picked.value)} is not ${what}`));
    }
    return { value: value as T, source: picked.source };
  };
}

const int = (min: number, max: number) => (v: unknown) => {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max ? n : undefined;
};
const bool = (v: unknown) => (typeof v === 'boolean' ? v : undefined);
const duration = (v: unknown) =>
  typeof v === 'number' || typeof v === 'string' ? parseDuration(v) : undefined;
const gpus = (v: unknown) =>
  typeof v === 'string' || Array.isArray(v) ? parseGpuList(v as string | number[]) : undefined;

/** The options read as they are: everything but the GPU split and max_wait, which depend on others. */
type PlainOptions = Omit<ResolvedJobOptions, 'trainGpus' | 'evalGpus' | 'maxWaitSeconds' | 'maxRetries'>;

/** The API's range of RetryStrategy.MaximumRetryAttempts. */
export const MAX_RETRIES = { min: 1, max: 30 } as const;

function readPlainOptions(layers: OptionLayers, get: OptionReader): PlainOptions {
  return {
    instanceType: get('instance_type', (v) => (typeof v === 'string' ? v : undefined), 'an instance type'),
    instanceCount: get('instance_count', int(1, 64), 'an instance count from 1 to 64'),
    volumeGb: get('volume_gb', int(1, 16384), 'a volume size in GB from 1 to 16384'),
    maxRuntimeSeconds: get('max_runtime', duration, 'a duration'),
    spot: get('spot', bool, 'true or false'),
    keepAliveSeconds: get('keep_alive', duration, 'a duration'),
    evalWaitSeconds: get('eval_wait', duration, 'a duration'),
    clusterJoinTimeoutSeconds: get('cluster_join_timeout', duration, 'a duration'),
    modelInputMode: get(
      'model_input_mode',
      (v) => (v === 'FastFile' || v === 'File' ? v : undefined),
      'FastFile or File',
    ),
    networkIsolation: get('network_isolation', bool, 'true or false'),
    sharedFsNetworkIsolation: get('shared_fs_network_isolation', bool, 'true or false'),
    useRay: get('use_ray', bool, 'true or false'),
    holdPlatformEnv: get('hold_platform_env', bool, 'true or false'),
    // Without a trainer profile (a template checked on its own) nothing names the command: that is fine.
    trainerCommand: pick(layers, 'trainer_command')
      ? get('trainer_command', (v) => (typeof v === 'string' && v.trim() ? v : undefined), 'a command')
      : { value: '', source: { kind: 'default', note: "the trainer profile's" } },
    metricDefinitions: get(
      'metric_definitions',
      (v) => (Array.isArray(v) ? (v as JobOptions['metricDefinitions']) : undefined),
      'a list of metric definitions',
    ),
    tags: get(
      'tags',
      (v) => (v && typeof v === 'object' ? (v as Record<string, string>) : undefined),
      'a mapping',
    ),
  };
}

/** max_wait as given (checked against spot and max_runtime later); undefined value = not a duration. */
function readMaxWait(layers: OptionLayers, problems: Problem[]): Sourced<number | undefined> | undefined {
  const picked = pick(layers, 'max_wait');
  if (!picked) return undefined;
  const value = duration(picked.value);
  if (value === undefined) {
    problems.push(problemAt(picked.source, 'max_wait', `${JSON.stringify(picked.value)} is not a duration`));
  }
  return { value, source: picked.source };
}

/** max_retries: absent unless set; when set, an integer SageMaker accepts. */
function readMaxRetries(layers: OptionLayers, get: OptionReader): Sourced<number | undefined> {
  if (!pick(layers, 'max_retries')) return { value: undefined, source: { kind: 'default', note: 'not set' } };
  return get(
    'max_retries',
    int(MAX_RETRIES.min, MAX_RETRIES.max),
    `a retry count from ${MAX_RETRIES.min} to ${MAX_RETRIES.max}`,
  );
}

/** Instance type: one SageMaker accepts, with GPUs we know how to split. Returns its GPU count. */
function checkInstance(instanceType: Sourced<string>, problems: Problem[]): number | undefined {
  if (instanceType.value === undefined) return undefined;
  const verdict = checkInstanceType(instanceType.value);
  if (verdict.ok) return verdict.gpus;
  if (verdict.reason === 'not-training-type') {
    problems.push(
      problemAt(
        instanceType.source,
        'instance_type',
        `"${instanceType.value}" is not an instance type SageMaker training accepts`,
        verdict.suggestion
          ? `Did you mean "${verdict.suggestion}"?`
          : 'Use e.g. ml.p4de.24xlarge, ml.p5.48xlarge or ml.g5.2xlarge.',
      ),
    );
  } else {
    problems.push(
      problemAt(
        instanceType.source,
        'instance_type',
        `"${instanceType.value}" is not a GPU instance type this launcher knows`,
        'Use a p4d, p4de, p5, g5, g6 or g6e instance.',
      ),
    );
  }
  return undefined;
}

interface GpuSplit {
  readonly trainGpus: Sourced<number[]>;
  readonly evalGpus: Sourced<number[]>;
}

/** GPU split: eval GPUs default to the last two when an eval config is given on an 8-GPU instance. */
function resolveGpuSplit(
  layers: OptionLayers,
  get: OptionReader,
  gpusOnInstance: number | undefined,
): GpuSplit {
  const evalPicked = pick(layers, 'eval_gpus');
  const trainPicked = pick(layers, 'train_gpus');
  const all = gpusOnInstance ? Array.from({ length: gpusOnInstance }, (_, i) => i) : [];
  let evalGpus: Sourced<number[]>;
  if (evalPicked) {
    evalGpus = get('eval_gpus', gpus, 'a GPU list');
  } else if (layers.hasEvalConfig && gpusOnInstance && gpusOnInstance >= 4 && !trainPicked) {
    evalGpus = {
      value: all.slice(gpusOnInstance - DEFAULT_EVAL_GPU_COUNT),
      source: { kind: 'default', note: 'eval config given: last two GPUs' },
    };
  } else {
    evalGpus = { value: [], source: { kind: 'default' } };
  }
  const trainGpus: Sourced<number[]> = trainPicked
    ? get('train_gpus', gpus, 'a GPU list')
    : {
        value: all.filter((g) => !(evalGpus.value ?? []).includes(g)),
        source: { kind: 'default', note: 'every GPU not used for eval' },
      };
  return { trainGpus, evalGpus };
}

/** Every GPU exists, training has some, nobody shares one, and an eval config has GPUs to run on. */
function checkGpuSplit(
  { trainGpus, evalGpus }: GpuSplit,
  instanceType: string,
  gpusOnInstance: number,
  hasEvalConfig: boolean,
  problems: Problem[],
): void {
  const range = `0–${gpusOnInstance - 1}`;
  for (const [label, sourced] of [
    ['train_gpus', trainGpus],
    ['eval_gpus', evalGpus],
  ] as const) {
    const outside = sourced.value.filter((g) => g >= gpusOnInstance);
    if (outside.length > 0) {
      problems.push(
        problemAt(
          sourced.source,
          label,
          `GPU ${outside.join(', ')} does not exist on ${instanceType} (${gpusOnInstance} GPUs: ${range})`,
          `Use GPUs in ${range}.`,
        ),
      );
    }
  }
  if (trainGpus.value.length === 0) {
    problems.push(
      problemAt(trainGpus.source, 'train_gpus', 'no GPU left for training', 'Give the trainer GPUs.'),
    );
  }
  const overlap = trainGpus.value.filter((g) => evalGpus.value.includes(g));
  if (overlap.length > 0) {
    // Report it where the user set it: the more specific of the two sources.
    const trainWins = PRECEDENCE[trainGpus.source.kind] >= PRECEDENCE[evalGpus.source.kind];
    problems.push(
      problemAt(
        trainWins ? trainGpus.source : evalGpus.source,
        trainWins ? 'train_gpus' : 'eval_gpus',
        `GPU ${overlap.join(', ')} is given to both training (${formatGpuList(trainGpus.value)}) and eval (${formatGpuList(evalGpus.value)})`,
        'Split the GPUs: e.g. --train-gpus 0-5 --eval-gpus 6-7.',
      ),
    );
  }
  if (hasEvalConfig && evalGpus.value.length === 0) {
    problems.push(
      problemAt(
        evalGpus.source,
        'eval_gpus',
        'an eval config is given but no GPU is set aside for evaluation',
        'Set --eval-gpus (e.g. 6-7 with --train-gpus 0-5), or use the template p4de-train-eval.',
      ),
    );
  }
}

/** max_wait for a spot job (≥ max_runtime; max_runtime when not given); an on-demand job has none. */
function resolveMaxWait(
  plain: PlainOptions,
  maxWait: Sourced<number | undefined> | undefined,
  problems: Problem[],
): Sourced<number | undefined> {
  const maxRuntime = plain.maxRuntimeSeconds;
  if (!plain.spot.value) {
    if (maxWait && maxWait.source.kind !== 'default' && maxWait.source.kind !== 'template') {
      problems.push(
        problemAt(maxWait.source, 'max_wait', 'applies only to spot jobs', 'Add --spot or remove it.'),
      );
    }
    return { value: undefined, source: maxWait?.source ?? { kind: 'default' } };
  }
  const maxWaitSeconds: Sourced<number | undefined> = maxWait ?? {
    value: maxRuntime.value,
    source: { kind: 'default', note: 'spot: equal to max_runtime' },
  };
  if (
    maxWaitSeconds.value !== undefined &&
    maxRuntime.value !== undefined &&
    maxWaitSeconds.value < maxRuntime.value
  ) {
    problems.push(
      problemAt(
        maxWaitSeconds.source,
        'max_wait',
        `${maxWaitSeconds.value} s is shorter than max_runtime (${maxRuntime.value} s); spot jobs need max_wait ≥ max_runtime`,
      ),
    );
  }
  return maxWaitSeconds;
}

function checkMaxRuntime(maxRuntime: Sourced<number>, problems: Problem[]): void {
  if (maxRuntime.value !== undefined && (maxRuntime.value < 1 || maxRuntime.value > MAX_RUNTIME_SECONDS)) {
    problems.push(
      problemAt(
        maxRuntime.source,
        'max_runtime',
        `must be between 1 s and 28 days, got ${maxRuntime.value} s`,
      ),
    );
  }
}

/** Warm pools: at most an hour, and not with spot. */
function checkKeepAlive(keepAlive: Sourced<number>, spot: boolean, problems: Problem[]): void {
  if (keepAlive.value === undefined) return;
  if (keepAlive.value > MAX_KEEP_ALIVE_SECONDS) {
    problems.push(
      problemAt(keepAlive.source, 'keep_alive', `must be at most 3600 s (1h), got ${keepAlive.value} s`),
    );
  }
  if (keepAlive.value > 0 && spot) {
    problems.push(
      problemAt(
        keepAlive.source,
        'keep_alive',
        'warm pools cannot be used with spot training',
        'Drop one of the two.',
      ),
    );
  }
}

function checkTrainerCommand(trainerCommand: Sourced<string>, problems: Problem[]): void {
  if (trainerCommand.value && !trainerCommand.value.includes('{config}')) {
    problems.push(
      problemAt(
        trainerCommand.source,
        'trainer_command',
        'does not contain {config}',
        'Write where the config path goes, e.g. "python entrypoints/train_grpo_sft.py {config}".',
      ),
    );
  }
}

/** More than one host is one Ray cluster: without Ray nothing joins the hosts. */
function checkMultiNode(instanceCount: Sourced<number>, useRay: Sourced<boolean>, problems: Problem[]): void {
  if (instanceCount.value === undefined || instanceCount.value <= 1 || useRay.value !== false) return;
  const ray = useRay.source.kind === 'flag' ? useRay.source.flag : describeSource(useRay.source);
  problems.push(
    problemAt(
      instanceCount.source,
      'instance_count',
      `${instanceCount.value} instances without Ray (use_ray: false, ${ray}): nothing would join the hosts into one cluster`,
      'Set use_ray: true (or drop --no-ray), or run on one instance (instance_count: 1).',
    ),
  );
}

/** Resolves every job option and checks it; all problems at once. Pure. */
export function resolveJobOptions(layers: OptionLayers): {
  options?: ResolvedJobOptions;
  problems: Problem[];
} {
  const problems: Problem[] = [];
  const get = optionReader(layers, problems);
  const plain = readPlainOptions(layers, get);
  const maxWait = readMaxWait(layers, problems);
  const maxRetries = readMaxRetries(layers, get);
  const gpusOnInstance = checkInstance(plain.instanceType, problems);
  const split = resolveGpuSplit(layers, get, gpusOnInstance);
  if (gpusOnInstance !== undefined && split.trainGpus.value && split.evalGpus.value) {
    checkGpuSplit(split, plain.instanceType.value, gpusOnInstance, layers.hasEvalConfig, problems);
  }
  checkMaxRuntime(plain.maxRuntimeSeconds, problems);
  const maxWaitSeconds = resolveMaxWait(plain, maxWait, problems);
  checkKeepAlive(plain.keepAliveSeconds, plain.spot.value, problems);
  checkTrainerCommand(plain.trainerCommand, problems);
  checkMultiNode(plain.instanceCount, plain.useRay, problems);
  if (problems.length > 0) return { problems };
  return {
    problems,
    options: {
      instanceType: plain.instanceType,
      instanceCount: plain.instanceCount,
      volumeGb: plain.volumeGb,
      trainGpus: split.trainGpus,
      evalGpus: split.evalGpus,
      maxRuntimeSeconds: plain.maxRuntimeSeconds,
      spot: plain.spot,
      maxWaitSeconds,
      maxRetries,
      keepAliveSeconds: plain.keepAliveSeconds,
      evalWaitSeconds: plain.evalWaitSeconds,
      clusterJoinTimeoutSeconds: plain.clusterJoinTimeoutSeconds,
      modelInputMode: plain.modelInputMode,
      networkIsolation: plain.networkIsolation,
      sharedFsNetworkIsolation: plain.sharedFsNetworkIsolation,
      useRay: plain.useRay,
      holdPlatformEnv: plain.holdPlatformEnv,
      trainerCommand: plain.trainerCommand,
      metricDefinitions: plain.metricDefinitions,
      tags: plain.tags,
    },
  };
}

/** GPUs paid for but given to nobody ("every idle GPU is wasted money"). */
export function idleGpus(options: ResolvedJobOptions): number[] {
  const count = gpuCount(options.instanceType.value) ?? 0;
  const used = new Set([...options.trainGpus.value, ...options.evalGpus.value]);
  return Array.from({ length: count }, (_, i) => i).filter((g) => !used.has(g));
}
