/**
 * `rlvr passk`: from a model, a dataset and settings to one pass@k campaign job: the repository's script
 * (its trainer profile's contract) run once per GPU of every host, each process its own shard of the
 * prompts, the model and the dataset copy in channels, the trainer's source shipped as a training job's
 * is, and an earlier campaign's finished prompts kept. Every problem is found before anything is written.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Channel, CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import type { AwsClients } from '../aws';
import { formatDuration } from '../config';
import { readDatasetIds, resolveIdRule } from '../curriculum';
import { ProblemsError, UserError } from '../errors';
import { PASSK_KIND, kindJobNamePrefix } from '../job-kinds';
import { awsStep, gpusPerHost, resolveCheckpoints, type ResolvedCheckpoint } from '../eval';
import { checkRequestLimits, costOf, MAX_RUNTIME_SECONDS } from '../job-options';
import {
  channelPath,
  CHANNELS,
  CONTAINER,
  JOB_ENV,
  jobNameCandidate,
  PASSK_RESUME_CHANNEL,
  S3Layout,
} from '../layout';
import {
  PASSK_DIR,
  PASSK_PLAN_FILE,
  readPasskFolder,
  isStreamFile,
  readPasskPlan,
  type PasskJobPlan,
  type PlannedShard,
} from '../passk-records';
import { packSource, stageSource, type PackedSource, type StagedSource } from '../source';
import {
  batchRequest,
  PLACEHOLDERS,
  Placeholders,
  requestSettingsOf,
  s3Channel,
  type RequestSettings,
  type SubmitConnection,
} from '../submission';
import { BUILT_IN_PROFILES, LOADERS, type PasskScriptContract, type TrainerProfile } from '../trainers';
import { isRegularFile, readJsonFile } from '../util';
import { campaignId, campaignOf } from './campaign';
import { earlierCampaignRate, type PasskRate } from './rate';
import type { PasskRequest } from './input';

/** Channels of a campaign job besides the config and the source. */
export const PASSK_CHANNELS = {
  model: CHANNELS.model,
  dataset: 'dataset',
  resume: PASSK_RESUME_CHANNEL,
} as const;

/** Where the script loads the model: a view of the channel (the index fix applied there, never in S3). */
const MODEL_VIEW = '/tmp/rlvr-passk-model';

export interface PasskPlan {
  readonly request: PasskRequest;
  readonly profile: TrainerProfile;
  readonly script: PasskScriptContract;
  readonly layout: S3Layout;
  readonly jobNamePrefix: string;
  readonly jobName: string;
  readonly image: string;
  readonly imageFrom: string;
  readonly model: ResolvedCheckpoint;
  readonly jobPlan: PasskJobPlan;
  readonly hosts: number;
  readonly gpusPerHost: number;
  /** The dataset copy the job reads (S3), or the local folder (--local). */
  readonly datasetFrom: string;
  readonly datasetCopy?: { readonly bucket: string; readonly key: string };
  /** At most this many prompts per shard (undefined: the copy's size is not known here). */
  readonly promptsPerShard?: number;
  readonly continued?: {
    readonly from: string;
    /** Finished prompts it keeps (counted for a folder; a job's are not read at plan time: 0). */
    readonly prompts: number;
    /** A job's shards with results. */
    readonly shards?: number;
    readonly uri?: string;
    readonly local?: string;
  };
  readonly rate: PasskRate | undefined;
  readonly wallS?: number;
  readonly maxRuntimeSeconds: number;
  readonly costUsd?: number;
  readonly source: { readonly staged: StagedSource; readonly packed: PackedSource };
  readonly warnings: readonly string[];
  readonly notes: readonly string[];
  readonly placeholders: readonly string[];
  readonly submitId: string;
  readonly submittedAt: Date;
  buildRequest(jobName: string): CreateTrainingJobRequest;
  uploads(): { file: string; body: string }[];
}

/** The repository's pass@k script: the first trainer profile that has one. */
export function passkProfile(): { profile: TrainerProfile; script: PasskScriptContract } {
  const profile = BUILT_IN_PROFILES.find((p) => p.runtime.passkScript);
  if (!profile) throw new Error('no trainer profile has a pass@k script');
  return { profile, script: profile.runtime.passkScript! };
}

