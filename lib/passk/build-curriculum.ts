/**
 * `rlvr curriculum build` and `rlvr curriculum sft`: from campaigns' merged results to an order file in
 * the bucket's curricula/ (ids in the dataset copy's row order for ties, every id one the copy has, so the
 * curriculum pre-flight accepts it by construction) and the config lines that use it; and the SFT set
 * their build_sft_from_pass_at_k.py makes from the same results.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeAwsError, type JobContext } from '../aws';
import { readDatasetIds, resolveIdRule } from '../curriculum';
import { outPathError, RlvrError, UserError } from '../errors';
import { awsStep } from '../eval';
import { S3Layout } from '../layout';
import {
  linkedOutside,
  PASSK_DIR,
  PASSK_PLAN_FILE,
  readPasskPlan,
  shardGaps,
  type MergedPasskResults,
} from '../passk-records';
import {
  buildOrder,
  curriculumConfigLines,
  datasetOfId,
  type CurriculumOrder,
  type MissingPlacement,
  type OrderKind,
} from './curriculum';
import type { OrderKey } from './order-key';
import { orderSidecar, recordsOrder, sidecarOf, sidecarText, type OrderSidecar } from './order-sidecar';
import { passkProfile } from './plan';
import { passkResultsOf } from './results';
import { PLACEHOLDERS } from '../submission';
import {
  buildMixedSftSet,
  buildSftSet,
  readSftShards,
  SFT_DEFAULTS,
  type SftSet,
  type SftShardsRead,
} from './sft';
import { existingRegularFile, prepareOutFile, replaceRegularFile } from '../util';

export interface CurriculumBuildInput {
  readonly from: readonly string[];
  /** The order file's name under curricula/ (`pass-at-64/gsm8k_curriculum`; `.txt` added when absent). */
  readonly name: string;
  readonly order: OrderKind;
  /** What the prompts are sorted by (default: the pooled pass rate). */
  readonly key?: OrderKey;
  readonly min?: number;
  readonly max?: number;
  /** Where prompts without a result go (see BuildOrderOptions.missing). */
  readonly missing?: MissingPlacement;
  readonly dryRun: boolean;
  /** Overwrite an order file of that name whose content differs. */
  readonly replace: boolean;
  /** Write the file here instead of uploading it. */
  readonly out?: string;
  readonly cwd: string;
  readonly openContext: () => Promise<JobContext>;
}

