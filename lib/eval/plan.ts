/**
 * `rlvr eval`: from checkpoint references, benchmarks and flags to one batch evaluation job:
 * the checkpoints resolved and checked, the units (checkpoint × task) not yet done, their packing over
 * every GPU of every host, the plan the job reads and the CreateTrainingJob request. Every problem is
 * found before anything is written.
 */
import { randomUUID } from 'node:crypto';
import type { Channel, CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import { describeAwsError, type AwsClients } from '../aws';
import { ProblemsError, RlvrError, RuntimeFailure, UserError, type Problem } from '../errors';
import { EVAL_KIND, kindJobNamePrefix } from '../job-kinds';
import {
  checkRequestLimits,
  costOf,
  gpuCount,
  isTrainingInstanceType,
  MAX_RUNTIME_SECONDS,
} from '../job-options';
import { channelPath, CHANNELS, jobNameCandidate, S3Layout } from '../layout';
import { ecrCredentials, imageLabels, LM_EVAL_TASKS_LABEL, offlineDataGaps } from '../image';
import {
  PLACEHOLDERS,
  Placeholders,
  requestSettingsOf,
  batchRequest,
  s3Channel,
  type RequestSettings,
  type SubmitConnection,
} from '../submission';
import {
  EVAL_PLAN_FILE,
  labelFolder,
  modelViewPath,
  UNIT_FILES,
  unitContainerDir,
  unitFolder,
  unitId,
  type EvalJobPlan,
  type Harness,
  type PlannedCheckpoint,
  type PlannedUnit,
} from '../eval-records';
import { estimateSeconds, packUnits, type EvalUnit, type Packing } from './pack';
import type { Benchmark, LabelledRef } from './refs';
import { resolveCheckpoints, type ResolvedCheckpoint } from './resolve';
import { formatDuration, type EvalSettings } from '../config';
import { taskWarnings, unitCommand } from './standard';
import { findDoneUnits, type DoneUnit } from './done';

/** What the command line (or an eval config) asked for, parsed. */
export interface EvalRequest {
  readonly refs: readonly LabelledRef[];
  readonly benchmarks: readonly Benchmark[];
  readonly settings: EvalSettings;
  /** As named with --deviate (recorded with every result). */
  readonly deviations: readonly string[];
  readonly harness: Harness;
  readonly logSamples: boolean;
  readonly force: boolean;
  readonly instanceType: string;
  readonly instanceCount: number;
  readonly spot: boolean;
  readonly maxRuntimeSeconds?: number;
  readonly maxRetries?: number;
  readonly volumeGb: number;
  readonly image?: string;
  /** Local runs: the GPUs `--gpus` gives (one host unless instanceCount > 1). */
  readonly local?: { readonly gpus: readonly number[] };
  readonly cwd: string;
  readonly description?: string;
  /** Where the benchmarks came from (flag, suite, eval config), for the plan. */
  readonly benchmarksFrom: string;
}

export interface EvalPlan {
  readonly request: EvalRequest;
  readonly layout: S3Layout;
  readonly jobNamePrefix: string;
  /** The first candidate name (the submit claims the first free one). */
  readonly jobName: string;
  readonly image: string;
  readonly imageFrom: string;
  readonly checkpoints: readonly ResolvedCheckpoint[];
  readonly jobPlan: EvalJobPlan;
  /** Units found done earlier (skipped unless --force), with where. */
  readonly skipped: readonly DoneUnit[];
  readonly packing: Packing;
  readonly hosts: number;
  readonly gpusPerHost: number;
  readonly maxRuntimeSeconds: number;
  readonly costUsd: number | undefined;
  readonly warnings: readonly string[];
  readonly notes: readonly string[];
  readonly placeholders: readonly string[];
  readonly submitId: string;
  readonly submittedAt: Date;
  /** The channels the checkpoints come in by (SageMaker jobs). */
  readonly channels: readonly EvalChannel[];
  /** The request for a job name (the files it reads are under `jobs/<job>/`). */
  buildRequest(jobName: string): CreateTrainingJobRequest;
  /** The files uploaded under `jobs/<job>/` (the plan, the channels' manifests). */
  uploads(): { file: string; body: string }[];
}

/** A channel the job reads checkpoints from: one per S3 source (a job's checkpoints share a manifest). */
export interface EvalChannel {
  readonly name: string;
  /** The S3 prefix the channel reads (a manifest's prefix for a job's checkpoints). */
  readonly prefix: { bucket: string; key: string };
  /** Keys relative to `prefix` (a manifest), or undefined for the whole prefix. */
  readonly manifestKeys?: readonly string[];
}

const DEFAULT_MAX_RUNTIME_FLOOR_S = 3600;

export function evalJobNamePrefix(jobNamePrefix: string): string {
  return kindJobNamePrefix(EVAL_KIND, jobNamePrefix);
}

/** Channels for the checkpoints, and where each checkpoint is inside the job. */
function planChannels(
  checkpoints: readonly ResolvedCheckpoint[],
  layout: S3Layout,
): { channels: EvalChannel[]; containerPath: Map<string, string> } {
  const channels: EvalChannel[] = [];
  const containerPath = new Map<string, string>();
  const byJob = new Map<string, ResolvedCheckpoint[]>();
  for (const c of checkpoints) {
    if (c.local) {
      // Local runs bind the folder here.
      containerPath.set(c.label, `${channelPath(`ckpt-local`)}/${labelFolder(c.label)}`);
      continue;
    }
    if (c.job) byJob.set(c.job, [...(byJob.get(c.job) ?? []), c]);
  }
  for (const [job, list] of byJob) {
    const name = `ckpt-${channels.length + 1}`;
    const prefix = { bucket: layout.bucket, key: layout.checkpointsPrefix(job) };
    const keys: string[] = [];
    for (const c of list) {
      const rel = c.s3!.key.slice(prefix.key.length);
      containerPath.set(c.label, `${channelPath(name)}/${rel.replace(/\/$/, '')}`);
      for (const o of c.objects ?? []) keys.push(o.key.slice(prefix.key.length));
    }
    channels.push({ name, prefix, manifestKeys: keys });
  }
  for (const c of checkpoints) {
    if (c.local || c.job) continue;
    const name = `ckpt-${channels.length + 1}`;
    channels.push({ name, prefix: c.s3! });
    containerPath.set(c.label, channelPath(name));
  }
  return { channels, containerPath };
}

/** Each checkpoint once, each row name once. */
function uniqueLabels(checkpoints: readonly ResolvedCheckpoint[]): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  const ids = new Map<string, string>();
  for (const c of checkpoints) {
    const same = ids.get(c.id);
    if (same !== undefined) {
      problems.push(`${same} and ${c.given} name the same checkpoint (${c.id}): name it once`);
      continue;
    }
    ids.set(c.id, c.given);
    const folder = labelFolder(c.label);
    const other = seen.get(folder);
    if (other !== undefined)
      problems.push(
        `two checkpoints would share the row "${c.label}" (${other} and ${c.given}): give one a label, e.g. --checkpoints mine=${c.given}`,
      );
    else seen.set(folder, c.given);
  }
  return problems;
}