/** The argv of one shard: the contract's words with this shard's values; a pair with an unset value left out. */
export function shardArgv(
  script: PasskScriptContract,
  values: Readonly<Record<string, string | undefined>>,
): string[] {
  const fill = (word: string) =>
    word.replace(/\{(\w+)\}/g, (_m, name: string) => values[name] ?? `{${name}}`);
  const out: string[] = [];
  for (const word of script.argv) {
    if (typeof word === 'string') out.push(fill(word));
    else {
      const name = /^\{(\w+)\}$/.exec(word[1])?.[1];
      if (name && values[name] === undefined) continue;
      out.push(word[0], fill(word[1]));
    }
  }
  return out;
}

function plannedShards(
  script: PasskScriptContract,
  request: PasskRequest,
  hosts: number,
  perHost: number,
): PlannedShard[] {
  const total = hosts * perHost;
  // Shard i runs on host floor(i / perHost), GPU i mod perHost. The script sets CUDA_VISIBLE_DEVICES to
  // the i-th entry of --gpus, so --gpus lists each shard's GPU on its own host, shard by shard.
  const gpus = Array.from({ length: total }, (_, i) => String(i % perHost)).join(',');
  return Array.from({ length: total }, (_, index) => ({
    index,
    host: Math.floor(index / perHost),
    gpu: index % perHost,
    argv: shardArgv(script, {
      ...request.settings,
      python: 'python',
      script: script.script,
      dataset: request.dataset,
      model: MODEL_VIEW,
      gpus,
      shard: String(index),
      shards: String(total),
      output: `${CONTAINER.checkpointsDir}/${PASSK_DIR}`,
    }),
  }));
}

/** The one model the campaign measures, resolved and checked as `rlvr eval` checks a checkpoint. */
async function checkedModel(request: PasskRequest, session: SubmitConnection, layout: S3Layout) {
  const resolved = await awsStep('look up the model in S3', () =>
    resolveCheckpoints([request.model], {
      aws: session.aws,
      layout,
      noAwsNote: session.note,
      local: Boolean(request.local),
      cwd: request.cwd,
    }),
  );
  if (resolved.problems.length > 0)
    throw new ProblemsError(
      'The model cannot be measured',
      resolved.problems.map((p) => ({ ...p, where: '--model' })),
    );
  if (resolved.checkpoints.length !== 1)
    throw new UserError(
      `--model ${request.model.given} names ${resolved.checkpoints.length} checkpoints: a campaign measures one (e.g. <job>:final)`,
      'BadFlag',
    );
  return { model: resolved.checkpoints[0], warnings: resolved.warnings };
}

/** The dataset's copy: the loader's folder under the datasets prefix (S3), or --dataset-dir (local). */
async function datasetCopy(
  request: PasskRequest,
  script: PasskScriptContract,
  session: SubmitConnection,
  layout: S3Layout,
): Promise<{
  folder: string;
  from: string;
  copy?: { bucket: string; key: string };
  prompts?: number;
  notes: string[];
}> {
  const entry = script.datasets[request.dataset] as { loader: string };
  const loader = LOADERS[entry.loader];
  if (!loader?.folder)
    throw new UserError(
      `the trainer profile names no dataset copy for the loader ${entry.loader}`,
      'NoDatasetCopy',
    );
  const folder = loader.folder.replace('{split}', request.settings.split ?? 'train');
  if (request.datasetDir) {
    if (!isRegularFile(path.join(request.datasetDir, 'dataset_info.json')))
      throw new UserError(
        `--dataset-dir ${request.datasetDir} has no dataset_info.json (a regular file): the script reads a datasets.save_to_disk folder`,
        'BadFlag',
      );
    return { folder, from: request.datasetDir, prompts: promptsOfLocalCopy(request.datasetDir), notes: [] };
  }
  const copy = { bucket: layout.bucket, key: layout.datasetPrefix(folder) };
  const from = layout.uri(copy.key);
  if (!session.aws)
    return { folder, from, copy, notes: [`dataset copy ${from} not checked (${session.note ?? 'no AWS'})`] };
  const listing = await awsStep(`list ${from}`, () => session.aws!.s3.listObjects(copy.bucket, copy.key));
  if (!listing.some((o) => o.key === `${copy.key}dataset_info.json`))
    throw new UserError(
      `${from} holds no dataset copy (no dataset_info.json): the job has no network, so the script reads only this copy. Upload it first: rlvr upload <folder saved with save_to_disk> --dataset ${folder}`,
      'NoDatasetCopy',
    );
  const prompts = await promptsOfS3Copy(session.aws, copy, entry.loader, request.settings).catch(
    () => undefined,
  );
  return { folder, from, copy, ...(prompts !== undefined ? { prompts } : {}), notes: [] };
}

