import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import {
  runtimeForecast,
  CODE_BENCHMARK_PATTERN,
  evalTasks,
  stringifyForTrainer,
  type EvalConfig,
  type LoadedConfig,
  type TrainingConfig,
} from '../config';
import { classifyAwsError, describeAwsError, type AwsClientOptions } from '../aws';
import { ProblemsError, RuntimeFailure, UserError, type Problem } from '../errors';
import { recordOf, sageMakerRunsOrWhy, type RunShape, type SageMakerPastRuns } from '../forecast';
import { rlvrCacheDir } from '../util';
import {
  EFA_LABEL,
  imageReferenceProblem,
  LM_EVAL_TASKS_LABEL,
  offlineDataGaps,
  type ImagePipeline,
} from '../image';
import { CLI_ENV, JOB_FILES, jobNameCandidate, PATCH_FILES, type S3Layout } from '../layout';
import type { ResolvedSettings, SettingFlags } from '../settings';
import type { GitState, PackedSource } from '../source';
import type { ProgressOf } from '../progress';
import { evalBenchmarks, type JobContract, type TrainerSelection, type YamlMap } from '../trainers';
import { cached, prepareArtifacts, type Artifacts, type PlanCache } from './artifacts';
import { resolveConfigForJob, type InputPlan } from './inputs';
import {
  checkRequestLimits,
  gpuCount,
  hasEfa,
  hourlyPrice,
  idleGpus,
  problemAt,
  type JobOptionFlags,
  type JobOptions,
  type ResolvedJobOptions,
} from '../job-options';
import {
  firstJobName,
  Placeholders,
  requestSettingsOf,
  type PlaceholderName,
  jobLogPathProblem,
  resolveJobLogPath,
  type RequestSettings,
  type SubmitConnection,
  type SubmitSession,
} from '../submission';
import { defaultCacheDir } from '../curriculum';
import type { MissingOrderIds } from './curriculum-preflight';
import { runPreflight, type PreflightCheck } from './preflight';
import { buildCreateTrainingJobRequest, type RequestInput } from './request';
import type { SharedFileSystemPlan } from './shared-file-system';
import { forecastStep, plannedShape, type PlannedForecast } from './forecast';
import { describeWrite, type PlatformEnvCheck } from './platform-env';
import {
  loadJobConfigs,
  resolveJob,
  resolveTemplate,
  type JobConfigs,
  type ResolvedJob,
  type ResolvedTemplate,
} from './resolve';

export { newPlanCache, type PlanCache } from './artifacts';

/** Progress events of a submit (lib/progress.ts); the CLI decides how to show them. */
export type SubmitEvent = ProgressOf<'step' | 'file' | 'retry'>;
export type SubmitListener = (event: SubmitEvent) => void;

export interface SubmitInput {
  readonly configPath: string;
  /** The config's text, when it differs from the file (a sweep variant), and how to name it. */
  readonly configText?: { readonly text: string; readonly label: string };
  /** Tags added by the launcher itself (a sweep's id and overrides). */
  readonly extraTags?: Readonly<Record<string, string>>;
  readonly evalConfigPath?: string;
  readonly options: JobOptionFlags;
  /** Likely typos of the trainer's keys are errors, not warnings. */
  readonly strict?: boolean;
  readonly template?: string;
  readonly description?: string;
  readonly trainerSrc?: string;
  readonly image?: string;
  readonly jobLog?: string;
  /** How the caller opens the session (openSubmitSession takes the input itself). */
  readonly settings: SettingFlags;
  readonly dryRun: boolean;
  readonly configureClients?: AwsClientOptions['configure'];
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly now?: () => Date;
  /**
   * A sweep's n-th job (1-based): its provisional name is the n-th candidate of the sweep's second, as
   * the submit claims them in order (a name taken by then moves on to the next free `-N`).
   */
  readonly nameIndex?: number;
  readonly listener?: SubmitListener;
  /** Shared by the plans of one sweep. */
  readonly cache?: PlanCache;
  /** A `--local` run: inputs come from local folders, so S3 is not checked. */
  readonly local?: boolean;
  /** Finds (or builds and pushes) the image when neither --image nor launcher.image names one. */
  readonly pipeline?: ImagePipeline;
  /** Order-file ids missing from their dataset are a warning (recorded with the job), not an error. */
  readonly allowMissingOrderIds?: boolean;
  /** The results folder the forecast reads past runs from (default `results`, from cwd). */
  readonly resultsDir?: string;
}