/** The image: --image, else the image of the first training job named. */
function planImage(
  request: EvalRequest,
  checkpoints: readonly ResolvedCheckpoint[],
  aws: AwsClients | undefined,
): { image: string; from: string; placeholder?: boolean } {
  if (request.image) return { image: request.image, from: '--image' };
  const fromJob = checkpoints.find((c) => c.jobImage);
  if (fromJob) return { image: fromJob.jobImage!, from: `the image of ${fromJob.job}` };
  if (!aws) return { image: PLACEHOLDERS.image, from: 'unresolved (no AWS)', placeholder: true };
  throw new UserError(
    `No image to evaluate with: pass --image <repository@sha256:…> (any image rlvr built: it holds lm_eval and OLMES), or name a training job among --checkpoints (its image is used).`,
    'NoImage',
  );
}

function unitsOf(request: EvalRequest, checkpoints: readonly ResolvedCheckpoint[]) {
  return checkpoints.flatMap((c) =>
    request.benchmarks.map((b) => ({
      checkpoint: c,
      task: b.task,
      numFewshot: b.numFewshot,
      id: unitId({
        checkpointId: c.id,
        task: b.task,
        numFewshot: b.numFewshot,
        harness: request.harness,
        deviations: request.deviations,
      }),
    })),
  );
}

/**
 * GPUs per host: the instance type's (SageMaker), or --gpus shared out among the hosts (local). `uses`
 * says what needs them, for the refusal of a type without any.
 */