/** Rows of a save_to_disk folder: dataset_info.json's split sizes, when it records them. */
function rowsOfInfo(info: unknown): number | undefined {
  const splits = (info as { splits?: Record<string, { num_examples?: number }> })?.splits;
  if (!splits) return undefined;
  const counts = Object.values(splits)
    .map((s) => s?.num_examples)
    .filter((n): n is number => typeof n === 'number');
  return counts.length === 1 ? counts[0] : undefined;
}

function promptsOfLocalCopy(dir: string): number | undefined {
  return rowsOfInfo(readJsonFile<unknown>(path.join(dir, 'dataset_info.json'), undefined, 4 * 1024 * 1024));
}

/**
 * The copy's prompts: dataset_info.json's split size when it records one, else the ids the loader gives
 * (the curriculum pre-flight's reader: only the id columns, cached by the copy's ETags).
 */
async function promptsOfS3Copy(
  aws: AwsClients,
  copy: { bucket: string; key: string },
  loader: string,
  settings: Readonly<Record<string, string>>,
): Promise<number | undefined> {
  const info = rowsOfInfo(
    JSON.parse(await aws.s3.getObjectText(copy.bucket, `${copy.key}dataset_info.json`)),
  );
  if (info !== undefined) return info;
  const rule = resolveIdRule(loader, {
    split: settings.split ?? 'train',
    ...(settings.level ? { level: settings.level.split(',').map(Number) } : {}),
  });
  if (!rule.checkable) return undefined;
  const read = await readDatasetIds(aws.s3, { bucket: copy.bucket, prefix: copy.key }, rule);
  return read.ok ? read.ids.length : undefined;
}

/** An earlier campaign whose finished prompts this one keeps: the same campaign id, else exit 2. */
async function continuedFrom(
  request: PasskRequest,
  script: PasskScriptContract,
  id: string,
  session: SubmitConnection,
  layout: S3Layout,
): Promise<PasskPlan['continued']> {
  const from = request.continueFrom;
  if (!from) return undefined;
  const folder = path.resolve(request.cwd, from);
  if (fs.existsSync(folder)) {
    if (!request.local)
      throw new UserError(
        `--continue ${from} is a local folder: a SageMaker job cannot read it. Continue a job by its name, or run with --local.`,
        'BadFlag',
      );
    const plan = readPasskPlan(folder);
    if (!plan)
      throw new UserError(
        `--continue ${from}: no readable ${PASSK_PLAN_FILE} there (a run folder of rlvr passk)`,
        'BadFlag',
      );
    checkSameCampaign(from, plan.campaignId, id);
    const results = await readPasskFolder(folder);
    return { from, prompts: results?.prompts.length ?? 0, local: path.join(folder, PASSK_DIR) };
  }
  if (/[/\\]/.test(from)) throw new UserError(`--continue ${from}: no folder at ${folder}`, 'BadFlag');
  const prefix = `${layout.checkpointsPrefix(from)}${PASSK_DIR}/`;
  const uri = layout.uri(prefix);
  if (!session.aws) return { from, prompts: 0, uri };
  const aws = session.aws;
  const planKey = layout.jobKey(from, PASSK_PLAN_FILE);
  if (!(await awsStep(`look for ${from}'s plan`, () => aws.s3.headObject(layout.bucket, planKey))))
    throw new UserError(
      `--continue ${from}: no pass@k campaign job of that name (no ${layout.uri(planKey)})`,
      'BadFlag',
    );
  const text = await awsStep(`read ${from}'s plan`, () => aws.s3.getObjectText(layout.bucket, planKey));
  let theirs: string | undefined;
  try {
    theirs = (JSON.parse(text) as Partial<PasskJobPlan> | null)?.campaignId;
  } catch {
    theirs = undefined;
  }
  if (typeof theirs !== 'string')
    throw new UserError(`--continue ${from}: ${layout.uri(planKey)} is not a pass@k plan`, 'BadFlag');
  checkSameCampaign(from, theirs, id);
  // SageMaker fails a job whose channel has no object only once its instances are up: an earlier job that
  // never wrote a result is refused here.
  const listed = await awsStep(`list ${uri}`, () => aws.s3.listObjects(layout.bucket, prefix));
  // A shard's results are one object (older jobs) or its segments: any of them counts its shard.
  const name = path.posix.basename(script.files.results);
  const shards = new Set(
    listed
      .filter((o) => o.size > 0 && isStreamFile(name, path.posix.basename(o.key)))
      .map((o) => o.key.slice(prefix.length).split('/')[0]),
  ).size;
  if (shards === 0)
    throw new UserError(
      `--continue ${from}: it left no results under ${uri} (nothing to keep): run the campaign without --continue`,
      'NothingToContinue',
    );
  return { from, prompts: 0, shards, uri };
}

