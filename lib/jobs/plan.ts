import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import {
  CODE_BENCHMARK_PATTERN,
  evalTasks,
  jobTemplateSchema,
  loadEvalConfig,
  stringifyForTrainer,
  loadTrainingConfig,
  loadTrainingConfigText,
  type EvalConfig,
  type JobTemplate,
  type LoadedConfig,
  type TrainingConfig,
} from '../config';
import {
  classifyAwsError,
  createAwsClients,
  describeAwsError,
  mayHaveCredentials,
  sdkDefaultRegion,
  type AwsClients,
  type AwsClientOptions,
} from '../aws';
import { ProblemsError, RuntimeFailure, UserError, type Problem } from '../errors';
import {
  JOB_FILES,
  jobNameCandidate,
  PATCH_FILES,
  S3Layout,
  SETTINGS_PARAMETER_NAME,
  templateParameterName,
} from '../layout';
import {
  mergeSettings,
  requireSettings,
  resolveSettings,
  validateSettings,
  type ResolvedSettings,
  type SettingFlags,
} from '../settings';
import {
  captureGitState,
  packSource,
  stageSource,
  type GitState,
  type PackedSource,
  type StagedSource,
} from '../source';
import { planInputs, resolveConfigForJob, type InputPlan } from './inputs';
import { checkRequestLimits } from './limits';
import { resolveJobLogPath } from './job-log';
import { firstJobName } from './job-name';
import {
  idleGpus,
  resolveJobOptions,
  type JobOptionFlags,
  type ResolvedJobOptions,
  type JobOptions,
} from './options';
import { runPreflight, type PreflightCheck, type PreflightResult } from './preflight';
import { checkReferencedFiles } from './references';
import { trainerSourceOf } from './trainer-source';
import { checkRoleGpus, checkTrainerScript, expectsCheckpoints, planTrainerRuntime } from './trainer-checks';
import type { TrainerSelection } from '../trainers';
import { buildCreateTrainingJobRequest, type RequestInput, type RequestSettings } from './request';
import { hourlyPrice } from './prices';
import { BUILT_IN_TEMPLATES } from './templates';
import type { ProgressOf } from '../progress';

/** Progress events of a submit (lib/progress.ts); the CLI decides how to show them. */
export type SubmitEvent = ProgressOf<'step' | 'file' | 'retry'>;
export type SubmitListener = (event: SubmitEvent) => void;

/**
 * Work a sweep's plans share: every combination stages the same source and reads the same inputs, so
 * each is packed and checked once (keyed by what it depends on).
 */
export interface PlanCache {
  readonly sources: Map<
    string,
    Promise<{ staged: StagedSource; packed: PackedSource; git: GitState | undefined }>
  >;
  readonly preflights: Map<string, Promise<PreflightResult>>;
}

export function newPlanCache(): PlanCache {
  return { sources: new Map(), preflights: new Map() };
}

function cached<T>(
  cache: Map<string, Promise<T>> | undefined,
  key: string,
  make: () => Promise<T>,
): Promise<T> {
  if (!cache) return make();
  let value = cache.get(key);
  if (!value) cache.set(key, (value = make()));
  return value;
}

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
  readonly settings: SettingFlags;
  readonly dryRun: boolean;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly now?: () => Date;
  /**
   * A sweep's n-th job (1-based): its provisional name is the n-th candidate of the sweep's second, as
   * the submit claims them in order (a name taken by then moves on to the next free `-N`).
   */
  readonly nameIndex?: number;
  /** Test hook: configure the SDK clients (fault injection). */
  readonly configureClients?: AwsClientOptions['configure'];
  readonly listener?: SubmitListener;
  /** Shared by the plans of one sweep. */
  readonly cache?: PlanCache;
  /** A `--local` run: inputs come from local folders, so S3 is not checked. */
  readonly local?: boolean;
  /** Finds (or builds and pushes) the image when neither --image nor launcher.image names one. */
  readonly resolveImage?: ImageResolver;
}

export interface ImageResolution {
  /** `repository@sha256:…`; undefined when no pushed image matches the trainer's dependencies. */
  readonly uri?: string;
  /** Where the image came from, for the plan. */
  readonly source: string;
  /** Why there is no image, and what to do. */
  readonly note?: string;
}
export type ImageResolver = (request: {
  readonly trainerSrc: string;
  readonly repositoryUri: string | undefined;
  readonly aws: AwsClients | undefined;
  readonly dryRun: boolean;
}) => Promise<ImageResolution>;