export interface Upload {
  readonly key: string;
  readonly bytes: number;
  readonly what: string;
  /** Content-addressed objects are uploaded only when absent. */
  readonly onlyIfAbsent?: boolean;
}

export interface PreflightReport {
  readonly ran: boolean;
  /** Why it did not run. */
  readonly reason?: string;
  readonly checks: readonly PreflightCheck[];
}

/** The hosts and GPUs a job pays for: every host runs the same train/eval split. */
export interface ClusterPlan {
  readonly hosts: number;
  /** GPUs on one host (the instance-type table); undefined for a type outside it. */
  readonly gpusPerHost: number | undefined;
  readonly totalGpus: number | undefined;
  /** hosts × the train split: every host gives its train GPUs to the Ray cluster. */
  readonly trainGpus: number;
  /** hosts × the eval split; only the head's run the eval watcher. */
  readonly evalGpus: number;
  /** The eval GPUs of the hosts other than the head: the eval watcher never uses them. */
  readonly idleEvalGpus: number;
}

export interface SubmitPlan {
  readonly jobName: string;
  readonly config: LoadedConfig<TrainingConfig>;
  /** The trainer that runs it, and why it was picked. */
  readonly trainer: TrainerSelection;
  readonly evalConfig?: LoadedConfig<EvalConfig>;
  readonly settings: ResolvedSettings;
  readonly requestSettings: RequestSettings & { readonly region: string; readonly repositoryUri: string };
  /** The keys of this plan's bucket and prefix. */
  readonly layout: S3Layout;
  /** Settings that are placeholders in this plan (dry-run without AWS). */
  readonly placeholders: readonly PlaceholderName[];
  readonly template: { readonly name: string; readonly from: 'parameter' | 'built-in' } | undefined;
  readonly options: ResolvedJobOptions;
  readonly image: Artifacts['image'];
  readonly inputs: InputPlan;
  readonly source: {
    readonly root: string;
    readonly isGit: boolean;
    readonly fileCount: number;
    readonly bytes: number;
    readonly sha256: string;
    readonly key: string;
    readonly excluded: readonly string[];
    /** Credential files left out whatever the source's globs say, each with why. */
    readonly withheld: readonly { readonly path: string; readonly why: string }[];
  };
  readonly packed: PackedSource;
  readonly git: GitState | undefined;
  readonly resolvedConfigYaml: string;
  /** The trainer's run-time contract the entrypoint follows (`contract.json` in the config channel). */
  readonly contractJson: string;
  /** What the plan says about the trainer at run time. */
  readonly runtimeNotes: readonly string[];
  readonly description: string;
  readonly submitId: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly uploads: readonly Upload[];
  /** Everything the request is built from but the job name (claimed at submit). */
  readonly requestInput: Omit<RequestInput, 'jobName'>;
  readonly request: CreateTrainingJobRequest;
  readonly preflight: PreflightReport;
  /** Missing order ids allowed by --allow-missing-order-ids (also in contract.json and the job log). */
  readonly missingOrderIds: readonly MissingOrderIds[];
  /** On-demand estimate: per hour, and for the whole max runtime. */
  readonly estimate:
    | {
        /** For every host. */
        readonly perHour: number;
        /** For one host (perHour = instances × perInstanceHour). */
        readonly perInstanceHour: number;
        readonly instances: number;
        readonly maxRuntimeCost: number;
        readonly note?: string;
      }
    | undefined;
  readonly cluster: ClusterPlan;
  /**
   * The file system every host mounts read-write (a multi-host job of a trainer whose hosts share a
   * folder); a local run names LOCAL_VOLUME, which its runner mounts on every host container.
   */
  readonly sharedFileSystem?: SharedFileSystemPlan;
  /** How long and how much, from similar past runs; and what it says of the max runtime. */
  readonly forecast: PlannedForecast;
  /** The trainer's writes at import of the variables the platform owns: listed, held, allowed. */
  readonly platformEnv: PlatformEnvCheck;
  readonly warnings: readonly Problem[];
  readonly jobLogPath: string;
  readonly configDisplayPath: string;
  readonly submittedAt: Date;
}