function checkSameCampaign(from: string, theirs: string, ours: string): void {
  if (theirs !== ours)
    throw new UserError(
      `--continue ${from}: it measured another campaign (id ${theirs}, this one ${ours}): the model, dataset, split, n, sampling settings and shard count must be the same for its results to count here`,
      'CampaignMismatch',
    );
}

/** The repository's pass@k script must be in the trainer's folder: the job runs it from the shipped source. */
function requirePasskScript(request: PasskRequest, script: PasskScriptContract): void {
  if (!fs.existsSync(path.join(request.trainerSrc, script.script)))
    throw new UserError(
      `${request.trainerSrc} has no ${script.script}: run rlvr passk in the trainer's repository, or pass --trainer-src <its folder>`,
      'NoPasskScript',
    );
}

/** The plan the job reads: the campaign, its shards, the script's files and where the model and dataset cache are. */
function campaignJobPlan(
  profile: TrainerProfile,
  script: PasskScriptContract,
  o: {
    campaign: PasskJobPlan['campaign'];
    id: string;
    shards: PlannedShard[];
    dataset: { folder: string; prompts?: number };
  },
): PasskJobPlan {
  const cache = profile.runtime.datasetCache;
  return {
    version: 1,
    campaign: o.campaign,
    campaignId: o.id,
    shards: o.shards,
    files: script.files,
    model: {
      containerPath: channelPath(PASSK_CHANNELS.model),
      modelPath: MODEL_VIEW,
    },
    resumeArgs: script.resumeArgs,
    datasetCaches: cache
      ? [
          {
            channel: PASSK_CHANNELS.dataset,
            path: cache.path.replaceAll('{folder}', o.dataset.folder),
            marker: cache.marker,
          },
        ]
      : [],
    importRoots: profile.runtime.importRoots?.paths ?? [],
    ...(o.dataset.prompts !== undefined ? { datasetPrompts: o.dataset.prompts } : {}),
  };
}

/** Greedy sampling with several completions per prompt: pass@k measures nothing pass@1 does not. */
function samplingWarnings(request: PasskRequest, campaign: PasskJobPlan['campaign']): string[] {
  return Number(request.settings.temperature) === 0 && campaign.n > 1
    ? [
        `temperature 0 with n ${campaign.n}: greedy sampling gives every completion the same answer, so pass@k for k > 1 measures nothing more than pass@1`,
      ]
    : [];
}

/**
 * At most how many prompts each shard gets: the copy's (at most max_prompts) over the shards, undefined
 * when the copy's size is not known; a warning when some GPUs would get none.
 */
function shardLoad(
  request: PasskRequest,
  datasetPrompts: number | undefined,
  shards: number,
): { promptsPerShard?: number; warnings: string[] } {
  const maxPrompts = request.settings.max_prompts ? Number(request.settings.max_prompts) : undefined;
  const prompts = datasetPrompts === undefined ? undefined : Math.min(datasetPrompts, maxPrompts ?? Infinity);
  const promptsPerShard = prompts === undefined ? undefined : Math.ceil(prompts / shards);
  const warnings =
    prompts !== undefined && prompts < shards
      ? [
          `${prompts} prompt(s) over ${shards} shards: ${shards - prompts} GPU(s) get none and are paid idle; a smaller instance type uses them`,
        ]
      : [];
  return { ...(promptsPerShard !== undefined ? { promptsPerShard } : {}), warnings };
}

