import * as path from 'node:path';
import type { YamlFile } from '../config';
import type { IS3 } from '../aws';
import type { PreflightCheck } from './preflight-check';
import type { Problem } from '../errors';
import { folderVerdict, safetensorsHeadLength, safetensorsSize, weightsNamedByIndex } from '../checkpoints';
import { DATASET_MARKERS, MODEL_INDEX_FILE } from '../layout';
import {
  checkOrderIds,
  type CurriculumFindings,
  type CurriculumOptions,
  type MissingOrderIds,
} from './curriculum-preflight';
import { uncheckedWarning } from '../curriculum';
import { s3Uri, type DatasetInput, type InputPlan, type ModelInput, type OrderFileInput } from './inputs';

/*
 * Before anything is created, every S3 object the job will read must exist: a job that finds its model
 * missing dies after start-up with the GPUs billed, and jobs in the VPC cannot fetch anything else.
 */

export type { PreflightCheck } from './preflight-check';

export interface PreflightResult {
  readonly checks: readonly PreflightCheck[];
  readonly problems: readonly Problem[];
  readonly warnings: readonly Problem[];
  /** Missing order ids the user allowed (--allow-missing-order-ids), to record with the job. */
  readonly acknowledged: readonly MissingOrderIds[];
}

/** What the checks find, gathered in the order they run. */
interface PreflightFindings {
  readonly checks: PreflightCheck[];
  readonly problems: Problem[];
  readonly warnings: Problem[];
}

/**
 * The size each top-level safetensors file's header gives (two small range reads each; NaN when the
 * header is not whole). At most 64 files: beyond that the sizes are left unchecked.
 */
async function safetensorsSizesInS3(
  s3: IS3,
  bucket: string,
  prefix: string,
  sizes: ReadonlyMap<string, number>,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const files = [...sizes.keys()].filter((f) => f.endsWith('.safetensors') && !f.includes('/'));
  if (files.length > 64) return out;
  for (const f of files) {
    const size = sizes.get(f)!;
    if (size < 8) {
      out.set(f, Number.NaN);
      continue;
    }
    const length = safetensorsHeadLength(await s3.getObjectRange(bucket, `${prefix}${f}`, 0, 7));
    if (length === undefined || length > size) {
      out.set(f, Number.NaN);
      continue;
    }
    out.set(
      f,
      safetensorsSize(await s3.getObjectRange(bucket, `${prefix}${f}`, 0, length - 1)) ?? Number.NaN,
    );
  }
  return out;
}

/**
 * The files each kind of slow tokenizer reads (transformers' `vocab_files_names`): byte-level BPE (Qwen2,
 * GPT-2, …), SentencePiece (Llama, T5, …), WordPiece (BERT). A fast tokenizer needs only tokenizer.json.
 */
const SLOW_TOKENIZER_FILES: readonly (readonly string[])[] = [
  ['vocab.json', 'merges.txt'],
  ['tokenizer.model'],
  ['spiece.model'],
  ['vocab.txt'],
];

/**
 * `tokenizer.use_fast: false` on the folder the tokenizer is read from: transformers builds the slow
 * tokenizer from its own vocabulary files, never from tokenizer.json, so a folder without them fails
 * the job when the tokenizer loads (their trainers read it at start).
 */
function slowTokenizerProblem(
  input: ModelInput,
  names: ReadonlySet<string>,
  file: YamlFile,
  modelUri: string,
): Problem | undefined {
  const tokenizerAt = input.referencedAt.find(
    (p) => p.join('.') === 'tokenizer.pretrained_model_name_or_path',
  );
  if (!tokenizerAt) return undefined;
  const tokenizer = (file.toJS() as { tokenizer?: { use_fast?: unknown } } | undefined)?.tokenizer;
  if (tokenizer?.use_fast !== false) return undefined;
  if (SLOW_TOKENIZER_FILES.some((set) => set.every((f) => names.has(f)))) return undefined;
  return file.problem(
    ['tokenizer', 'use_fast'],
    `the slow tokenizer reads its vocabulary files, and ${modelUri} has none (${SLOW_TOKENIZER_FILES.map((s) => s.join(' + ')).join(', or ')}): the job would fail when the tokenizer loads`,
    `Upload the model folder with its vocab.json and merges.txt (rlvr upload model <folder>), or set tokenizer.use_fast: true.`,
  );
}