function plainOptions(options: ResolvedJobOptions): JobOptions {
  return Object.fromEntries(Object.entries(options).map(([k, v]) => [k, v.value])) as unknown as JobOptions;
}

/** The job's files under `jobs/<job>/` (besides the reservation). */
export function jobUploads(
  plan: Pick<SubmitPlan, 'config' | 'evalConfig' | 'resolvedConfigYaml' | 'contractJson' | 'git'>,
): {
  file: string;
  body: string;
  what: string;
}[] {
  const files: { file: string; body: string; what: string }[] = [
    { file: JOB_FILES.configAsWritten, body: plan.config.text, what: 'the config as written' },
    { file: JOB_FILES.resolvedConfig, body: plan.resolvedConfigYaml, what: 'the config the trainer reads' },
    { file: JOB_FILES.contract, body: plan.contractJson, what: "the trainer's run-time contract" },
  ];
  if (plan.evalConfig)
    files.push({ file: JOB_FILES.evalConfig, body: plan.evalConfig.text, what: 'the eval config' });
  if (plan.git) {
    const patches = JOB_FILES.patchesDir;
    files.push(
      { file: `${patches}${PATCH_FILES.commit}`, body: `${plan.git.commit ?? ''}\n`, what: 'source state' },
      { file: `${patches}${PATCH_FILES.status}`, body: plan.git.status, what: 'source state' },
      { file: `${patches}${PATCH_FILES.diff}`, body: plan.git.diff, what: 'source state' },
      { file: `${patches}${PATCH_FILES.diffCached}`, body: plan.git.diffCached, what: 'source state' },
      { file: `${patches}${PATCH_FILES.untracked}`, body: plan.git.untracked, what: 'source state' },
    );
  }
  return files;
}

/** Everything a plan's request part is built from. */
interface PlanParts {
  readonly input: SubmitInput;
  readonly configs: JobConfigs;
  readonly job: ResolvedJob;
  readonly artifacts: Artifacts;
  readonly template: ResolvedTemplate | undefined;
  readonly settings: ResolvedSettings;
  readonly placeholders: Placeholders;
  readonly submittedAt: Date;
}

/** The job's name, tags and description, and the CreateTrainingJob request within SageMaker's limits. */
function planRequest(parts: PlanParts) {
  const { input, configs, job, artifacts, template, settings, placeholders, submittedAt } = parts;
  const { config, evalConfig } = configs;
  const launcher = config.value.launcher ?? {};
  const jobNamePrefix = settings.values.jobNamePrefix!;
  firstJobName(jobNamePrefix, submittedAt); // the prefix makes valid names, with any suffix
  const jobName = jobNameCandidate(jobNamePrefix, submittedAt, input.nameIndex ?? 1);
  const runName = config.value.run?.name ?? path.basename(configs.configAbs).replace(/\.ya?ml$/i, '');
  const configRepoRoot = configs.configGitRoot ?? artifacts.sourceRoot;
  const configDisplayPath =
    path.relative(configRepoRoot, configs.configAbs) || path.basename(configs.configAbs);
  const baseDescription = input.description ?? launcher.description ?? '';
  const description = input.configText
    ? `${baseDescription}${baseDescription ? ' ' : ''}[${input.configText.label}]`
    : baseDescription;
  const { packed, git } = artifacts;
  const tags: Record<string, string> = {
    'rlvr:config': configDisplayPath,
    'rlvr:run-name': runName,
    'rlvr:user': os.userInfo().username,
    'rlvr:source-sha256': packed.sha256,
    ...(git?.commit ? { 'rlvr:git-commit': `${git.commit}${git.dirty ? '+dirty' : ''}` } : {}),
    ...(template ? { 'rlvr:template': template.name } : {}),
    ...input.extraTags,
  };
  const requestSettings = {
    ...requestSettingsOf(settings.values, job.layout, placeholders),
    region: placeholders.value('region', settings.values.region),
    repositoryUri: placeholders.value('repositoryUri', settings.values.repositoryUri),
  };
  const requestInput: Omit<RequestInput, 'jobName'> = {
    settings: requestSettings,
    image: artifacts.image.uri,
    options: plainOptions(job.options),
    inputs: job.inputs,
    sourceSha256: packed.sha256,
    submitId: randomUUID(),
    runName,
    hasEvalConfig: evalConfig !== undefined,
    codeEval: Boolean(evalConfig && evalTasks(evalConfig.value).some((t) => CODE_BENCHMARK_PATTERN.test(t))),
    tags,
    // A local run mounts a Docker volume itself; only a SageMaker job's request carries the channel.
    ...(job.sharedFileSystem && !input.local
      ? {
          sharedFileSystem: {
            channel: job.sharedFileSystem.channel,
            fileSystemId: job.sharedFileSystem.fileSystemId,
            directoryPath: job.sharedFileSystem.directoryPath,
            networkIsolation: job.sharedFileSystem.networkIsolation.value,
          },
        }
      : {}),
  };
  const request = buildCreateTrainingJobRequest({ ...requestInput, jobName });
  const limitProblems = checkRequestLimits(request);
  if (limitProblems.length > 0)
    throw new ProblemsError('The request exceeds SageMaker limits', limitProblems);
  return {
    jobName,
    configRepoRoot,
    configDisplayPath,
    description,
    tags,
    requestSettings,
    requestInput,
    request,
  };
}