export function gpusPerHost(
  request: Pick<EvalRequest, 'local' | 'instanceCount' | 'instanceType'>,
  uses = 'evaluation runs vLLM on GPUs',
): number {
  if (request.local) {
    const n = request.local.gpus.length;
    if (n === 0 || n % request.instanceCount !== 0)
      throw new UserError(
        `--gpus gives ${n} GPU(s) to ${request.instanceCount} host(s): pass a multiple of ${request.instanceCount} (e.g. --gpus 0-3)`,
        'BadGpuSplit',
      );
    return n / request.instanceCount;
  }
  if (!isTrainingInstanceType(request.instanceType))
    throw new UserError(
      `--instance-type ${request.instanceType} is not a SageMaker training instance type`,
      'BadInstanceType',
    );
  const gpus = gpuCount(request.instanceType);
  if (!gpus)
    throw new UserError(
      `--instance-type ${request.instanceType} has no GPU: ${uses} (e.g. ml.g6e.48xlarge, 8 GPUs)`,
      'BadInstanceType',
    );
  return gpus;
}

/** A step that reads AWS: our errors pass, any other is a run-time failure naming the step. */
export async function awsStep<T>(what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof RlvrError) throw err;
    throw new RuntimeFailure(`Could not ${what}: ${describeAwsError(err)}`, 'AwsFailure', { cause: err });
  }
}

/** Every reference resolved and checked; any problem refuses them all (exit 2). */
async function checkedCheckpoints(request: EvalRequest, session: SubmitConnection, layout: S3Layout) {
  const resolved = await awsStep('look up the checkpoints in S3', () =>
    resolveCheckpoints(request.refs, {
      aws: session.aws,
      layout,
      noAwsNote: session.note,
      local: Boolean(request.local),
      cwd: request.cwd,
    }),
  );
  const problems: Problem[] = [
    ...resolved.problems,
    ...uniqueLabels(resolved.checkpoints).map((message): Problem => ({ where: '--checkpoints', message })),
  ];
  if (problems.length > 0)
    throw new ProblemsError(
      `The checkpoints cannot be evaluated (${problems.length} problem${problems.length > 1 ? 's' : ''})`,
      problems,
    );
  return resolved;
}

/** The units without results (all with --force), packed over every GPU of every host. */
async function unitsToRun(
  request: EvalRequest,
  checkpoints: readonly ResolvedCheckpoint[],
  o: {
    aws: AwsClients | undefined;
    layout: S3Layout;
    jobNamePrefix: string;
    perHost: number;
    learned: Readonly<Record<string, readonly number[]>>;
  },
): Promise<{ skipped: DoneUnit[]; packing: Packing; idleWarning?: string }> {
  const all = unitsOf(request, checkpoints);
  const done = request.force
    ? new Map<string, DoneUnit>()
    : await awsStep('look for earlier results in S3', () =>
        findDoneUnits({
          aws: o.aws,
          layout: o.layout,
          jobNamePrefix: o.jobNamePrefix,
          cwd: request.cwd,
          local: Boolean(request.local),
          ids: all.map((u) => u.id),
        }),
      );
  const skipped = all.flatMap((u) => (done.has(u.id) ? [done.get(u.id)!] : []));
  const todo = all.filter((u) => !done.has(u.id));
  const packing = packUnits(
    todo.map((u): EvalUnit & { id: string } => ({
      checkpoint: u.checkpoint.label,
      task: u.task,
      numFewshot: u.numFewshot,
      estimateS: estimateSeconds(u.task, o.learned),
      id: u.id,
    })),
    request.instanceCount,
    o.perHost,
  );
  const idleWarning =
    todo.length > 0 && packing.idle > 0
      ? `${packing.idle} of ${packing.gpus.length} GPUs get no unit (${todo.length} unit(s)): they are paid and idle; a smaller instance type, or more checkpoints or tasks, uses them`
      : undefined;
  return { skipped, packing, ...(idleWarning ? { idleWarning } : {}) };
}

