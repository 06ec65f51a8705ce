import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  formatKeyPath,
  loaderUses,
  type KeyPath,
  type LoaderUse,
  type TrainingConfig,
  type YamlFile,
} from '../config';
import type { Problem } from '../errors';
import {
  channelPath,
  CHANNELS,
  parseS3Uri,
  RESERVED_CHANNEL_NAMES,
  S3Layout,
  s3Uri,
  type S3Location,
} from '../layout';
import type { DatasetLoader } from '../trainers';

/*
 * Everything a job reads from S3, derived from the config (pure, except for asking whether a local
 * path exists). Jobs cannot reach the Hugging Face Hub, so every model and dataset reference is mapped
 * to S3 — explicitly, with the mapping stated in the plan, never a silent guess (a guessed path once trained on the wrong model).
 */

export { parseS3Uri, s3Uri, type S3Location } from '../layout';

const HUB_ID = /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/;

export type ModelReferenceKind = 's3' | 'hub-id' | 'local-path' | 'name';

export interface ModelInput {
  /** S3 prefix of the model folder (ends with `/`). */
  readonly location: S3Location;
  /** How each distinct reference in the config was mapped. */
  readonly mappings: readonly {
    readonly value: string;
    readonly kind: ModelReferenceKind;
    readonly note: string;
  }[];
  /** Config key paths that name the model (rewritten to the channel path). */
  readonly referencedAt: readonly KeyPath[];
  readonly channel: string;
  readonly containerPath: string;
}

export interface DatasetInput {
  readonly folder: string;
  readonly location: S3Location;
  readonly note: string;
  readonly referencedAt: KeyPath;
  readonly channel: string;
  /** The folder, or for a file dataset (`kind: 'file'`) the file, inside the job. */
  readonly containerPath: string;
  /** Whether the config's value is rewritten to the container path (an S3 URI or a path was given). */
  readonly rewrite: boolean;
  /** A `save_to_disk` folder, or one file (e.g. `sft_jsonl`'s JSONL). */
  readonly kind: 'folder' | 'file';
  /** The trainer's loader that reads it. */
  readonly loader?: string;
}

/** The dataset entry an order file orders (for the curriculum pre-flight). */
export interface OrderUse {
  readonly loader: string;
  /** The loader's parameters (split, level, datasets, …). */
  readonly params: Readonly<Record<string, unknown>>;
  /** `count`: how many prompts a sequential mix takes from it. */
  readonly count?: number;
  /** The mix's `mode` (`weighted`, `sequential`). */
  readonly mode?: string;
}

export interface OrderFileInput {
  readonly location: S3Location;
  readonly referencedAt: KeyPath;
  /** The one dataset entry it orders; undefined when it orders several (an iterator over a mix). */
  readonly orders?: OrderUse;
  readonly channel: string;
  readonly containerPath: string;
  /** How a local path was mapped to S3, when it was. */
  readonly note?: string;
}

export interface InputPlan {
  /** The model being trained: channel `model`. */
  readonly model: ModelInput;
  /** Other models the config names (a teacher, a different reference), one channel each. */
  readonly otherModels: readonly ModelInput[];
  readonly datasets: readonly DatasetInput[];
  readonly orderFiles: readonly OrderFileInput[];
  /** Relative paths in the config (order and data files) that travel in the trainer's source. */
  readonly localFiles: readonly { readonly value: string; readonly referencedAt: KeyPath }[];
  /** Datasets no channel carries, and why (made in code, or only on the Hub). */
  readonly notCarried: readonly {
    readonly name: string;
    readonly referencedAt: KeyPath;
    readonly why: string;
  }[];
}