/** Pre-flight: every object the job reads exists. Failures are bad input (exit 2). */
async function preflightPlan(
  input: SubmitInput,
  session: SubmitConnection,
  job: ResolvedJob,
  configs: JobConfigs,
  placeholders: Placeholders,
): Promise<{
  report: PreflightReport;
  warnings: readonly Problem[];
  acknowledged: readonly MissingOrderIds[];
}> {
  const notRun = (reason: string) => ({
    report: { ran: false, reason, checks: [] },
    warnings: [],
    acknowledged: [],
  });
  if (input.local) return notRun('local run: inputs are bound from local folders or fetched by the run');
  const aws = session.aws;
  if (!aws) return notRun(session.note ?? 'AWS not available');
  if (placeholders.names.includes('bucket')) return notRun('the bucket is not resolved');
  input.listener?.({
    type: 'step',
    message: 'pre-flight: checking the model, datasets and order files in S3',
  });
  const caches = job.runtime.contract.datasetCaches;
  const curriculum = {
    loaders: configs.trainer.profile.loaders,
    allowMissingOrderIds: input.allowMissingOrderIds,
    cacheDir: defaultCacheDir(input.env ?? process.env),
  };
  const key = JSON.stringify([job.inputs, caches, Boolean(input.allowMissingOrderIds)]);
  try {
    const result = await cached(input.cache?.preflights, key, () =>
      runPreflight(
        aws.s3,
        job.inputs,
        configs.config.file,
        new Map(caches.map((d) => [d.channel, d])),
        curriculum,
      ),
    );
    if (result.problems.length > 0)
      throw new ProblemsError('Pre-flight failed: the job would not find its inputs', result.problems);
    return {
      report: { ran: true, checks: result.checks },
      warnings: result.warnings,
      acknowledged: result.acknowledged,
    };
  } catch (err) {
    if (err instanceof ProblemsError) throw err;
    if (!session.dryRun) {
      throw new RuntimeFailure(
        `Could not run the pre-flight checks in S3: ${describeAwsError(err)}`,
        'AwsFailure',
        {
          cause: err,
        },
      );
    }
    return notRun(`${classifyAwsError(err)}: ${describeAwsError(err)}`);
  }
}

function idleGpuWarnings(options: ResolvedJobOptions): Problem[] {
  const idle = idleGpus(options);
  if (idle.length === 0) return [];
  return [
    {
      where: 'GPU split',
      message: `GPU ${idle.join(', ')} of ${options.instanceType.value} would sit idle (train ${options.trainGpus.value.join(',')}, eval ${options.evalGpus.value.join(',') || 'none'})`,
      hint: 'Every idle GPU is paid for: give it to training or evaluation.',
    },
  ];
}