export interface CurriculumBuilt {
  readonly order: CurriculumOrder;
  readonly results: readonly MergedPasskResults[];
  /** Where it is (or would be) in S3. */
  readonly uri?: string;
  readonly upload: 'created' | 'unchanged' | 'replaced' | 'dry-run' | 'local' | 'no AWS';
  readonly out?: string;
  /** For a file written with --out: the command that puts it where the config lines say. */
  readonly uploadCommand?: string;
  /** The build record beside the order file (`<order file>.json`): where it is (or would be) and what became of it. */
  readonly sidecar: {
    readonly at: string;
    readonly written: 'created' | 'replaced' | 'kept' | 'not written';
    readonly record: OrderSidecar;
  };
  readonly configLines: string[];
  /** Where the dataset's ids came from, or why they could not be read. */
  readonly datasetIds: { readonly from: string; readonly prompts: number } | { readonly why: string };
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

export function orderFileName(name: string): string {
  if (!NAME.test(name) || name.split('/').some((p) => p === '..' || p === '.'))
    throw new UserError(
      `--name ${name}: letters, digits, . _ - and / between parts (e.g. pass-at-64/gsm8k_curriculum)`,
      'BadFlag',
    );
  return name.endsWith('.txt') ? name : `${name}.txt`;
}

/** The copy's ids in row order, through the curriculum pre-flight's own reader (cached by ETags). */
async function datasetIdsOf(
  context: JobContext | undefined,
  results: readonly MergedPasskResults[],
): Promise<{ ids?: readonly string[]; note: CurriculumBuilt['datasetIds'] }> {
  const campaign = results.find((r) => r.campaign)?.campaign;
  if (!campaign)
    return { note: { why: 'the results have no plan naming their dataset copy (a bare folder of shards)' } };
  if (!context?.layout) return { note: { why: 'no AWS access to read the dataset copy' } };
  const entry = passkProfile().script.datasets[campaign.dataset];
  const loader = entry && 'loader' in entry ? entry.loader : campaign.dataset;
  const rule = resolveIdRule(loader, {
    split: campaign.split,
    ...(campaign.level ? { level: campaign.level.split(',').map(Number) } : {}),
  });
  if (!rule.checkable) return { note: { why: rule.reason } };
  const copy = { bucket: context.layout.bucket, prefix: context.layout.datasetPrefix(rule.folder) };
  const read = await readDatasetIds(context.aws.s3, copy, rule);
  const from = context.layout.uri(copy.prefix);
  if (!read.ok) return { note: { why: `${from}: ${read.reason}` } };
  return { ids: read.ids, note: { from, prompts: read.ids.length } };
}

async function openOrNot(openContext: () => Promise<JobContext>): Promise<JobContext | undefined> {
  try {
    return await openContext();
  } catch (err) {
    if (err instanceof UserError) return undefined;
    throw err;
  }
}

/** Where a dry-run without AWS says the order file would go: the placeholder bucket's curricula/. */
function placeholderUri(file: string): string {
  const layout = new S3Layout(PLACEHOLDERS.bucket);
  return layout.uri(layout.curriculumKey(file));
}

/**
 * `--out`, checked before any work (its folder made; absent or a regular file, never a link, FIFO,
 * device or folder), and the write that replaces it atomically without following a link.
 */
function outFile(
  out: string,
  cwd: string,
): { readonly path: string; readonly write: (text: string) => void } {
  let abs: string;
  try {
    abs = prepareOutFile(path.resolve(cwd, out));
  } catch (e) {
    throw outPathError('--out', out, e);
  }
  return {
    path: abs,
    write: (text) => {
      try {
        replaceRegularFile(abs, text);
      } catch (e) {
        throw outPathError('--out', out, e);
      }
    },
  };
}

export async function buildCurriculum(input: CurriculumBuildInput): Promise<CurriculumBuilt> {
  const file = orderFileName(input.name);
  const target = input.out && !input.dryRun ? outFile(input.out, input.cwd) : undefined;
  // The build record goes beside the file: its path is checked as --out's is, before any work.
  const recordTarget = input.out && !input.dryRun ? outFile(sidecarOf(input.out), input.cwd) : undefined;
  // A dry run writes nothing, but refuses the --out the real run would refuse (a folder, link, FIFO).
  if (input.out && input.dryRun)
    for (const f of [input.out, sidecarOf(input.out)])
      try {
        existingRegularFile(path.resolve(input.cwd, f));
      } catch (e) {
        throw outPathError('--out', f, e);
      }
  // One context for the jobs' results, the dataset copy and the upload (settings are read once).
  const context = await openOrNot(input.openContext);
  try {
    const results = await passkResultsOf(input.from, {
      cwd: input.cwd,
      openContext: input.openContext,
      ...(context ? { context } : {}),
    });
    // Without the copy's ids the order is still right (ties by id); the submit's pre-flight checks it.
    const ids = await datasetIdsOf(context, results).catch((err: unknown) => ({
      ids: undefined,
      note: { why: err instanceof RlvrError ? err.message : describeAwsError(err) },
    }));
    const order = buildOrder(results, {
      order: input.order,
      ...(input.key ? { key: input.key } : {}),
      ...(input.min !== undefined ? { min: input.min } : {}),
      ...(input.max !== undefined ? { max: input.max } : {}),
      ...(ids.ids ? { datasetIds: ids.ids } : {}),
      ...(input.missing ? { missing: input.missing } : {}),
    });
    const record = orderSidecar(file, order, results, { orderKind: input.order, datasetIds: ids.note });
    const recordText = sidecarText(record);
    const layout = context?.layout;
    const key = layout?.curriculumKey(file);
    const uri = layout && key ? layout.uri(key) : undefined;
    let upload: CurriculumBuilt['upload'] = input.dryRun ? 'dry-run' : input.out ? 'local' : 'no AWS';
    let recordWritten: CurriculumBuilt['sidecar']['written'] = 'not written';
    if (!input.dryRun && !input.out && context && layout && key) {
      upload = await awsStep(`upload ${uri}`, async () => {
        if (await context.aws.s3.putObjectIfAbsent(layout.bucket, key, order.text, 'text/plain'))
          return 'created';
        const there = await context.aws.s3.getObjectText(layout.bucket, key);
        if (there === order.text) return 'unchanged';
        if (!input.replace)
          throw new UserError(
            `${uri} exists with other content: a job that names it would train on another order. Pick another --name, or --replace it.`,
            'OrderFileExists',
          );
        await context.aws.s3.putObject(layout.bucket, key, order.text, 'text/plain');
        return 'replaced';
      });
      // After the order file: a refused upload leaves no record, and a record always has its file. An
      // unchanged file keeps the record of the build that made it, unless that record is of other bytes.
      const recordKey = sidecarOf(key);
      recordWritten = await awsStep(`upload ${layout.uri(recordKey)}`, async () => {
        if (await context.aws.s3.putObjectIfAbsent(layout.bucket, recordKey, recordText, 'application/json'))
          return 'created';
        if (
          upload === 'unchanged' &&
          recordsOrder(await context.aws.s3.getObjectText(layout.bucket, recordKey), record.sha256)
        )
          return 'kept';
        await context.aws.s3.putObject(layout.bucket, recordKey, recordText, 'application/json');
        return 'replaced';
      });
    }
    if (!input.dryRun && !uri && !input.out)
      throw new UserError(
        'No AWS access to upload the order file: configure AWS, or write it with --out <file>.',
        'NoAws',
      );
    target?.write(order.text);
    if (recordTarget) {
      recordWritten = fs.existsSync(recordTarget.path) ? 'replaced' : 'created';
      recordTarget.write(recordText);
    }
    const out = target?.path;
    const level = order.level;
    const configLines = curriculumConfigLines(
      // Jobs read order files from S3, never from this machine: the lines name where it goes there (a
      // file written with --out must be uploaded first); without AWS, in the placeholder bucket.
      uri ?? placeholderUri(file),
      order.dataset,
      {
        ...(order.split ? { split: order.split } : {}),
        ...(level ? { level } : {}),
      },
    );
    return {
      order,
      results,
      ...(uri ? { uri } : {}),
      upload,
      ...(out
        ? {
            out,
            uploadCommand: `rlvr upload curricula ${out} --name ${file} && rlvr upload curricula ${sidecarOf(out)} --name ${sidecarOf(file)}`,
          }
        : {}),
      sidecar: {
        at:
          recordTarget?.path ??
          sidecarOf(uri ?? (input.out ? path.resolve(input.cwd, input.out) : placeholderUri(file))),
        written: recordWritten,
        record,
      },
      configLines,
      datasetIds: ids.note,
    };
  } finally {
    context?.close();
  }
}

export interface SftBuildInput {
  readonly from: readonly string[];
  readonly out: string;
  readonly minPassRate?: number;
  readonly maxPassRate?: number;
  readonly seed?: number;
  /**
   * The datasets of one set, in the order their choices are drawn (`gsm8k,math` is their `--subset
   * both`): each measured by exactly one of `from`, every one of `from` of one of them. Without it,
   * each campaign makes its own set (its own generator and shuffle), the sets written one after another.
   */
  readonly datasets?: readonly string[];
  readonly cwd: string;
}

/**
 * The SFT set of their build_sft_from_pass_at_k.py from run folders: it needs each correct completion's
 * text and each prompt, which only the shards' files hold (a job's: after `rlvr download`).
 */
export async function buildSft(input: SftBuildInput): Promise<
  SftSet & {
    readonly out: string;
    readonly prompts: number;
    /** Lines (and files) of the shards that were not read, each skipped: file, line (0: the whole file), why. */
    readonly badLines: SftShardsRead['badLines'];
    /** Where this set differs from what their script would make of the same folders, and why. */
    readonly notes: readonly string[];
    /** Examples per dataset, in the order drawn (with `datasets`). */
    readonly perDataset?: readonly { readonly dataset: string; readonly examples: number }[];
  }
> {
  const target = outFile(input.out, input.cwd);
  const badLines: SftShardsRead['badLines'][number][] = [];
  const notes: string[] = [];
  const band = {
    ...(input.minPassRate !== undefined ? { minPassRate: input.minPassRate } : {}),
    ...(input.maxPassRate !== undefined ? { maxPassRate: input.maxPassRate } : {}),
  };
  const read: { source: string; dataset: string; shards: SftShardsRead }[] = [];
  for (const source of input.from) {
    const dir = path.resolve(input.cwd, source);
    if (!fs.existsSync(dir))
      throw new UserError(
        `${source}: no folder here. The SFT set needs the completions' text, which only the shards' files hold: download the job first (rlvr download ${source}), then name its folder.`,
        'NoSuchRunFolder',
      );
    // A plan that is there must be one: read as a regular file only (a FIFO would block), bounded.
    const planFile = path.join(dir, PASSK_PLAN_FILE);
    const plan = fs.lstatSync(planFile, { throwIfNoEntry: false }) ? readPasskPlan(dir) : undefined;
    if (fs.lstatSync(planFile, { throwIfNoEntry: false }) && !plan)
      throw new UserError(
        `${path.join(source, PASSK_PLAN_FILE)}: not a pass@k plan (not a regular file, not JSON, or not a plan's shape). Remove it to read ${source} as a bare folder of shard_<i>/.`,
        'BadPasskPlan',
      );
    const shardsDir = plan ? path.join(dir, PASSK_DIR) : dir;
    // As `passk results` reads a run folder: a link on the way to the shards must not lead out of it.
    const outside = plan ? linkedOutside(dir, shardsDir) : undefined;
    if (outside !== undefined)
      throw new UserError(
        `${path.join(source, PASSK_DIR)} leads through a link to ${outside}, outside the run folder: not read`,
        'BadPasskPlan',
      );
    const shards = await readSftShards(shardsDir, band);
    const gap = firstShardGap(shards.shards);
    if (gap !== undefined)
      notes.push(
        `${source}: shard_${gap} is missing. Their build_sft_from_pass_at_k.py reads shards from shard_0 until the first one missing, ` +
          `so it would leave out the prompts of the shards after it; this set keeps them.`,
      );
    // A bare folder's ids say which loader made them (math_algebra_3 is math's, not "math_algebra").
    const first = shards.results[0]?.promptId;
    const dataset =
      plan?.campaign?.dataset ??
      (first !== undefined ? (datasetOfId(first) ?? first.replace(/_\d+$/, '')) : 'unknown');
    read.push({ source, dataset, shards });
  }
  if (input.datasets) checkSftDatasets(input.datasets, read);

  const lines: string[] = [];
  let skippedNoCorrect = 0;
  let skippedNoPrompt = 0;
  let perDataset: { dataset: string; examples: number }[] | undefined;
  const options = { ...band, seed: input.seed ?? SFT_DEFAULTS.seed };
  if (input.datasets) {
    const parts = input.datasets.map((d) => read.find((r) => r.dataset === d)!);
    const set = buildMixedSftSet(
      parts.map((r) => ({ results: r.shards.results, prompts: r.shards.prompts, dataset: r.dataset })),
      options,
    );
    lines.push(...set.lines);
    skippedNoCorrect = set.skippedNoCorrect;
    skippedNoPrompt = set.skippedNoPrompt;
    perDataset = [...set.perDataset];
  } else
    for (const r of read) {
      const set = buildSftSet({
        results: r.shards.results,
        prompts: r.shards.prompts,
        dataset: r.dataset,
        ...options,
      });
      lines.push(...set.lines);
      skippedNoCorrect += set.skippedNoCorrect;
      skippedNoPrompt += set.skippedNoPrompt;
    }
  for (const r of read) badLines.push(...r.shards.badLines);
  const prompts = read.reduce((sum, r) => sum + r.shards.results.length, 0);
  target.write(lines.map((l) => `${l}\n`).join(''));
  return {
    lines,
    skippedNoCorrect,
    skippedNoPrompt,
    out: target.path,
    prompts,
    badLines,
    notes,
    ...(perDataset ? { perDataset } : {}),
  };
}

/**
 * `--datasets` against the campaigns read: each named dataset measured by exactly one of them (their
 * script reads one folder per dataset), and no campaign of a dataset not named (it would be left out
 * unnoticed). UserError naming each mismatch.
 */
function checkSftDatasets(
  datasets: readonly string[],
  read: readonly { readonly source: string; readonly dataset: string }[],
): void {
  const problems: string[] = [];
  const repeated = datasets.filter((d, i) => datasets.indexOf(d) !== i);
  if (repeated.length) problems.push(`--datasets names ${[...new Set(repeated)].join(', ')} more than once`);
  for (const d of new Set(datasets)) {
    const of = read.filter((r) => r.dataset === d);
    if (of.length === 0) problems.push(`no --from campaign measures ${d}`);
    if (of.length > 1)
      problems.push(
        `${of.length} campaigns measure ${d} (${of.map((r) => r.source).join(', ')}): their script reads one folder per dataset`,
      );
  }
  for (const r of read)
    if (!datasets.includes(r.dataset))
      problems.push(`${r.source} is a campaign of ${r.dataset}, which --datasets does not name`);
  if (problems.length)
    throw new UserError(
      `--datasets ${datasets.join(',')}: ${problems.join('; ')}. Give one --from campaign per dataset named, and name each campaign's dataset.`,
      'BadFlag',
    );
}

/** The first shard number missing below the highest present (`shard_0`, `shard_1`, `shard_3` → 2). */
function firstShardGap(shards: readonly string[]): number | undefined {
  return shardGaps(shards.flatMap((s) => /^shard_(\d+)$/.exec(s)?.[1] ?? []).map(Number))[0];
}