/** Every place the config names a model, with the role that names it. */
export function modelReferences(config: TrainingConfig): { path: KeyPath; value: string; role?: string }[] {
  const refs: { path: KeyPath; value: string; role?: string }[] = [
    { path: ['model', 'path'], value: config.model.path },
  ];
  const tokenizer = config.tokenizer?.pretrained_model_name_or_path;
  if (tokenizer) refs.push({ path: ['tokenizer', 'pretrained_model_name_or_path'], value: tokenizer });
  config.roles.forEach((role, i) => {
    if (role.kind === 'vllm') {
      refs.push({ path: ['roles', i, 'config', 'model'], value: role.config.model, role: role.name });
      if (typeof role.config.tokenizer === 'string' && role.config.tokenizer)
        refs.push({
          path: ['roles', i, 'config', 'tokenizer'],
          value: role.config.tokenizer,
          role: role.name,
        });
    }
    const hfAssets = role.kind === 'titan' ? role.config?.model?.hf_assets_path : undefined;
    if (hfAssets)
      refs.push({
        path: ['roles', i, 'config', 'model', 'hf_assets_path'],
        value: hfAssets,
        role: role.name,
      });
  });
  return refs;
}

function classifyModel(
  value: string,
  layout: S3Layout,
  baseDir: string,
): { location: S3Location; kind: ModelReferenceKind; note: string } {
  const s3 = parseS3Uri(value);
  if (s3) {
    const key = s3.key.endsWith('/') ? s3.key : `${s3.key}/`;
    return { location: { bucket: s3.bucket, key }, kind: 's3', note: 'used as written' };
  }
  const looksLocal = /^(\/|\.\.?\/|~)/.test(value) || fs.existsSync(path.resolve(baseDir, value));
  if (!looksLocal && HUB_ID.test(value)) {
    const name = value.split('/')[1];
    return {
      location: { bucket: layout.bucket, key: layout.modelPrefix(name) },
      kind: 'hub-id',
      note: `Hugging Face id mapped to the bucket's models/${name}/ (jobs cannot reach the Hub)`,
    };
  }
  const name = path.basename(value.replace(/\/+$/, ''));
  if (!value.includes('/')) {
    return {
      location: { bucket: layout.bucket, key: layout.modelPrefix(name) },
      kind: 'name',
      note: `model name mapped to the bucket's models/${name}/`,
    };
  }
  return {
    location: { bucket: layout.bucket, key: layout.modelPrefix(name) },
    kind: 'local-path',
    note: `local folder mapped by its name to the bucket's models/${name}/ (local paths do not exist in the job)`,
  };
}

/** `gsm8k` + split `train` → folder `gsm8k_train` (the datasets/ prefix holds save_to_disk copies named <dataset>_<split>). */
export function datasetFolder(name: string, split: string | undefined): string {
  const s = split ?? 'train';
  return name.endsWith(`_${s}`) ? name : `${name}_${s}`;
}

const CHANNEL_NAME = /^[A-Za-z0-9.\-_]{1,64}$/;

function channelNameProblem(file: YamlFile, at: KeyPath, name: string, what: string): Problem | undefined {
  if (CHANNEL_NAME.test(name) && !RESERVED_CHANNEL_NAMES.includes(name) && !name.startsWith('order-'))
    return undefined;
  return file.problem(
    at,
    `${what} "${name}" cannot be a SageMaker channel name`,
    `Name it with letters, digits, ".", "-", "_" (≤64), other than ${RESERVED_CHANNEL_NAMES.join(', ')}.`,
  );
}

export interface PlanInputsOptions {
  /** A job without network access: a Hub-only dataset cannot load. */
  readonly networkIsolation?: boolean;
  /**
   * The trainer's dataset loaders (its profile's): where each keeps its S3 copy. Undefined only for a
   * trainer without a profile: dataset names then map to S3 by name and split.
   */
  readonly loaders: Readonly<Record<string, DatasetLoader>> | undefined;
}

/** What planning gathers: the inputs found so far, and what is wrong with the config. */
interface InputPlanning {
  readonly file: YamlFile;
  readonly layout: S3Layout;
  readonly problems: Problem[];
  readonly warnings: Problem[];
  readonly datasets: DatasetInput[];
  readonly notCarried: InputPlan['notCarried'][number][];
  readonly localFiles: { value: string; referencedAt: KeyPath }[];
}