/** Hosts × the per-host split. Pure. */
export function planCluster(
  options: Pick<ResolvedJobOptions, 'instanceType' | 'instanceCount' | 'trainGpus' | 'evalGpus'>,
): ClusterPlan {
  const hosts = options.instanceCount.value;
  const gpusPerHost = gpuCount(options.instanceType.value);
  const evalPerHost = options.evalGpus.value.length;
  return {
    hosts,
    gpusPerHost,
    totalGpus: gpusPerHost === undefined ? undefined : hosts * gpusPerHost,
    trainGpus: hosts * options.trainGpus.value.length,
    evalGpus: hosts * evalPerHost,
    idleEvalGpus: (hosts - 1) * evalPerHost,
  };
}

/**
 * Hosts of a job on an EFA instance type reach each other over EFA only when the image has the EFA stack
 * (libfabric, the aws-ofi-nccl plugin): without it NCCL falls back to TCP sockets between hosts, at a
 * fraction of the interconnect the instances are paid for. Our builds record it in the `rlvr.efa` label.
 */
function efaWarnings(options: ResolvedJobOptions, image: Artifacts['image']): Problem[] {
  const type = options.instanceType.value;
  if (options.instanceCount.value <= 1 || !hasEfa(type)) return [];
  const efa = image.labels?.[EFA_LABEL];
  if (efa !== undefined && efa !== 'none') return [];
  return [
    problemAt(
      options.instanceCount.source,
      'instance_count',
      `${options.instanceCount.value} × ${type} talk over EFA, but ${efa === 'none' ? `the image has no EFA stack (label ${EFA_LABEL}=none)` : `whether the image has the EFA stack cannot be told (no ${EFA_LABEL} label could be read)`}: NCCL between the hosts would fall back to TCP sockets`,
      'Run an image built by rlvr image build|push (its EFA_INSTALLER_VERSION step is on by default) or one on an AWS Deep Learning Container base.',
    ),
  ];
}

/**
 * A job without network evaluates only what the image holds data for: lm_eval would fail to load a
 * task's dataset (or score ifeval without NLTK's punkt_tab) after the checkpoints it waited for. An
 * image whose labels say what it holds is checked (exit 2); one that does not say is warned about.
 */
function offlineEvalData(configs: JobConfigs, job: ResolvedJob, artifacts: Artifacts): Problem[] {
  const { evalConfig } = configs;
  if (!evalConfig || !job.runtime.contract.eval || !job.options.networkIsolation.value) return [];
  // OLMES (its own venv) names its tasks its own way; lm_eval's task data is what is checked here.
  if ((evalConfig.value as unknown as YamlMap).harness === 'olmes') return [];
  const benchmarks = evalBenchmarks(evalConfig.value as unknown as YamlMap);
  const gaps = offlineDataGaps(
    artifacts.image.labels,
    benchmarks.map((b) => b.task),
  );
  if (gaps === undefined) {
    return [
      {
        where: 'image',
        message: `whether the image holds the data of ${[...new Set(benchmarks.map((b) => b.task))].join(', ')} cannot be told (no ${LM_EVAL_TASKS_LABEL} label): with no network, the eval watcher fails on a task whose data it lacks`,
        hint: 'Run an image built by rlvr image build|push (it caches the data of LM_EVAL_TASKS).',
      },
    ];
  }
  const problems = gaps.map((g) =>
    evalConfig.file.problem(
      benchmarks.find((b) => b.task === g.task)!.at as (string | number)[],
      `${g.task}: the image does not hold ${g.missing}, and the job has no network to fetch it`,
      `Build the image with ${g.fix}, or leave the task out.`,
    ),
  );
  if (problems.length)
    throw new ProblemsError('The eval watcher would not find its data in the image', problems);
  return [];
}

/** The eval watcher runs on the head only: the eval GPUs of the other hosts are paid for and idle. */
function workerEvalWarnings(options: ResolvedJobOptions, cluster: ClusterPlan): Problem[] {
  if (cluster.hosts <= 1 || cluster.idleEvalGpus === 0) return [];
  const others = cluster.hosts - 1;
  return [
    problemAt(
      options.evalGpus.source,
      'eval_gpus',
      `${cluster.hosts} instances: the eval watcher runs on the head only, so the ${cluster.idleEvalGpus} eval GPUs on the ${others} other host${others > 1 ? 's' : ''} (eval_gpus ${options.evalGpus.value.join(',')} on each) sit idle, paid`,
      'Set aside fewer eval GPUs (every host gets the same split), or submit without the eval config and evaluate the checkpoints after training with a batch eval.',
    ),
  ];
}