export async function planEval(
  request: EvalRequest,
  session: SubmitConnection,
  learned: Readonly<Record<string, readonly number[]>> = {},
): Promise<EvalPlan> {
  const placeholders = new Placeholders();
  const { settings, aws } = session;
  const layout = new S3Layout(placeholders.value('bucket', settings.values.bucket), settings.values.prefix);
  const perHost = gpusPerHost(request);
  const resolved = await checkedCheckpoints(request, session, layout);
  const checkpoints = resolved.checkpoints;
  const warnings = [...resolved.warnings];
  for (const b of request.benchmarks) warnings.push(...taskWarnings(b.task, request.harness));
  const jobNamePrefix = evalJobNamePrefix(settings.values.jobNamePrefix ?? 'rlvr');
  const { skipped, packing, idleWarning } = await unitsToRun(request, checkpoints, {
    aws,
    layout,
    jobNamePrefix,
    perHost,
    learned,
  });
  if (idleWarning) warnings.push(idleWarning);
  if (request.maxRuntimeSeconds !== undefined && request.maxRuntimeSeconds < packing.wallS)
    warnings.push(
      `--max-runtime ${formatDuration(request.maxRuntimeSeconds)} is below the expected wall time ~${formatDuration(Math.ceil(packing.wallS))}: SageMaker would stop the job before its units end${request.spot ? ' (with --spot, a restart would be cut off the same way)' : ''}`,
    );
  const { channels, containerPath } = planChannels(checkpoints, layout);
  if (!request.local && channels.length > 19)
    throw new UserError(
      `${channels.length} checkpoint sources need ${channels.length} input channels; a SageMaker job has at most 19 beside its config. Split the references over two rlvr eval runs.`,
      'TooManyChannels',
    );
  const plannedCheckpoints: PlannedCheckpoint[] = checkpoints.map((c) => ({
    label: c.label,
    id: c.id,
    containerPath: containerPath.get(c.label)!,
    modelPath: modelViewPath('/tmp', c.label),
    from: c.local ?? (c.s3 ? `s3://${c.s3.bucket}/${c.s3.key}` : c.given),
  }));
  const units = plannedUnits(request, packing, plannedCheckpoints);
  const jobPlan: EvalJobPlan = {
    version: 1,
    harness: request.harness,
    checkpoints: plannedCheckpoints,
    units,
    deviations: request.deviations,
    reused: skipped.map((d) => ({ id: d.id, job: d.where, folder: d.folder })),
  };
  const image = planImage(request, checkpoints, aws);
  if (image.placeholder) placeholders.names.push('image');
  if (!image.placeholder && request.harness === 'lm_eval' && !request.local) {
    warnings.push(...(await offlineTaskData(image.image, request, session)));
  }
  const maxRuntimeSeconds =
    request.maxRuntimeSeconds ??
    Math.min(MAX_RUNTIME_SECONDS, Math.max(DEFAULT_MAX_RUNTIME_FLOOR_S, Math.ceil(packing.wallS * 2 + 1800)));
  const costUsd = request.local
    ? undefined
    : costOf(
        request.instanceType,
        settings.values.region ?? 'us-west-2',
        request.instanceCount,
        packing.wallS,
      );
  const submittedAt = new Date();
  const submitId = randomUUID();
  const requestSettings = requestSettingsOf(settings.values, layout, placeholders);
  const notes = checkpoints.flatMap((c) => c.notes.map((n) => `${c.label}: ${n}`));
  const plan: EvalPlan = {
    request,
    layout,
    jobNamePrefix,
    jobName: jobNameCandidate(jobNamePrefix, submittedAt, 1),
    image: image.image,
    imageFrom: image.from,
    checkpoints,
    jobPlan,
    skipped,
    packing,
    hosts: request.instanceCount,
    gpusPerHost: perHost,
    maxRuntimeSeconds,
    costUsd,
    warnings,
    notes,
    placeholders: placeholders.names,
    submitId,
    submittedAt,
    channels,
    buildRequest: (jobName) =>
      evalJobRequest({
        jobName,
        request,
        layout,
        settings: requestSettings,
        image: image.image,
        channels,
        submitId,
        units: units.length,
        maxRuntimeSeconds,
      }),
    uploads: () => [
      { file: EVAL_PLAN_FILE, body: `${JSON.stringify(jobPlan, null, 2)}\n` },
      ...channels
        .filter((c) => c.manifestKeys)
        .map((c) => ({ file: manifestFile(c), body: manifestBody(c) })),
    ],
  };
  if (placeholders.names.length === 0) {
    const limitProblems = checkRequestLimits(plan.buildRequest(plan.jobName));
    if (limitProblems.length > 0)
      throw new ProblemsError('The request exceeds SageMaker limits', limitProblems);
  }
  return plan;
}