export type PlaceholderName = 'bucket' | 'roleArn' | 'repositoryUri' | 'region' | 'image';
export const PLACEHOLDERS: Readonly<Record<PlaceholderName, string>> = {
  bucket: 'unresolved-bucket',
  roleArn: 'arn:aws:iam::000000000000:role/UNRESOLVED-execution-role',
  repositoryUri: '000000000000.dkr.ecr.unresolved.amazonaws.com/unresolved',
  region: 'unresolved-region',
  image: '000000000000.dkr.ecr.unresolved.amazonaws.com/unresolved:UNRESOLVED-image',
};

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
  readonly image: { readonly uri: string; readonly source: string };
  readonly inputs: InputPlan;
  readonly source: {
    readonly root: string;
    readonly isGit: boolean;
    readonly fileCount: number;
    readonly bytes: number;
    readonly sha256: string;
    readonly key: string;
    readonly excluded: readonly string[];
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
  /** On-demand estimate: per hour, and for the whole max runtime. */
  readonly estimate:
    { readonly perHour: number; readonly maxRuntimeCost: number; readonly note?: string } | undefined;
  readonly warnings: readonly Problem[];
  readonly jobLogPath: string;
  readonly configDisplayPath: string;
  readonly submittedAt: Date;
  /** Clients, when AWS was reachable (reused by the submit). */
  readonly aws: AwsClients | undefined;
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

/**
 * Validates everything and computes the exact request, without creating anything. A dry-run with no
 * AWS access still gets a full plan: unresolved settings become marked placeholders and the
 * pre-flight is reported as not run.
 */
export async function planSubmit(input: SubmitInput): Promise<SubmitPlan> {
  const cwd = input.cwd ?? process.cwd();
  const env = input.env ?? process.env;
  const emit = input.listener ?? (() => undefined);
  const submittedAt = (input.now ?? (() => new Date()))();

  // 1. Configs: every problem in a file at once, checked against the trainer that will run it (the
  // trainer repository may describe its trainers in its own profile file).
  const configAbs = path.resolve(cwd, input.configPath);
  const configDir = path.dirname(configAbs);
  const { configGitRoot, sourceRootFor, profiles } = await trainerSourceOf(configAbs, {
    cwd,
    trainerSrc: input.trainerSrc,
  });
  const loadOptions = {
    profiles,
    trainerCommand:
      typeof input.options.trainer_command === 'string' ? input.options.trainer_command : undefined,
    strict: input.strict,
  };
  const config = input.configText
    ? loadTrainingConfigText(
        input.configText.text,
        configAbs,
        `${input.configPath} [${input.configText.label}]`,
        loadOptions,
      )
    : loadTrainingConfig(configAbs, input.configPath, loadOptions);
  const trainer = config.trainer!;
  const launcher = config.value.launcher ?? {};
  let evalConfig: LoadedConfig<EvalConfig> | undefined;
  if (input.evalConfigPath) {
    evalConfig = loadEvalConfig(path.resolve(cwd, input.evalConfigPath), input.evalConfigPath);
  } else if (launcher.eval_config) {
    const abs = path.resolve(configDir, launcher.eval_config);
    evalConfig = loadEvalConfig(abs, path.relative(cwd, abs) || abs);
  }

  // 2. Settings: flags > environment > the stack's parameter.
  const region = mergeSettings(input.settings, env, undefined).values.region ?? (await sdkDefaultRegion());
  const awsPossible = input.dryRun ? region !== undefined && mayHaveCredentials(env) : true;
  let aws: AwsClients | undefined;
  let awsNote: string | undefined;
  if (!region) {
    awsNote = 'no region: set AWS_REGION or pass --region';
    if (!input.dryRun) throw new UserError(`No AWS region. Set AWS_REGION or pass --region.`, 'NoRegion');
  } else if (!awsPossible) {
    awsNote = 'no AWS credentials found';
  } else {
    aws = createAwsClients(
      {
        region,
        // A dry-run probes quickly and never hangs; a submit retries like any AWS tool.
        ...(input.dryRun ? { maxAttempts: 2, requestTimeoutMs: 5000 } : {}),
        configure: input.configureClients,
      },
      env,
    );
  }
  const failAws = (what: string, err: unknown): never => {
    throw new RuntimeFailure(`Could not ${what}: ${describeAwsError(err)}`, 'AwsFailure', { cause: err });
  };

  let settings: ResolvedSettings;
  const templateName = input.template ?? launcher.template;
  if (!region) {
    settings = mergeSettings(input.settings, env, undefined, awsNote);
  } else {
    try {
      settings = (await resolveSettings(input.settings, env, region, aws?.ssm)).settings;
    } catch (err) {
      if (err instanceof UserError) throw err;
      if (!input.dryRun) failAws(`read the settings parameter ${SETTINGS_PARAMETER_NAME}`, err);
      awsNote = describeAwsError(err);
      aws = undefined;
      settings = (await resolveSettings(input.settings, env, region, undefined)).settings;
    }
  }
  const settingProblems = validateSettings(settings);
  if (settingProblems.length > 0) throw new ProblemsError('Invalid launcher settings', settingProblems);
  if (!input.dryRun) requireSettings(settings);

  // 3. Template: published by the stack, built-ins until it is deployed.
  let template: { name: string; values: JobTemplate; from: 'parameter' | 'built-in' } | undefined;
  if (templateName) {
    let published: string | undefined;
    if (aws) {
      try {
        published = await aws.ssm.getParameter(templateParameterName(templateName));
      } catch (err) {
        if (!input.dryRun) failAws(`read the template ${templateName}`, err);
      }
    }
    if (published) {
      const parsed = jobTemplateSchema.safeParse(JSON.parse(published));
      if (!parsed.success) {
        throw new UserError(
          `The published template ${templateName} is invalid (${parsed.error.issues[0].message}); redeploy the infrastructure stack.`,
        );
      }
      template = { name: templateName, values: parsed.data, from: 'parameter' };
    } else if (BUILT_IN_TEMPLATES[templateName]) {
      template = { name: templateName, values: BUILT_IN_TEMPLATES[templateName], from: 'built-in' };
    } else {
      const known = Object.keys(BUILT_IN_TEMPLATES).join(', ');
      const problem: Problem = input.template
        ? {
            where: '--template',
            message: `no job template named "${templateName}"`,
            hint: `Known templates: ${known}.`,
          }
        : config.file.problem(
            ['launcher', 'template'],
            `no job template named "${templateName}"`,
            `Known templates: ${known}.`,
          );
      throw new ProblemsError('Unknown job template', [problem]);
    }
  }

  // 4. How the job runs, each value with where it came from.
  const resolved = resolveJobOptions({
    flags: input.options,
    launcher: config.value.launcher,
    configFile: config.file,
    template: template && { name: template.name, values: template.values },
    hasEvalConfig: evalConfig !== undefined,
    defaultTrainerCommand: {
      value: trainer.profile.command,
      note: `trainer ${trainer.profile.id}: ${trainer.reason}`,
    },
  });
  if (!resolved.options) throw new ProblemsError('The job cannot run as configured', resolved.problems);
  const options = resolved.options;
  const gpuCheck = checkRoleGpus(config, options);
  if (gpuCheck.problems.length > 0)
    throw new ProblemsError('The job cannot run as configured', gpuCheck.problems);

  // 5. Inputs the job reads from S3.
  const placeholders: PlaceholderName[] = [];
  const value = <K extends PlaceholderName>(name: K, v: string | undefined): string => {
    if (v !== undefined) return v;
    placeholders.push(name);
    return PLACEHOLDERS[name];
  };
  const bucket = value('bucket', settings.values.bucket);
  const layout = new S3Layout(bucket, settings.values.prefix);
  const planned = planInputs(config.value, config.file, layout, configDir, {
    networkIsolation: options.networkIsolation.value,
    loaders: trainer.profile.loaders,
  });
  if (!planned.inputs)
    throw new ProblemsError(`${config.displayPath}: inputs cannot be mapped to S3`, planned.problems);
  const inputs = planned.inputs;

  // 6. The trainer's source: staged, packed reproducibly, content-addressed.
  const sourceRoot = sourceRootFor(launcher.trainer_src);
  if (!sourceRoot) {
    throw new UserError(
      `${config.displayPath} is not inside a git repository, so the trainer's source is unknown. Pass --trainer-src DIR or set launcher.trainer_src.`,
      'NoTrainerSource',
    );
  }
  emit({ type: 'step', message: `staging the trainer's source from ${sourceRoot}` });
  const { staged, packed, git } = await cached(
    input.cache?.sources,
    JSON.stringify([sourceRoot, launcher.include ?? [], launcher.exclude ?? []]),
    async () => {
      const stagedSource = await stageSource({
        root: sourceRoot,
        include: launcher.include,
        exclude: launcher.exclude,
      });
      return {
        staged: stagedSource,
        packed: await packSource(stagedSource),
        git: stagedSource.isGit ? await captureGitState(sourceRoot) : undefined,
      };
    },
  );
  const referenceCheck = checkReferencedFiles(
    config.value as unknown as Record<string, unknown>,
    config.file,
    staged,
    [
      ...[inputs.model, ...inputs.otherModels].flatMap((m) => m.referencedAt),
      ...inputs.datasets.map((d) => d.referencedAt),
      ...inputs.orderFiles.map((o) => o.referencedAt),
    ],
  );
  if (referenceCheck.problems.length > 0) {
    throw new ProblemsError(
      'The config names files that would not travel with the job',
      referenceCheck.problems,
    );
  }
  const runtimePlan = planTrainerRuntime({
    config,
    evalConfig,
    profile: trainer.profile,
    options,
    inputs,
    expectCheckpoints: expectsCheckpoints(trainer.profile, config.value),
  });
  if (runtimePlan.problems.length > 0)
    throw new ProblemsError('The job cannot run as configured', runtimePlan.problems);
  const scriptProblem = checkTrainerScript(options.trainerCommand, staged, config.file);
  if (scriptProblem)
    throw new ProblemsError('The trainer command names a script the job would not have', [scriptProblem]);

  // 7. Image: as given, else the image pipeline's build for the trainer's dependencies, pinned by digest.
  let pipeline: ImageResolution | undefined;
  if (!input.image && !launcher.image && input.resolveImage) {
    pipeline = await input.resolveImage({
      trainerSrc: sourceRoot,
      repositoryUri: settings.values.repositoryUri,
      aws,
      dryRun: input.dryRun,
    });
  }
  const imageUri = input.image ?? launcher.image ?? pipeline?.uri;
  if (!imageUri && !input.dryRun) {
    throw new UserError(
      pipeline?.note ??
        `No training image. Pass --image <repository-uri>@sha256:… (or :tag), or set launcher.image in ${config.displayPath}.`,
      'NoImage',
    );
  }
  const image = {
    uri: value('image', imageUri),
    source: input.image
      ? 'flag --image'
      : launcher.image
        ? 'config launcher.image'
        : pipeline?.uri
          ? pipeline.source
          : 'unresolved',
  };

  // 8. The request.
  const jobNamePrefix = settings.values.jobNamePrefix!;
  const runName = config.value.run?.name ?? path.basename(configAbs).replace(/\.ya?ml$/i, '');
  firstJobName(jobNamePrefix, submittedAt); // the prefix makes valid names, with any suffix
  const jobName = jobNameCandidate(jobNamePrefix, submittedAt, input.nameIndex ?? 1);
  const submitId = randomUUID();
  const configRepoRoot = configGitRoot ?? sourceRoot;
  const configDisplayPath = path.relative(configRepoRoot, configAbs) || path.basename(configAbs);
  const baseDescription = input.description ?? launcher.description ?? '';
  const description = input.configText
    ? `${baseDescription}${baseDescription ? ' ' : ''}[${input.configText.label}]`
    : baseDescription;
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
    bucket,
    prefix: layout.root,
    roleArn: value('roleArn', settings.values.roleArn),
    region: value('region', settings.values.region),
    repositoryUri: value('repositoryUri', settings.values.repositoryUri),
    subnets: settings.values.subnets,
    securityGroups: settings.values.securityGroups,
    kmsKeyId: settings.values.kmsKeyId,
  };
  const codeEval = Boolean(
    evalConfig && evalTasks(evalConfig.value).some((t) => CODE_BENCHMARK_PATTERN.test(t)),
  );
  const requestInput: Omit<RequestInput, 'jobName'> = {
    settings: requestSettings,
    image: image.uri,
    options: plainOptions(options),
    inputs,
    sourceSha256: packed.sha256,
    submitId,
    runName,
    hasEvalConfig: evalConfig !== undefined,
    codeEval,
    tags,
  };
  const request = buildCreateTrainingJobRequest({ ...requestInput, jobName });
  const limitProblems = checkRequestLimits(request);
  if (limitProblems.length > 0)
    throw new ProblemsError('The request exceeds SageMaker limits', limitProblems);

  const resolvedConfigYaml = `# Resolved by rlvr submit from ${configDisplayPath}: inputs point at the job's channels.\n${stringifyForTrainer(
    resolveConfigForJob(config.value, inputs),
  )}`;

  // 9. Pre-flight: every object the job reads exists. Failures are bad input (exit 2).
  let preflight: PreflightReport = { ran: false, reason: awsNote ?? 'AWS not available', checks: [] };
  const warnings: Problem[] = [
    ...config.warnings,
    ...(evalConfig?.warnings ?? []),
    ...referenceCheck.warnings,
    ...planned.warnings,
    ...gpuCheck.warnings,
    ...runtimePlan.warnings,
    ...(pipeline?.note ? [{ where: 'image', message: pipeline.note }] : []),
  ];
  if (input.local) {
    preflight = {
      ran: false,
      reason: 'local run: inputs are bound from local folders or fetched by the run',
      checks: [],
    };
  } else if (aws && placeholders.includes('bucket')) {
    preflight = { ran: false, reason: 'the bucket is not resolved', checks: [] };
  } else if (aws) {
    emit({ type: 'step', message: 'pre-flight: checking the model, datasets and order files in S3' });
    try {
      const result = await cached(
        input.cache?.preflights,
        JSON.stringify([inputs, runtimePlan.contract.datasetCaches]),
        () =>
          runPreflight(
            aws!.s3,
            inputs,
            config.file,
            new Map(runtimePlan.contract.datasetCaches.map((d) => [d.channel, d])),
          ),
      );
      if (result.problems.length > 0)
        throw new ProblemsError('Pre-flight failed: the job would not find its inputs', result.problems);
      warnings.push(...result.warnings);
      preflight = { ran: true, checks: result.checks };
    } catch (err) {
      if (err instanceof ProblemsError) throw err;
      const kind = classifyAwsError(err);
      if (!input.dryRun) failAws('run the pre-flight checks in S3', err);
      preflight = { ran: false, reason: `${kind}: ${describeAwsError(err)}`, checks: [] };
    }
  }
  const idle = idleGpus(options);
  if (idle.length > 0) {
    warnings.push({
      where: 'GPU split',
      message: `GPU ${idle.join(', ')} of ${options.instanceType.value} would sit idle (train ${options.trainGpus.value.join(',')}, eval ${options.evalGpus.value.join(',') || 'none'})`,
      hint: 'Every idle GPU is paid for: give it to training or evaluation.',
    });
  }

  const jobLogPath = resolveJobLogPath({ explicit: input.jobLog, env, cwd, repoRoot: configRepoRoot });

  const contractJson = `${JSON.stringify(runtimePlan.contract, null, 2)}\n`;
  const base = {
    config,
    evalConfig,
    resolvedConfigYaml,
    contractJson,
    git,
  };
  const uploads: Upload[] = [
    {
      key: layout.sourceKey(packed.sha256),
      bytes: packed.gzip.length,
      what: "the trainer's source",
      onlyIfAbsent: true,
    },
    { key: layout.jobKey(jobName, JOB_FILES.reservation), bytes: 0, what: 'job name reservation' },
    ...jobUploads(base).map((u) => ({
      key: layout.jobKey(jobName, u.file),
      bytes: Buffer.byteLength(u.body),
      what: u.what,
    })),
  ];

  const price = hourlyPrice(options.instanceType.value, requestSettings.region);
  const estimate = price && {
    perHour: price.perHour * options.instanceCount.value,
    maxRuntimeCost: (price.perHour * options.instanceCount.value * options.maxRuntimeSeconds.value) / 3600,
    note:
      [
        price.approximateRegion
          ? placeholders.includes('region')
            ? 'us-west-2 prices: region not resolved'
            : `us-west-2 prices (none listed for ${requestSettings.region})`
          : undefined,
        options.spot.value ? 'on-demand price; spot bills less' : undefined,
      ]
        .filter(Boolean)
        .join('; ') || undefined,
  };

  return {
    jobName,
    config,
    trainer,
    evalConfig,
    settings,
    requestSettings,
    layout,
    placeholders,
    template: template && { name: template.name, from: template.from },
    options,
    image,
    inputs,
    source: {
      root: staged.root,
      isGit: staged.isGit,
      fileCount: packed.fileCount,
      bytes: staged.totalBytes,
      sha256: packed.sha256,
      key: layout.sourceKey(packed.sha256),
      excluded: staged.excluded,
    },
    packed,
    git,
    resolvedConfigYaml,
    contractJson,
    runtimeNotes: runtimePlan.notes,
    description,
    submitId,
    tags,
    uploads,
    requestInput,
    request,
    preflight,
    estimate,
    warnings,
    jobLogPath,
    configDisplayPath,
    submittedAt,
    aws,
  };
}