/** The objects a submit writes, in order: the source (once per hash), the reservation, the job's files. */
function planUploads(
  layout: S3Layout,
  jobName: string,
  packed: PackedSource,
  files: Parameters<typeof jobUploads>[0],
): Upload[] {
  return [
    {
      key: layout.sourceKey(packed.sha256),
      bytes: packed.gzip.length,
      what: "the trainer's source",
      onlyIfAbsent: true,
    },
    { key: layout.jobKey(jobName, JOB_FILES.reservation), bytes: 0, what: 'job name reservation' },
    ...jobUploads(files).map((u) => ({
      key: layout.jobKey(jobName, u.file),
      bytes: Buffer.byteLength(u.body),
      what: u.what,
    })),
  ];
}

/** On-demand price per hour and for the whole max runtime, with what the figure assumes. */
function estimateCost(
  options: ResolvedJobOptions,
  region: string,
  regionUnresolved: boolean,
): SubmitPlan['estimate'] {
  const price = hourlyPrice(options.instanceType.value, region);
  if (!price) return undefined;
  const instances = options.instanceCount.value;
  const perHour = price.perHour * instances;
  const note = [
    price.approximateRegion
      ? regionUnresolved
        ? 'us-west-2 prices: region not resolved'
        : `us-west-2 prices (none listed for ${region})`
      : undefined,
    options.spot.value ? 'on-demand price; spot bills less' : undefined,
  ]
    .filter(Boolean)
    .join('; ');
  return {
    perHour,
    perInstanceHour: price.perHour,
    instances,
    maxRuntimeCost: (perHour * options.maxRuntimeSeconds.value) / 3600,
    note: note || undefined,
  };
}

function sourceSummary(artifacts: Artifacts, layout: S3Layout): SubmitPlan['source'] {
  const { staged, packed } = artifacts;
  return {
    root: staged.root,
    isGit: staged.isGit,
    fileCount: packed.fileCount,
    bytes: staged.totalBytes,
    sha256: packed.sha256,
    key: layout.sourceKey(packed.sha256),
    excluded: staged.excluded,
    withheld: staged.withheld,
  };
}

/** The images the submit names (--image, launcher.image) must be image references: before any upload. */
function checkImageReferences(input: SubmitInput, config: LoadedConfig<TrainingConfig>): void {
  const flagProblem = input.image === undefined ? undefined : imageReferenceProblem(input.image);
  if (flagProblem) throw new UserError(`--image ${JSON.stringify(input.image)}: ${flagProblem}.`, 'BadImage');
  const fromConfig = config.value.launcher?.image;
  const configProblem = fromConfig === undefined ? undefined : imageReferenceProblem(fromConfig);
  if (configProblem) {
    throw new ProblemsError(`${config.displayPath}: launcher.image is not an image reference`, [
      config.file.problem(['launcher', 'image'], configProblem, 'Name the image the job runs in.'),
    ]);
  }
}

/**
 * The job log: its path and, since a submit writes it only once the job is created, whether it can be
 * written (checked as soon as the path is known: a submit refuses, a dry run warns, a local run has none).
 */
class JobLogCheck {
  private checked: string | undefined;
  warnings: Problem[] = [];

  constructor(
    private readonly input: SubmitInput,
    private readonly cwd: string,
  ) {}

  /** The path, given the repository root (undefined: not known yet, which only a default path needs). */
  path(repoRoot: string | undefined): string | undefined {
    const env = this.input.env ?? process.env;
    if (repoRoot === undefined && !this.input.jobLog && !env[CLI_ENV.jobLog]) return undefined;
    const file = resolveJobLogPath({
      explicit: this.input.jobLog,
      env,
      cwd: this.cwd,
      repoRoot: repoRoot ?? this.cwd,
    });
    if (!this.input.local && this.checked !== file) this.check(file);
    return file;
  }