/**
 * An eval job has no network: lm_eval finds a task's data only in the image (its LM_EVAL_TASKS). An image
 * whose labels say what it holds is checked (a task without data exits 2); otherwise a warning says so.
 */
async function offlineTaskData(
  image: string,
  request: EvalRequest,
  session: SubmitConnection,
): Promise<string[]> {
  const repositoryUri = session.settings.values.repositoryUri;
  const labels = await imageLabels(image, {
    ...(session.aws ? { credentials: ecrCredentials(session.aws.ecr) } : {}),
    ...(repositoryUri ? { registryHost: repositoryUri.split('/')[0] } : {}),
  });
  const tasks = request.benchmarks.map((b) => b.task);
  const gaps = offlineDataGaps(labels, tasks);
  if (gaps === undefined) {
    return [
      `image: whether ${image} holds the data of ${[...new Set(tasks)].join(', ')} cannot be told (no ${LM_EVAL_TASKS_LABEL} label could be read): with no network, a unit whose data it lacks fails`,
    ];
  }
  if (gaps.length > 0) {
    throw new ProblemsError(
      "The eval job would not find its tasks' data in the image (it has no network)",
      gaps.map((g) => ({
        where: `--benchmarks ${g.task}`,
        message: `the image ${image} does not hold ${g.missing}`,
        hint: `Build the image with ${g.fix} (rlvr image push), then pass it with --image, or leave the task out.`,
      })),
    );
  }
  return [];
}

/** Each GPU's units with their folders and exact commands. */
function plannedUnits(
  request: EvalRequest,
  packing: Packing,
  checkpoints: readonly PlannedCheckpoint[],
): PlannedUnit[] {
  return packing.gpus.flatMap((g) =>
    g.units.map((u) => {
      const id = (u as EvalUnit & { id: string }).id;
      const folder = unitFolder(u.checkpoint, u.task, u.numFewshot);
      const command = unitCommand({
        harness: request.harness,
        model: checkpoints.find((c) => c.label === u.checkpoint)!.modelPath,
        task: u.task,
        numFewshot: u.numFewshot,
        outputDir: `${unitContainerDir(folder)}/${UNIT_FILES.harness}`,
        settings: request.settings,
        logSamples: request.logSamples,
      });
      return {
        id,
        host: g.host,
        gpu: g.gpu,
        checkpoint: u.checkpoint,
        task: u.task,
        numFewshot: u.numFewshot,
        folder,
        argv: command.argv,
        env: command.env,
        estimateS: u.estimateS,
      };
    }),
  );
}

/** The eval job's request: the config channel, the checkpoints' channels, eval mode, network isolation. */
function evalJobRequest(o: {
  jobName: string;
  request: EvalRequest;
  layout: S3Layout;
  settings: RequestSettings;
  image: string;
  channels: readonly EvalChannel[];
  submitId: string;
  units: number;
  maxRuntimeSeconds: number;
}): CreateTrainingJobRequest {
  const { request, layout, jobName } = o;
  return batchRequest(EVAL_KIND, {
    jobName,
    settings: o.settings,
    image: o.image,
    submitId: o.submitId,
    channels: [
      s3Channel(CHANNELS.config, layout.uri(layout.jobPrefix(jobName)), 'File'),
      ...o.channels.map((c) => evalChannel(c, layout, jobName)),
    ],
    tags: { 'rlvr:units': String(o.units) },
    options: request,
    maxRuntimeSeconds: o.maxRuntimeSeconds,
  });
}

function manifestFile(c: EvalChannel): string {
  return `manifests/${c.name}.json`;
}

/** SageMaker's manifest: the common prefix, then each key relative to it. */
function manifestBody(c: EvalChannel): string {
  return `${JSON.stringify([{ prefix: `s3://${c.prefix.bucket}/${c.prefix.key}` }, ...(c.manifestKeys ?? [])])}\n`;
}

function evalChannel(c: EvalChannel, layout: S3Layout, jobName: string): Channel {
  if (!c.manifestKeys) return s3Channel(c.name, `s3://${c.prefix.bucket}/${c.prefix.key}`, 'File');
  const channel = s3Channel(c.name, layout.uri(layout.jobKey(jobName, manifestFile(c))), 'File');
  channel.DataSource!.S3DataSource!.S3DataType = 'ManifestFile';
  return channel;
}