/** A model folder: loadable by the one rule (lib/checkpoints), with a tokenizer. */
async function checkModel(s3: IS3, input: ModelInput, file: YamlFile, out: PreflightFindings): Promise<void> {
  const { checks, problems, warnings } = out;
  const at = input.referencedAt[0];
  const model = input.location;
  const objects = await s3.listObjects(model.bucket, model.key, 5000);
  const names = new Set(objects.map((o) => o.key.slice(model.key.length)));
  const modelUri = s3Uri(model);
  const what = input.channel === 'model' ? 'model' : `model (${input.channel})`;
  const mapping = input.mappings.find((m) => m.kind !== 's3');
  if (objects.length === 0) {
    const source = mapping?.value ?? modelUri;
    const local = mapping?.kind === 'hub-id' ? path.basename(source) : source;
    const download =
      mapping?.kind === 'hub-id' ? `huggingface-cli download ${source} --local-dir ${local} && ` : '';
    problems.push(
      file.problem(
        at,
        `no model at ${modelUri}`,
        `Jobs cannot reach the Hugging Face Hub or your disks: upload the model first:\n      ${download}aws s3 sync ${local} ${modelUri}`,
      ),
    );
    checks.push({ what, target: modelUri, ok: false, detail: 'no objects' });
    return;
  }
  // The one rule (lib/checkpoints), on the listing, the index and each safetensors header.
  const sizes = new Map(objects.map((o) => [o.key.slice(model.key.length), o.size]));
  const indexed = names.has(MODEL_INDEX_FILE)
    ? weightsNamedByIndex(
        await s3.getObjectText(model.bucket, `${model.key}${MODEL_INDEX_FILE}`).catch(() => undefined),
      )
    : undefined;
  const expectedSizes = await safetensorsSizesInS3(s3, model.bucket, model.key, sizes);
  const verdict = folderVerdict({ sizes, indexed, expectedSizes });
  if (!verdict.loadable) {
    const fix = verdict.fix
      ? ` Rename it: aws s3 mv ${modelUri}${verdict.fix.rename.from} ${modelUri}${verdict.fix.rename.to}`
      : ' Upload the whole model folder again (rlvr upload model <folder>).';
    problems.push(
      file.problem(
        at,
        `${modelUri} is not a loadable model folder: ${verdict.why}: vLLM cannot load it`,
        fix.trim(),
      ),
    );
  }
  if (!names.has('tokenizer.json') && !names.has('tokenizer_config.json')) {
    warnings.push(
      file.problem(at, `${modelUri} has no tokenizer files; the tokenizer must come from elsewhere`),
    );
  }
  const slow = slowTokenizerProblem(input, names, file, modelUri);
  if (slow) problems.push(slow);
  const bytes = objects.reduce((n, o) => n + o.size, 0);
  checks.push({
    what,
    target: modelUri,
    ok: verdict.loadable,
    detail: `${objects.length} files, ${(bytes / 1e9).toFixed(2)} GB`,
  });
}

/** A data file (a `file` loader's): present and not empty. */
async function checkDataFile(
  s3: IS3,
  d: DatasetInput,
  file: YamlFile,
  out: PreflightFindings,
): Promise<void> {
  const uri = s3Uri(d.location);
  const head = await s3.headObject(d.location.bucket, d.location.key);
  if (!head || head.size === 0) {
    out.problems.push(
      file.problem(
        d.referencedAt,
        head ? `${uri} is empty` : `no data file at ${uri}`,
        `Upload it first: aws s3 cp <local ${d.folder}> ${uri}`,
      ),
    );
  }
  out.checks.push({
    what: `data file ${d.folder}`,
    target: uri,
    ok: Boolean(head && head.size > 0),
    detail: head ? `${head.size} bytes` : 'missing',
  });
}

/**
 * A dataset folder: saved with save_to_disk, and with the marker file at its top when the trainer's
 * loader reads the channel as a local copy.
 */