type ClassifiedModel = ReturnType<typeof modelReferences>[number] & ReturnType<typeof classifyModel>;

/** One channel for a group of references to the same model folder. */
function modelInput(group: readonly ClassifiedModel[], channel: string): ModelInput {
  const seenValues = new Set<string>();
  return {
    location: group[0].location,
    mappings: group
      .filter((c) => !seenValues.has(c.value) && seenValues.add(c.value))
      .map((c) => ({ value: c.value, kind: c.kind, note: c.note })),
    referencedAt: group.map((c) => c.path),
    channel,
    containerPath: channelPath(channel),
  };
}

/**
 * Models: one channel per distinct folder; the trained model's (the titan trainer's hf_assets_path, else
 * the first reference) is `model`, the others `model-<role>` (or `model-<folder>`), made unique.
 */
function planModels(
  config: TrainingConfig,
  layout: S3Layout,
  baseDir: string,
): { model: ModelInput; otherModels: ModelInput[] } {
  const classified: ClassifiedModel[] = modelReferences(config).map((r) => ({
    ...r,
    ...classifyModel(r.value, layout, baseDir),
  }));
  const groups = new Map<string, ClassifiedModel[]>();
  for (const c of classified) {
    const uri = s3Uri(c.location);
    groups.set(uri, [...(groups.get(uri) ?? []), c]);
  }
  const trainerRole = config.roles.find((r) => r.name === 'trainer' && r.kind === 'titan')?.name;
  const policyUri =
    [...groups.entries()].find(([, g]) =>
      g.some((c) => c.role === trainerRole && c.path.includes('hf_assets_path')),
    )?.[0] ?? s3Uri(classified[0].location);
  const model = modelInput(groups.get(policyUri)!, CHANNELS.model);
  const otherModels: ModelInput[] = [];
  const used = new Set<string>([CHANNELS.model]);
  for (const [uri, group] of groups) {
    if (uri === policyUri) continue;
    const label =
      group.find((c) => c.role)?.role ?? path.posix.basename(group[0].location.key.replace(/\/$/, ''));
    const base = `model-${label.replace(/[^A-Za-z0-9.\-_]/g, '-')}`.slice(0, 60);
    let channel = base;
    for (let n = 2; used.has(channel); n++) channel = `${base}-${n}`;
    used.add(channel);
    otherModels.push(modelInput(group, channel));
  }
  return { model, otherModels };
}

/** A dataset on a channel of its own (the first of a channel name wins; a bad name is a problem). */
function addDataset(plan: InputPlanning, d: DatasetInput): void {
  if (plan.datasets.some((x) => x.channel === d.channel)) return;
  const bad = channelNameProblem(
    plan.file,
    d.referencedAt,
    d.channel,
    d.kind === 'file' ? 'data file' : 'dataset folder',
  );
  if (bad) plan.problems.push(bad);
  else plan.datasets.push(d);
}

/** A Hub-only loader: refused for a network-isolated job, else a warning and no channel. */
function planHubDataset(
  plan: InputPlanning,
  use: LoaderUse,
  loader: DatasetLoader,
  networkIsolation?: boolean,
) {
  const { file } = plan;
  const message = `the "${use.name}" loader only downloads from the Hugging Face Hub (${loader.cite})`;
  if (networkIsolation !== false) {
    plan.problems.push(
      file.problem(
        use.nameAt,
        `${message}: a network-isolated job cannot load it`,
        'Use a dataset with an S3 copy, or submit with --no-network-isolation in a network that reaches the Hub.',
      ),
    );
  } else {
    plan.warnings.push(file.problem(use.nameAt, `${message}: the job must reach the Hub`));
    plan.notCarried.push({ name: use.name, referencedAt: use.nameAt, why: 'Hub only' });
  }
}