  private check(file: string): void {
    this.checked = file;
    const problem = jobLogPathProblem(file);
    if (!problem) return;
    const given =
      this.input.jobLog !== undefined
        ? '--job-log'
        : (this.input.env ?? process.env)[CLI_ENV.jobLog]
          ? CLI_ENV.jobLog
          : 'job log';
    const message = `the job log ${file} cannot be written: ${problem}`;
    const hint = `Name a file in a folder you can write with --job-log <file> (or ${CLI_ENV.jobLog}).`;
    if (!this.input.dryRun) throw new UserError(`${given}: ${message}. ${hint}`, 'BadJobLog');
    this.warnings = [{ where: given, message: `${message}; a submit would stop here`, hint }];
  }
}

/** Every warning of the plan, in the order the steps found them. */
function planWarnings(
  configs: JobConfigs,
  artifacts: Artifacts,
  job: ResolvedJob,
  preflight: readonly Problem[],
  jobLog: readonly Problem[],
  cluster: ClusterPlan,
): Problem[] {
  return [
    ...jobLog,
    ...configs.config.warnings,
    ...(configs.evalConfig?.warnings ?? []),
    ...artifacts.warnings,
    ...job.warnings,
    ...(artifacts.imageNote ? [{ where: 'image', message: artifacts.imageNote }] : []),
    ...preflight,
    ...idleGpuWarnings(job.options),
    ...workerEvalWarnings(job.options, cluster),
    ...efaWarnings(job.options, artifacts.image),
    ...offlineEvalData(configs, job, artifacts),
  ];
}

/**
 * The forecast from the runs the plan can see; a max runtime it says cannot cover the job stops a submit
 * (exit 2) unless `launcher.allow` names the rule with a reason. A local run has no max runtime to judge.
 */
async function planForecast(
  input: SubmitInput,
  configs: JobConfigs,
  job: ResolvedJob,
  estimate: SubmitPlan['estimate'],
  cwd: string,
  session: SubmitConnection,
  placeholders: Placeholders,
): Promise<PlannedForecast> {
  const allow = configs.config.value.launcher?.allow as Record<string, unknown> | undefined;
  const reason = allow?.[runtimeForecast.id];
  const shape = plannedShape({
    config: configs.config.value as unknown as YamlMap,
    trainer: configs.trainer,
    options: job.options,
    inputs: job.inputs,
    local: input.local,
  });
  const planned = forecastStep({
    local: input.local,
    sagemaker: await sageMakerPastRuns(input, session, job, shape, placeholders),
    config: configs.config.value as unknown as YamlMap,
    trainer: configs.trainer,
    options: job.options,
    inputs: job.inputs,
    perHour: estimate?.perHour,
    hasEvalConfig: configs.evalConfig !== undefined,
    resultsDir: input.resultsDir,
    cwd,
    allowReason: typeof reason === 'string' ? reason : undefined,
  });
  if (planned.errors.length > 0 && !input.local)
    throw new ProblemsError('The max runtime would stop the job before its last step', planned.errors);
  return planned;
}

/**
 * SageMaker's ended jobs as past runs (cached per job: a plan reads only the jobs new since the last);
 * when they cannot be read the forecast goes on with the results folder, and says why.
 */
async function sageMakerPastRuns(
  input: SubmitInput,
  session: SubmitConnection,
  job: ResolvedJob,
  shape: RunShape,
  placeholders: Placeholders,
): Promise<SageMakerPastRuns> {
  if (input.local) return { note: 'a local run' };
  const aws = session.aws;
  if (!aws) return { note: session.note ?? 'AWS not available' };
  if (placeholders.names.includes('bucket')) return { note: 'the bucket is not resolved' };
  return cached(input.cache?.pastRuns, JSON.stringify(shape), () =>
    sageMakerRunsOrWhy({
      s3: aws.s3,
      sagemaker: aws.sagemaker,
      layout: job.layout,
      jobNamePrefix: session.settings.values.jobNamePrefix!,
      shape,
      cacheDir: rlvrCacheDir('runs', input.env ?? process.env),
    }),
  );
}

/**
 * Validates everything and computes the exact request, without creating anything, in four steps:
 * the configs, the job they describe (resolveJob, pure), what it ships (prepareArtifacts) and the
 * pre-flight. The caller owns the session; a dry-run with no AWS access still gets a full plan:
 * unresolved settings become marked placeholders and the pre-flight is reported as not run.
 */