async function checkDatasetFolder(
  s3: IS3,
  d: DatasetInput,
  file: YamlFile,
  cacheMarker: { readonly marker: string; readonly path: string } | undefined,
  out: PreflightFindings,
): Promise<void> {
  const uri = s3Uri(d.location);
  const what = `dataset ${d.folder}`;
  const found = await s3.listObjects(d.location.bucket, d.location.key, 1000);
  const files = new Set(found.map((o) => path.posix.basename(o.key)));
  if (found.length === 0) {
    out.problems.push(
      file.problem(
        d.referencedAt,
        `no dataset at ${uri}`,
        `Upload the dataset saved with save_to_disk first: aws s3 sync <local ${d.folder} folder> ${uri}`,
      ),
    );
    out.checks.push({ what, target: uri, ok: false, detail: 'no objects' });
  } else if (
    cacheMarker &&
    // A HEAD: the listing's first 1000 keys may not reach it (data-*.arrow sort first).
    !(await s3.headObject(d.location.bucket, `${d.location.key}${cacheMarker.marker}`))
  ) {
    const { marker, path: cachePath } = cacheMarker;
    out.problems.push(
      file.problem(
        d.referencedAt,
        `${uri} has no ${marker} at its top: the trainer's loader reads ${cachePath} only when it does, and would try the network instead`,
        `Upload the folder Dataset.save_to_disk wrote for this split (not a DatasetDict): aws s3 sync <local ${d.folder} folder> ${uri}`,
      ),
    );
    out.checks.push({ what, target: uri, ok: false, detail: `no ${marker} at the top` });
  } else if (!DATASET_MARKERS.some((m) => files.has(m))) {
    out.problems.push(
      file.problem(
        d.referencedAt,
        `${uri} is not a dataset saved with save_to_disk (no ${DATASET_MARKERS.join(' / ')})`,
        'Save it with datasets.Dataset.save_to_disk and upload the folder.',
      ),
    );
    out.checks.push({ what, target: uri, ok: false, detail: 'not a save_to_disk folder' });
  } else {
    out.checks.push({ what, target: uri, ok: true, detail: `${found.length} files` });
  }
}

/** An order file: present and not empty. */
async function checkOrderFile(
  s3: IS3,
  o: OrderFileInput,
  file: YamlFile,
  out: PreflightFindings,
): Promise<boolean> {
  const uri = s3Uri(o.location);
  const head = await s3.headObject(o.location.bucket, o.location.key);
  if (!head) {
    out.problems.push(
      file.problem(
        o.referencedAt,
        `no order file at ${uri}`,
        `Upload it first: aws s3 cp <local file> ${uri}`,
      ),
    );
  } else if (head.size === 0) {
    out.problems.push(
      file.problem(o.referencedAt, `${uri} is empty`, 'An order file lists one prompt id per line.'),
    );
  }
  out.checks.push({
    what: 'order file',
    target: uri,
    ok: Boolean(head && head.size > 0),
    detail: head ? `${head.size} bytes` : 'missing',
  });
  return Boolean(head && head.size > 0);
}

export async function runPreflight(
  s3: IS3,
  inputs: InputPlan,
  file: YamlFile,
  /** Channels the trainer's loader reads as a local copy, and the file it must find at the top. */
  cacheMarkers: ReadonlyMap<string, { readonly marker: string; readonly path: string }> = new Map(),
  curriculum: CurriculumOptions = {},
): Promise<PreflightResult> {
  const out: CurriculumFindings = { checks: [], problems: [], warnings: [], acknowledged: [] };
  for (const model of [inputs.model, ...inputs.otherModels]) await checkModel(s3, model, file, out);
  for (const d of inputs.datasets.filter((x) => x.kind === 'file')) await checkDataFile(s3, d, file, out);
  for (const d of inputs.datasets.filter((x) => x.kind === 'folder'))
    await checkDatasetFolder(s3, d, file, cacheMarkers.get(d.channel), out);
  await checkCurricula(s3, inputs, file, curriculum, out);
  return out;
}

/**
 * The order files: each there and not empty, and its ids in the dataset copy its loader reads (the
 * pre-flight's last step, and what `rlvr lint --curricula` runs alone).
 */
export async function checkCurricula(
  s3: IS3,
  inputs: Pick<InputPlan, 'orderFiles' | 'datasets' | 'localFiles'>,
  file: YamlFile,
  curriculum: CurriculumOptions,
  out: CurriculumFindings = { checks: [], problems: [], warnings: [], acknowledged: [] },
): Promise<CurriculumFindings> {
  for (const o of inputs.orderFiles) {
    if (await checkOrderFile(s3, o, file, out))
      await checkOrderIds(s3, o, inputs.datasets, file, curriculum, out);
  }
  // An order file that travels with the source (a relative path) is not read here: said, not passed.
  for (const f of inputs.localFiles.filter((l) => l.referencedAt[l.referencedAt.length - 1] === 'order')) {
    const m = uncheckedWarning(
      f.value,
      'its',
      'a relative order file travels with the source and is read only in the job',
    );
    out.warnings.push(file.problem(f.referencedAt, m.message, m.hint));
  }
  return out;
}