/**
 * How long the campaign is expected to run (an earlier campaign's rate, less what a continued one
 * finished), the runtime limit it gets and what it costs; a warning when --max-runtime would stop it.
 */
function runtimeEstimate(
  request: PasskRequest,
  o: {
    campaign: PasskJobPlan['campaign'];
    promptsPerShard: number | undefined;
    shards: number;
    continued: PasskPlan['continued'];
    hosts: number;
    region: string | undefined;
  },
): {
  rate: PasskRate | undefined;
  wallS?: number;
  maxRuntimeSeconds: number;
  costUsd?: number;
  warnings: string[];
  notes: string[];
} {
  const warnings: string[] = [];
  const notes: string[] = [];
  const rate = earlierCampaignRate(
    request.resultsDir,
    o.campaign,
    request.local ? 'local' : request.instanceType,
  );
  const todo =
    o.promptsPerShard === undefined
      ? undefined
      : Math.max(0, o.promptsPerShard - (o.continued?.prompts ?? 0) / o.shards);
  const wallS = rate && todo !== undefined ? rate.startupS + todo / rate.promptsPerSecond : undefined;
  if (request.maxRuntimeSeconds !== undefined && wallS !== undefined && request.maxRuntimeSeconds < wallS)
    warnings.push(
      `--max-runtime ${formatDuration(request.maxRuntimeSeconds)} is below the expected ~${formatDuration(Math.ceil(wallS))}: SageMaker would stop it; a rerun with --continue keeps what it finished`,
    );
  const maxRuntimeSeconds =
    request.maxRuntimeSeconds ??
    (wallS !== undefined
      ? Math.min(MAX_RUNTIME_SECONDS, Math.max(3600, Math.ceil(wallS * 2 + 1800)))
      : 24 * 3600);
  if (request.maxRuntimeSeconds === undefined && wallS === undefined && !request.local)
    notes.push('max runtime 24h (no earlier campaign of this shape to go by): --max-runtime sets it');
  const costUsd =
    request.local || wallS === undefined
      ? undefined
      : costOf(request.instanceType, o.region ?? 'us-west-2', o.hosts, wallS);
  return {
    rate,
    ...(wallS !== undefined ? { wallS } : {}),
    maxRuntimeSeconds,
    ...(costUsd !== undefined ? { costUsd } : {}),
    warnings,
    notes,
  };
}

/** The image the script runs in: --image, else the measured job's, else (without AWS) a placeholder. */
function campaignImage(
  request: PasskRequest,
  model: ResolvedCheckpoint,
  aws: SubmitConnection['aws'],
  placeholders: Placeholders,
): { image: string; from: string } {
  const image = request.image
    ? { image: request.image, from: '--image' }
    : model.jobImage
      ? { image: model.jobImage, from: `the image of ${model.job}` }
      : aws
        ? undefined
        : { image: PLACEHOLDERS.image, from: 'unresolved (no AWS)' };
  if (!image)
    throw new UserError(
      `No image to run the script in: pass --image <repository@sha256:…> (the image rlvr submit built from this repository), or measure a job's checkpoint (its image is used).`,
      'NoImage',
    );
  if (image.image === PLACEHOLDERS.image) placeholders.names.push('image');
  return image;
}

/** The plan with its request and uploads; refused when the request (placeholders aside) exceeds SageMaker's limits. */
function withJobRequest(
  fields: Omit<PasskPlan, 'buildRequest' | 'uploads'>,
  settings: RequestSettings,
): PasskPlan {
  const plan: PasskPlan = {
    ...fields,
    buildRequest: (jobName) => passkJobRequest({ plan, jobName, settings }),
    uploads: () => [{ file: PASSK_PLAN_FILE, body: `${JSON.stringify(fields.jobPlan, null, 2)}\n` }],
  };
  if (plan.placeholders.length === 0) {
    const limitProblems = checkRequestLimits(plan.buildRequest(plan.jobName));
    if (limitProblems.length > 0)
      throw new ProblemsError('The request exceeds SageMaker limits', limitProblems);
  }
  return plan;
}