/** A file loader: an S3 URI or absolute path becomes a channel; a relative path travels in the source. */
function planFileDataset(plan: InputPlanning, use: LoaderUse, loader: DatasetLoader): void {
  const key = loader.fileKey!;
  const value = use.params[key];
  const at: KeyPath = [...use.at, key];
  if (typeof value !== 'string' || value === '') {
    plan.problems.push(
      plan.file.problem(
        use.at,
        `the "${use.name}" loader needs ${key}`,
        `Set ${formatKeyPath(at)}: s3://…/file.jsonl.`,
      ),
    );
    return;
  }
  const s3 = parseS3Uri(value);
  if (!s3 && !path.isAbsolute(value)) {
    plan.localFiles.push({ value, referencedAt: at });
    return;
  }
  const base = path.posix.basename(s3 ? s3.key : value);
  const location = s3 ?? { bucket: plan.layout.bucket, key: plan.layout.datasetFileKey(base) };
  addDataset(plan, {
    folder: base,
    location,
    note: s3 ? 'used as written' : `local file mapped by its name to the bucket's datasets/${base}`,
    referencedAt: at,
    channel: base,
    containerPath: `${channelPath(base)}/${base}`,
    rewrite: true,
    kind: 'file',
    loader: use.name,
  });
}

/** A loader with a save_to_disk copy in S3, or (no profile knows the loader) a name or path. */
function planFolderDataset(plan: InputPlanning, use: LoaderUse, loader: DatasetLoader | undefined): void {
  const { layout } = plan;
  const split = typeof use.params.split === 'string' ? use.params.split : undefined;
  const s3 = parseS3Uri(use.name);
  let folder: string;
  let location: S3Location;
  let note: string;
  if (s3) {
    const key = s3.key.endsWith('/') ? s3.key : `${s3.key}/`;
    folder = path.posix.basename(key.replace(/\/$/, ''));
    location = { bucket: s3.bucket, key };
    note = 'used as written';
  } else if (use.name.includes('/')) {
    folder = path.basename(use.name.replace(/\/+$/, ''));
    location = { bucket: layout.bucket, key: layout.datasetPrefix(folder) };
    note = `path mapped by its name to the bucket's datasets/${folder}/`;
  } else {
    folder = loader?.folder
      ? loader.folder.replace('{split}', split ?? 'train')
      : datasetFolder(use.name, split);
    location = { bucket: layout.bucket, key: layout.datasetPrefix(folder) };
    note = `${use.name}${loader ? '' : ` (split ${split ?? 'train'})`} → datasets/${folder}/`;
  }
  addDataset(plan, {
    folder,
    location,
    note,
    referencedAt: use.nameAt,
    channel: folder,
    containerPath: channelPath(folder),
    rewrite: s3 !== undefined || use.name.includes('/'),
    kind: 'folder',
    loader: loader ? use.name : undefined,
  });
}

/** Datasets: each loader's S3 copy (or file) on a channel named after it, under RLVR_DATASETS_DIR. */
function planDatasets(plan: InputPlanning, config: TrainingConfig, options: PlanInputsOptions): void {
  for (const use of loaderUses(config)) {
    const loader = options.loaders?.[use.name];
    if (loader?.source === 'none') {
      plan.notCarried.push({ name: use.name, referencedAt: use.nameAt, why: 'made by the loader itself' });
    } else if (loader?.source === 'hub') {
      planHubDataset(plan, use, loader, options.networkIsolation);
    } else if (loader?.source === 'file') {
      planFileDataset(plan, use, loader);
    } else {
      planFolderDataset(plan, use, loader);
    }
  }
}

/**
 * Order files: S3 URIs and local paths outside the source become channels; relative paths travel
 * with the trainer's source.
 */
