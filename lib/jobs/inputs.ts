import * as fs from 'node:fs';
import * as path from 'node:path';
import type { KeyPath, TrainingConfig, YamlFile } from '../config';
import { formatKeyPath } from '../config';
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

/*
 * Everything a job reads from S3, derived from the config (pure, except for asking whether a local
 * path exists). Jobs cannot reach the Hugging Face Hub, so every model and dataset reference is mapped
 * to S3 — explicitly, with the mapping stated in the plan, never a silent guess (BRIEF §1).
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
  readonly containerPath: string;
  /** Whether the config's value is rewritten to the container path (an S3 URI or a path was given). */
  readonly rewrite: boolean;
}

export interface OrderFileInput {
  readonly location: S3Location;
  readonly referencedAt: KeyPath;
  readonly channel: string;
  readonly containerPath: string;
}

export interface InputPlan {
  readonly model: ModelInput;
  readonly datasets: readonly DatasetInput[];
  readonly orderFiles: readonly OrderFileInput[];
  /** Relative paths in the config that must travel in the trainer's source. */
  readonly localOrderFiles: readonly { readonly value: string; readonly referencedAt: KeyPath }[];
}

/** Every place the config names the model: one model per job. */
export function modelReferences(config: TrainingConfig): { path: KeyPath; value: string }[] {
  const refs: { path: KeyPath; value: string }[] = [{ path: ['model', 'path'], value: config.model.path }];
  if (config.tokenizer) {
    refs.push({
      path: ['tokenizer', 'pretrained_model_name_or_path'],
      value: config.tokenizer.pretrained_model_name_or_path,
    });
  }
  config.roles.forEach((role, i) => {
    if (role.kind === 'vllm') refs.push({ path: ['roles', i, 'config', 'model'], value: role.config.model });
    if (role.kind === 'titan' && role.config.model?.hf_assets_path) {
      refs.push({
        path: ['roles', i, 'config', 'model', 'hf_assets_path'],
        value: role.config.model.hf_assets_path,
      });
    }
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

/** `gsm8k` + split `train` → folder `gsm8k_train` (the save_to_disk layout of BRIEF §3). */
export function datasetFolder(name: string, split: string | undefined): string {
  const s = split ?? 'train';
  return name.endsWith(`_${s}`) ? name : `${name}_${s}`;
}

const CHANNEL_NAME = /^[A-Za-z0-9.\-_]{1,64}$/;

export function planInputs(
  config: TrainingConfig,
  file: YamlFile,
  layout: S3Layout,
  baseDir: string,
): { inputs?: InputPlan; problems: Problem[] } {
  const problems: Problem[] = [];

  // Model: all references must land on one folder.
  const refs = modelReferences(config);
  const classified = refs.map((r) => ({ ...r, ...classifyModel(r.value, layout, baseDir) }));
  const targets = new Map<string, typeof classified>();
  for (const c of classified) {
    const uri = s3Uri(c.location);
    targets.set(uri, [...(targets.get(uri) ?? []), c]);
  }
  if (targets.size > 1) {
    const [first, ...others] = [...targets.entries()];
    for (const [uri, group] of others) {
      problems.push(
        file.problem(
          group[0].path,
          `names a different model (${group[0].value} → ${uri}) than ${formatKeyPath(first[1][0].path)} (${first[1][0].value} → ${first[0]})`,
          'A job trains one model: make every model reference (model.path, tokenizer, vllm roles, hf_assets_path) name the same one.',
        ),
      );
    }
  }
  const seenValues = new Set<string>();
  const model: ModelInput = {
    location: classified[0].location,
    mappings: classified
      .filter((c) => !seenValues.has(c.value) && seenValues.add(c.value))
      .map((c) => ({ value: c.value, kind: c.kind, note: c.note })),
    referencedAt: classified.map((c) => c.path),
    channel: CHANNELS.model,
    containerPath: channelPath(CHANNELS.model),
  };

  // Datasets: one channel per folder, named as the folder, all under RLVR_DATASETS_DIR.
  const datasetRefs: { path: KeyPath; name: string; split?: string }[] = config.data.datasets
    ? config.data.datasets.map((d, i) => ({
        path: ['data', 'datasets', i, 'name'],
        name: d.name,
        split: d.split,
      }))
    : [{ path: ['data', 'dataset'], name: config.data.dataset, split: config.data.split }];
  const datasets: DatasetInput[] = [];
  for (const ref of datasetRefs) {
    const s3 = parseS3Uri(ref.name);
    let folder: string;
    let location: S3Location;
    let note: string;
    if (s3) {
      const key = s3.key.endsWith('/') ? s3.key : `${s3.key}/`;
      folder = path.posix.basename(key.replace(/\/$/, ''));
      location = { bucket: s3.bucket, key };
      note = 'used as written';
    } else if (ref.name.includes('/')) {
      folder = path.basename(ref.name.replace(/\/+$/, ''));
      location = { bucket: layout.bucket, key: layout.datasetPrefix(folder) };
      note = `path mapped by its name to the bucket's datasets/${folder}/`;
    } else {
      folder = datasetFolder(ref.name, ref.split);
      location = { bucket: layout.bucket, key: layout.datasetPrefix(folder) };
      note = `${ref.name} (split ${ref.split ?? 'train'}) → datasets/${folder}/`;
    }
    if (datasets.some((d) => d.folder === folder)) continue;
    if (
      !CHANNEL_NAME.test(folder) ||
      RESERVED_CHANNEL_NAMES.includes(folder) ||
      folder.startsWith('order-')
    ) {
      problems.push(
        file.problem(
          ref.path,
          `dataset folder "${folder}" cannot be a SageMaker channel name`,
          `Name dataset folders with letters, digits, ".", "-", "_" (≤64), other than ${RESERVED_CHANNEL_NAMES.join(', ')}.`,
        ),
      );
      continue;
    }
    datasets.push({
      folder,
      location,
      note,
      referencedAt: ref.path,
      channel: folder,
      containerPath: channelPath(folder),
      rewrite: s3 !== undefined || ref.name.includes('/'),
    });
  }

  // Order files: S3 URIs become channels; relative paths must travel with the trainer's source.
  const orderRefs: { path: KeyPath; value: string }[] = [];
  if (config.data.order) orderRefs.push({ path: ['data', 'order'], value: config.data.order });
  config.data.datasets?.forEach((d, i) => {
    if (d.order) orderRefs.push({ path: ['data', 'datasets', i, 'order'], value: d.order });
  });
  const orderFiles: OrderFileInput[] = [];
  const localOrderFiles: { value: string; referencedAt: KeyPath }[] = [];
  for (const ref of orderRefs) {
    const s3 = parseS3Uri(ref.value);
    if (s3) {
      if (s3.key === '' || s3.key.endsWith('/')) {
        problems.push(
          file.problem(ref.path, `"${ref.value}" is a prefix, not an order file`, 'Name the file itself.'),
        );
        continue;
      }
      const channel = `order-${orderFiles.length + 1}`;
      orderFiles.push({
        location: s3,
        referencedAt: ref.path,
        channel,
        containerPath: `${channelPath(channel)}/${path.posix.basename(s3.key)}`,
      });
    } else if (path.isAbsolute(ref.value)) {
      problems.push(
        file.problem(
          ref.path,
          `"${ref.value}" is an absolute local path: it does not exist inside the job`,
          `Upload it (aws s3 cp ${ref.value} ${layout.uri(layout.curriculumKey(path.basename(ref.value)))}) and use the S3 URI, or keep it in the trainer's source and give a relative path.`,
        ),
      );
    } else {
      localOrderFiles.push({ value: ref.value, referencedAt: ref.path });
    }
  }

  if (problems.length > 0) return { problems };
  return { inputs: { model, datasets, orderFiles, localOrderFiles }, problems };
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
  for (const p of inputs.model.referencedAt) set(p, inputs.model.containerPath);
  for (const d of inputs.datasets) if (d.rewrite) set(d.referencedAt, d.containerPath);
  for (const o of inputs.orderFiles) set(o.referencedAt, o.containerPath);
  return resolved;
}