export async function planPasskCampaign(
  request: PasskRequest,
  session: SubmitConnection,
): Promise<PasskPlan> {
  const { profile, script } = passkProfile();
  requirePasskScript(request, script);
  const placeholders = new Placeholders();
  const { settings, aws } = session;
  const layout = new S3Layout(placeholders.value('bucket', settings.values.bucket), settings.values.prefix);
  const perHost = gpusPerHost(request, 'the script runs vLLM on one GPU per shard');
  const { model, warnings: modelWarnings } = await checkedModel(request, session, layout);
  const dataset = await datasetCopy(request, script, session, layout);
  const hosts = request.instanceCount;
  const shards = plannedShards(script, request, hosts, perHost);
  const campaign = campaignOf(request, model, profile.id);
  const id = campaignId(campaign, shards.length);
  const continued = await continuedFrom(request, script, id, session, layout);
  const jobPlan = campaignJobPlan(profile, script, { campaign, id, shards, dataset });
  const load = shardLoad(request, dataset.prompts, shards.length);
  const estimate = runtimeEstimate(request, {
    campaign,
    promptsPerShard: load.promptsPerShard,
    shards: shards.length,
    continued,
    hosts,
    region: settings.values.region,
  });
  const image = campaignImage(request, model, aws, placeholders);
  const staged = await stageSource({ root: request.trainerSrc });
  const packed = await packSource(staged);
  const submittedAt = new Date();
  const jobNamePrefix = kindJobNamePrefix(PASSK_KIND, settings.values.jobNamePrefix ?? 'rlvr');
  const requestSettings = requestSettingsOf(settings.values, layout, placeholders);
  return withJobRequest(
    {
      request,
      profile,
      script,
      layout,
      jobNamePrefix,
      jobName: jobNameCandidate(jobNamePrefix, submittedAt, 1),
      image: image.image,
      imageFrom: image.from,
      model,
      jobPlan,
      hosts,
      gpusPerHost: perHost,
      datasetFrom: dataset.from,
      ...(dataset.copy ? { datasetCopy: dataset.copy } : {}),
      ...(load.promptsPerShard !== undefined ? { promptsPerShard: load.promptsPerShard } : {}),
      ...(continued ? { continued } : {}),
      rate: estimate.rate,
      ...(estimate.wallS !== undefined ? { wallS: estimate.wallS } : {}),
      maxRuntimeSeconds: estimate.maxRuntimeSeconds,
      ...(estimate.costUsd !== undefined ? { costUsd: estimate.costUsd } : {}),
      source: { staged, packed },
      warnings: [
        ...modelWarnings,
        ...samplingWarnings(request, campaign),
        ...load.warnings,
        ...estimate.warnings,
      ],
      notes: [...model.notes.map((n) => `model: ${n}`), ...dataset.notes, ...estimate.notes],
      placeholders: placeholders.names,
      submitId: randomUUID(),
      submittedAt,
    },
    requestSettings,
  );
}

function passkJobRequest(o: {
  plan: PasskPlan;
  jobName: string;
  settings: RequestSettings;
}): CreateTrainingJobRequest {
  const { plan, jobName } = o;
  const { layout, request, model } = plan;
  const channels: Channel[] = [
    s3Channel(CHANNELS.config, layout.uri(layout.jobPrefix(jobName)), 'File'),
    s3Channel(CHANNELS.code, layout.uri(layout.sourceKey(plan.source.packed.sha256)), 'File'),
    s3Channel(
      PASSK_CHANNELS.model,
      model.s3 ? `s3://${model.s3.bucket}/${model.s3.key}` : model.given,
      'File',
    ),
  ];
  if (plan.datasetCopy)
    channels.push(s3Channel(PASSK_CHANNELS.dataset, plan.layout.uri(plan.datasetCopy.key), 'File'));
  if (plan.continued?.uri) channels.push(s3Channel(PASSK_CHANNELS.resume, plan.continued.uri, 'File'));
  const { campaign } = plan.jobPlan;
  return batchRequest(PASSK_KIND, {
    jobName,
    settings: o.settings,
    image: plan.image,
    submitId: plan.submitId,
    channels,
    environment: { [JOB_ENV.sourceSha256]: plan.source.packed.sha256 },
    tags: {
      'rlvr:campaign': plan.jobPlan.campaignId,
      'rlvr:dataset': `${campaign.dataset}/${campaign.split} n=${campaign.n}`,
      'rlvr:model': campaign.model.id,
    },
    options: request,
    maxRuntimeSeconds: plan.maxRuntimeSeconds,
  });
}