function planOrderFiles(plan: InputPlanning, config: TrainingConfig): OrderFileInput[] {
  const { file, layout } = plan;
  const orderRefs: { path: KeyPath; value: string; orders?: OrderUse }[] = [];
  const orderUse = (use: ReturnType<typeof loaderUses>[number]): OrderUse => {
    const section = config[use.at[0] as 'data' | 'sft_data'] as { mode?: unknown } | undefined;
    return {
      loader: use.name,
      params: use.params,
      ...(typeof use.params.count === 'number' ? { count: use.params.count } : {}),
      ...(typeof section?.mode === 'string' ? { mode: section.mode } : {}),
    };
  };
  for (const use of loaderUses(config)) {
    if (typeof use.params.order === 'string')
      orderRefs.push({ path: [...use.at, 'order'], value: use.params.order, orders: orderUse(use) });
  }
  for (const [iterator, section] of [
    ['data_iter', 'data'],
    ['sft_data_iter', 'sft_data'],
  ] as const) {
    const order = config[iterator]?.order;
    const uses = loaderUses(config, [section]);
    if (typeof order === 'string')
      orderRefs.push({
        path: [iterator, 'order'],
        value: order,
        ...(uses.length === 1 ? { orders: orderUse(uses[0]) } : {}),
      });
  }
  const orderFiles: OrderFileInput[] = [];
  for (const ref of orderRefs) {
    const s3 = parseS3Uri(ref.value);
    if (s3 && (s3.key === '' || s3.key.endsWith('/'))) {
      plan.problems.push(
        file.problem(ref.path, `"${ref.value}" is a prefix, not an order file`, 'Name the file itself.'),
      );
      continue;
    }
    if (!s3 && !path.isAbsolute(ref.value)) {
      plan.localFiles.push({ value: ref.value, referencedAt: ref.path });
      continue;
    }
    const location = s3 ?? { bucket: layout.bucket, key: layout.curriculumKey(path.basename(ref.value)) };
    const channel = `order-${orderFiles.length + 1}`;
    orderFiles.push({
      location,
      referencedAt: ref.path,
      ...(ref.orders ? { orders: ref.orders } : {}),
      channel,
      containerPath: `${channelPath(channel)}/${path.posix.basename(location.key)}`,
      note: s3
        ? undefined
        : `local file mapped by its name to the bucket's curricula/${path.basename(ref.value)} (upload: aws s3 cp ${ref.value} ${s3Uri(location)})`,
    });
  }
  return orderFiles;
}

export function planInputs(
  config: TrainingConfig,
  file: YamlFile,
  layout: S3Layout,
  baseDir: string,
  options: PlanInputsOptions,
): { inputs?: InputPlan; problems: Problem[]; warnings: Problem[] } {
  const plan: InputPlanning = {
    file,
    layout,
    problems: [],
    warnings: [],
    datasets: [],
    notCarried: [],
    localFiles: [],
  };
  const { model, otherModels } = planModels(config, layout, baseDir);
  planDatasets(plan, config, options);
  const orderFiles = planOrderFiles(plan, config);
  const { problems, warnings, datasets, localFiles, notCarried } = plan;
  if (problems.length > 0) return { problems, warnings };
  return {
    inputs: { model, otherModels, datasets, orderFiles, localFiles, notCarried },
    problems,
    warnings,
  };
}

/**
 * The config the trainer receives: model, dataset and order references rewritten to the channel paths
 * inside the job, and the launcher's own section removed (it is not the trainer's).
 */
export function resolveConfigForJob(config: TrainingConfig, inputs: InputPlan): Record<string, unknown> {
  const resolved = structuredClone(config) as Record<string, unknown>;
  delete resolved.launcher;
  const set = (keyPath: KeyPath, value: string) => {
    let node = resolved as Record<string | number, unknown>;
    for (const seg of keyPath.slice(0, -1)) node = node[seg] as Record<string | number, unknown>;
    node[keyPath[keyPath.length - 1]] = value;
  };
  for (const m of [inputs.model, ...inputs.otherModels])
    for (const p of m.referencedAt) set(p, m.containerPath);
  for (const d of inputs.datasets) if (d.rewrite) set(d.referencedAt, d.containerPath);
  for (const o of inputs.orderFiles) set(o.referencedAt, o.containerPath);
  return resolved;
}