export async function planSubmit(input: SubmitInput, session: SubmitSession): Promise<SubmitPlan> {
  const cwd = input.cwd ?? process.cwd();
  const submittedAt = (input.now ?? (() => new Date()))();
  const trainerCommand =
    typeof input.options.trainer_command === 'string' ? input.options.trainer_command : undefined;
  const configs = await loadJobConfigs({ ...input, trainerCommand }, cwd);
  const { config, evalConfig } = configs;
  checkImageReferences(input, config);
  const jobLog = new JobLogCheck(input, cwd);
  jobLog.path(configs.configGitRoot); // before an image is built or pushed, when it can be told
  const aws = await session.connect(); // after the configs: a broken config is reported first
  const template = await resolveTemplate(configs, input.template, aws);
  const placeholders = new Placeholders();
  const job = resolveJob(configs, input.options, template, aws.settings, placeholders, {
    local: input.local,
  });
  const estimate = estimateCost(
    job.options,
    placeholders.value('region', aws.settings.values.region),
    placeholders.names.includes('region'),
  );
  // Before the image is built or pushed: a max runtime that cannot cover the job is bad input.
  const forecast = await planForecast(input, configs, job, estimate, cwd, aws, placeholders);
  const artifacts = await prepareArtifacts({
    ...input,
    configs,
    inputs: job.inputs,
    options: job.options,
    session: aws,
    placeholders,
  });
  const settings = aws.settings;
  const planned = planRequest({
    input,
    configs,
    job,
    artifacts,
    template,
    settings,
    placeholders,
    submittedAt,
  });
  const preflight = await preflightPlan(input, aws, job, configs, placeholders);
  const resolvedConfigYaml = `# Resolved by rlvr submit from ${planned.configDisplayPath}: inputs point at the job's channels.\n${stringifyForTrainer(
    resolveConfigForJob(config.value, job.inputs),
  )}`;
  const acknowledged =
    preflight.acknowledged.length > 0 ? { missingOrderIds: preflight.acknowledged } : undefined;
  const shared = job.sharedFileSystem;
  const contract: JobContract = {
    ...job.runtime.contract,
    importRoots: artifacts.importRoots.roots.map((r) => r.path),
    ...(job.options.holdPlatformEnv.value
      ? { holdPlatformEnv: { against: artifacts.platformEnv.held.map((h) => describeWrite(h.write)) } }
      : {}),
    ...(acknowledged ? { acknowledged } : {}),
    forecast: recordOf(forecast.forecast),
    // The isolation a job mounting the shared file system runs with, and why (run.json keeps it).
    ...(shared
      ? {
          networkIsolation: {
            value: shared.networkIsolation.value,
            reason: shared.networkIsolation.value
              ? `on: ${shared.networkIsolation.source}`
              : `off: ${shared.networkIsolation.source} (a job mounting the shared file system)`,
          },
        }
      : {}),
  };
  const contractJson = `${JSON.stringify(contract, null, 2)}\n`;
  const { packed, git } = artifacts;
  const cluster = planCluster(job.options);
  return {
    ...planned,
    config,
    trainer: configs.trainer,
    evalConfig,
    settings,
    layout: job.layout,
    placeholders: placeholders.names,
    template: template && { name: template.name, from: template.from },
    options: job.options,
    image: artifacts.image,
    inputs: job.inputs,
    source: sourceSummary(artifacts, job.layout),
    packed,
    git,
    resolvedConfigYaml,
    contractJson,
    runtimeNotes: [artifacts.importRoots.note, ...job.runtime.notes],
    submitId: planned.requestInput.submitId,
    uploads: planUploads(job.layout, planned.jobName, packed, {
      config,
      evalConfig,
      resolvedConfigYaml,
      contractJson,
      git,
    }),
    preflight: preflight.report,
    missingOrderIds: preflight.acknowledged,
    estimate,
    forecast,
    platformEnv: artifacts.platformEnv,
    cluster,
    ...(shared ? { sharedFileSystem: shared } : {}),
    jobLogPath: jobLog.path(planned.configRepoRoot)!,
    warnings: [
      ...planWarnings(configs, artifacts, job, preflight.warnings, jobLog.warnings, cluster),
      ...forecast.warnings,
    ],
    submittedAt,
  };
}
