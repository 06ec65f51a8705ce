/**
 * `rlvr rerun <job>`: the job submitted again exactly as it ran — its request (the same image by digest,
 * the same source archive already in S3, instance type and count, runtime options, environment, eval
 * config) and its files under `jobs/<job>/` — under a new name, tagged with the job it reruns. `--set`
 * changes keys of the config the trainer reads. Nothing is re-packed from today's checkout; what the job
 * read is checked to still exist before anything is written, and the submit is the one path every job
 * takes (lib/submission submitJob: name claim, files, create, log row, clean-up).
 */
import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import { parse as parseYaml } from 'yaml';
import { requireLayout, type JobContext } from '../aws';
import {
  batchOf,
  forecastReport,
  maxStepsOf,
  readShape,
  resumeStepOf,
  recordOf,
  runtimeVerdict,
  sageMakerRunsOrWhy,
  type ForecastReport,
} from '../forecast';
import { costOf } from '../job-options';
import {
  BUILT_IN_PROFILES,
  buildJobContract,
  isMap,
  selectTrainer,
  valueAtPath,
  type TrainerProfile,
  type YamlMap,
} from '../trainers';
import {
  loaderUses,
  loadTrainerProfiles,
  loadTrainingConfigText,
  mergeProfiles,
  roleGpuNeeds,
  stringifyForTrainer,
  type TrainingConfig,
} from '../config';
import { isObject } from '../util';
import { ProblemsError, UserError, type Problem } from '../errors';
import { cachedCredentials, ecrCredentials, parseRepositoryUri, remoteDigest } from '../image';
import {
  CHANNELS,
  JOB_ENV,
  JOB_FILES,
  jobNameCandidate,
  jobNamePrefixOf,
  PASSK_RESUME_CHANNEL,
  parseS3Uri,
  type S3Layout,
} from '../layout';
import { kindOfEnvironment, PASSK_KIND } from '../job-kinds';
import { PASSK_DIR } from '../passk-records';
import {
  s3Channel,
  sanitizeTagValue,
  submitJob,
  type JobSubmission,
  type SubmitListener,
  type SubmittedJob,
} from '../submission';
import {
  applyOverrides,
  overrideLiteral,
  parseSetFlag,
  type ConfigOverride,
  type OverrideChange,
} from './config-overrides';
import { readJobFile, readJobRecord, type JobRecord } from './job-record';
import { RERUN_OF_TAG, TAGS } from './rerun-tag';

/** What a rerun depends on, and whether it is still there. */
export interface RerunCheck {
  /** `image`, `source archive`, `channel gsm8k_train`. */
  readonly what: string;
  readonly location: string;
  readonly state: 'present' | 'missing' | 'not checked';
  readonly detail?: string;
}

export interface RerunPlan {
  readonly rerunOf: string;
  /** The first name the submit will try (another when it is taken by then). */
  readonly jobName: string;
  readonly submittedAt: Date;
  readonly submitId: string;
  readonly layout: S3Layout;
  readonly namePrefix: string;
  readonly requestSource: JobRecord['requestSource'];
  /** The request for `jobName`. */
  readonly request: CreateTrainingJobRequest;
  readonly changes: readonly OverrideChange[];
  /** The overrides as given (`--set run.seed=7`, `--add sampling.top_k=50`), for the log and the tags. */
  readonly flags: readonly string[];
  /** What the rerun's request changes besides its name (tags, the run name), from the original's. */
  readonly requestChanges: {
    readonly tags: Record<string, string>;
    readonly environment: Record<string, string>;
  };
  readonly checks: readonly RerunCheck[];
  readonly files: readonly { readonly file: string; readonly body: string; readonly contentType: string }[];
  readonly original: { readonly config?: string; readonly template?: string; readonly commit?: string };
  /** The rerun's forecast (undefined: the original recorded no shape to match runs on). */
  readonly forecast: ForecastReport | undefined;
  /** A pass@k job's rerun: the finished output it keeps (its `resume` channel), and how many shards. */
  readonly keeps?: { readonly uri: string; readonly shards: number };
  readonly warnings: readonly string[];
}

export interface RerunInput {
  readonly job: string;
  /** `--set key=value`, as given. */
  readonly sets?: readonly string[];
  /** `--add key=value`: keys the config does not have yet. */
  readonly adds?: readonly string[];
  /** `--set-string key=value`: the value as text, whatever it looks like. */
  readonly setStrings?: readonly string[];
  readonly now?: Date;
  /** The results folder the forecast reads past runs from (default `results`, from cwd). */
  readonly resultsDir?: string;
  readonly cwd?: string;
  /** Where SageMaker's ended jobs are cached once read (default the launcher's cache). */
  readonly cacheDir?: string;
}

/** Files of the original that are not copied: the name's claim and the request are the new job's own. */
const NOT_COPIED: readonly string[] = [JOB_FILES.reservation, JOB_FILES.request];

function contentType(file: string): string {
  if (file.endsWith('.yaml')) return 'application/yaml';
  if (file.endsWith('.json')) return 'application/json';
  return 'text/plain';
}

/**
 * Everything a rerun will do, read and checked, nothing written. Bad input (an unknown job, a `--set`
 * refused, an image or source archive that is gone) is a UserError (exit 2).
 */
export async function planRerun(context: JobContext, input: RerunInput): Promise<RerunPlan> {
  const layout = requireLayout(context);
  const overrides = [
    ...(input.sets ?? []).map((f) => parseSetFlag(f)),
    ...(input.adds ?? []).map((f) => parseSetFlag(f, { adds: true })),
    ...(input.setStrings ?? []).map((f) => parseSetFlag(f, { asString: true })),
  ];
  const record = await readJobRecord(context, input.job);
  const warnings: string[] = [];
  if (record.requestSource === 'DescribeTrainingJob')
    warnings.push(
      `${input.job} has no ${JOB_FILES.request} (submitted before jobs kept their request): its request is rebuilt from DescribeTrainingJob and its tags`,
    );

  const files: RerunPlan['files'][number][] = [];
  let changes: OverrideChange[] = [];
  let resolved: { original: string; edited: string } | undefined;
  for (const file of record.files.filter((f) => !NOT_COPIED.includes(f))) {
    let body = (await readJobFile(context, record, file))!;
    if (file === JOB_FILES.resolvedConfig && overrides.length) {
      const original = body;
      ({ text: body, changes } = applyOverrides(body, overrides));
      for (const c of changes) if (c.typeChange) warnings.push(c.typeChange);
      resolved = { original, edited: body };
    }
    files.push({ file, body, contentType: contentType(file) });
  }
  if (overrides.length && !record.files.includes(JOB_FILES.resolvedConfig))
    throw new UserError(
      `--set: ${input.job} has no ${JOB_FILES.resolvedConfig} under ${layout.uri(record.filesAt.key)} to change`,
      'BadSet',
    );
  if (resolved)
    checkEditedConfig({
      job: input.job,
      ...resolved,
      overrides,
      asWritten: files.find((f) => f.file === JOB_FILES.configAsWritten)?.body,
      configPath: record.tags['rlvr:config'],
      cwd: input.cwd ?? process.cwd(),
    });

  const forecast = await rerunForecast(context, input, record.request, files);
  if (forecast) {
    const v = runtimeVerdict(forecast.forecast);
    // The rerun keeps the original's max runtime (it is what ran): said, not refused.
    if (v)
      warnings.push(
        `forecast: ${v.message} (a rerun keeps ${input.job}'s max runtime; submit the config with --max-runtime ${v.fits} to change it)`,
      );
  }

  const checks = await checkInputs(context, record.request);
  const missing = checks.filter((c) => c.state === 'missing');
  if (missing.length)
    throw new UserError(
      `Cannot rerun ${input.job}: ${missing.map((c) => `its ${c.what} ${c.location} is gone${c.detail ? ` (${c.detail})` : ''}`).join('; ')}. ` +
        'Nothing was created. Submit the config again instead (it packs and pushes what is missing).',
      'RerunInputsGone',
    );
  for (const c of checks.filter((c) => c.state === 'not checked'))
    warnings.push(`${c.what} ${c.location} was not checked: ${c.detail}`);

  const flags = [
    ...(input.sets ?? []).map((f) => `--set ${f}`),
    ...(input.adds ?? []).map((f) => `--add ${f}`),
    ...(input.setStrings ?? []).map((f) => `--set-string ${f}`),
  ];
  const requestChanges = changedByRerun(record, changes);
  const submittedAt = input.now ?? new Date();
  const submitId = randomUUID();
  // An eval or pass@k job's rerun is named as its kind is (`<prefix>-passk-…`); a name of another
  // launcher's prefix is not taken over.
  const original = jobNamePrefixOf(input.job);
  const namePrefix =
    original && (original === context.jobNamePrefix || original.startsWith(`${context.jobNamePrefix}-`))
      ? original
      : context.jobNamePrefix;
  const jobName = jobNameCandidate(namePrefix, submittedAt, 1);
  const commit = record.tags['rlvr:git-commit'];
  const request = rerunRequest(record.request, {
    jobName,
    layout,
    submitId,
    rerunOf: input.job,
    ...requestChanges,
  });
  const keeps = await passkOutputKept(context, input.job, request);
  return {
    rerunOf: input.job,
    jobName,
    submittedAt,
    submitId,
    layout,
    namePrefix,
    requestSource: record.requestSource,
    request,
    changes,
    flags,
    requestChanges,
    checks,
    files,
    original: {
      ...(record.tags['rlvr:config'] ? { config: record.tags['rlvr:config'] } : {}),
      ...(record.tags['rlvr:template'] ? { template: record.tags['rlvr:template'] } : {}),
      ...(commit ? { commit } : {}),
    },
    forecast,
    ...(keeps ? { keeps } : {}),
    warnings,
  };
}

interface EditedConfig {
  readonly job: string;
  /** resolved-config.yaml as the original job read it, and with the overrides. */
  readonly original: string;
  readonly edited: string;
  readonly overrides: readonly ConfigOverride[];
  /** The config as it was written (config.yaml): its launcher section chose the trainer and allowances. */
  readonly asWritten: string | undefined;
  /** The config's path as submitted (the `rlvr:config` tag). */
  readonly configPath: string | undefined;
  readonly cwd: string;
}

/**
 * An edited config is checked as a submit checks one, before anything is written: what the launcher
 * acted on (channels, models, the GPU split, the trainer) may not change, since the rerun keeps the
 * original's request; and the config rules may find nothing the original's config did not have.
 */
function checkEditedConfig(edit: EditedConfig): void {
  const launcher = launcherSectionOf(edit.asWritten);
  const profiles = repositoryProfiles(edit.cwd);
  checkLauncherInputs(edit, launcher, profiles);
  checkConfigRules(edit, launcher, profiles);
}

/** The `launcher` section of the config as written (resolved-config.yaml has none: it is not the trainer's). */
function launcherSectionOf(asWritten: string | undefined): YamlMap | undefined {
  if (asWritten === undefined) return undefined;
  try {
    const parsed: unknown = parseYaml(asWritten);
    return isMap(parsed) && isMap(parsed.launcher) ? parsed.launcher : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The trainer repository's own profiles, when the rerun runs in it (a submit reads them from the repository
 * holding the config; a rerun has only the folder it is run in). Unreadable: the built-ins alone.
 */
function repositoryProfiles(cwd: string): readonly TrainerProfile[] {
  try {
    return loadTrainerProfiles(cwd, '.');
  } catch {
    return [];
  }
}

/** The trainer a config (with the original's launcher section) is run by, as a submit picks it. */
function trainerOf(
  config: unknown,
  launcher: YamlMap | undefined,
  profiles: readonly TrainerProfile[],
): TrainerProfile | undefined {
  const picked = selectTrainer({
    config,
    trainer: typeof launcher?.trainer === 'string' ? launcher.trainer : undefined,
    command: typeof launcher?.trainer_command === 'string' ? launcher.trainer_command : undefined,
    profiles: mergeProfiles(BUILT_IN_PROFILES, profiles),
  });
  return 'selection' in picked ? picked.selection.profile : undefined;
}

function orNull<T>(read: () => T): T | null {
  try {
    return read();
  } catch {
    return null;
  }
}

/**
 * What the launcher acted on when it planned the job, read from a config the ways its planner reads it:
 * the datasets its loaders name (lib/config loaderUses, with what makes their channel: the split a
 * loader's folder is named by, the order file, the file a file loader reads), the iterators' order
 * files, every key naming a model, the GPUs each role takes (roleGpuNeeds, the split across the
 * instance), and the trainer with the load paths its profile resumes through (buildJobContract).
 */
function launcherInputs(
  config: unknown,
  launcher: YamlMap | undefined,
  profiles: readonly TrainerProfile[],
): Record<string, unknown> {
  const c: YamlMap = isMap(config) ? config : {};
  const profile = trainerOf(c, launcher, profiles);
  const datasets = orNull(() =>
    loaderUses(c as unknown as TrainingConfig).map((use) => {
      const loader = profile?.loaders?.[use.name];
      // A loader's channel is its folder, named by the split unless the loader names it alone.
      const named =
        !['none', 'hub', 'file'].includes(loader?.source ?? '') &&
        (!loader?.folder || loader.folder.includes('{split}'));
      return {
        at: use.nameAt,
        name: use.name,
        ...(named ? { split: use.params.split ?? null } : {}),
        order: use.params.order ?? null,
        ...(loader?.fileKey ? { file: use.params[loader.fileKey] ?? null } : {}),
      };
    }),
  );
  const iterators = (profile?.dataSections ?? []).map((s) => s.iterator);
  const roles = Array.isArray(c.roles) ? c.roles : [];
  // The keys lib/training/inputs.ts modelReferences maps to model channels (that planner is a layer above).
  const modelKeys: (string | number)[][] = [
    ['model', 'path'],
    ['tokenizer', 'pretrained_model_name_or_path'],
    ...roles.flatMap((_, i) => [
      ['roles', i, 'kind'],
      ['roles', i, 'config', 'model'],
      ['roles', i, 'config', 'tokenizer'],
      ['roles', i, 'config', 'model', 'hf_assets_path'],
    ]),
  ];
  const contract =
    profile &&
    orNull(() =>
      buildJobContract({ profile, config: c, configName: '', expectCheckpoints: false, cachedDatasets: [] }),
    );
  return {
    trainer: profile?.id ?? null,
    resume: contract?.resume ?? null,
    datasets,
    orderFiles: iterators.map((it) => valueAtPath(c, [it, 'order']) ?? null),
    models: modelKeys.map((k) => valueAtPath(c, k) ?? null),
    gpus: orNull(() => roleGpuNeeds(c as unknown as TrainingConfig)),
  };
}

const INPUT_PARTS: Readonly<Record<string, string>> = {
  trainer: 'the trainer that runs it',
  resume: 'the model keys its trainer resumes through',
  datasets: 'its datasets and their channels',
  orderFiles: 'its order files',
  models: 'its models and their channels',
  gpus: 'the GPUs each role takes (the split across the instance)',
};

function changedParts(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return Object.keys(INPUT_PARTS).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}

/**
 * Refused (exit 2): an edit that changes what the launcher acted on. The rerun keeps the original's
 * channels and instance, so the job would read the old dataset or model, or split its GPUs as the config
 * no longer says; only a submit plans them again. Each override is tried alone to name the one at fault.
 */
function checkLauncherInputs(
  edit: EditedConfig,
  launcher: YamlMap | undefined,
  profiles: readonly TrainerProfile[],
): void {
  const read = (text: string) =>
    launcherInputs(
      orNull(() => parseYaml(text) as unknown),
      launcher,
      profiles,
    );
  const before = read(edit.original);
  const parts = changedParts(before, read(edit.edited));
  if (parts.length === 0) return;
  const alone = edit.overrides.filter((o) => {
    const one = orNull(() => applyOverrides(edit.original, [o]).text);
    return one !== null && changedParts(before, read(one)).length > 0;
  });
  const at = (alone.length ? alone : edit.overrides).map((o) => `${o.adds ? '--add' : '--set'} ${o.key}`);
  throw new UserError(
    `${at.join(', ')}: changes ${parts.map((p) => INPUT_PARTS[p]).join(', ')}, which the launcher mapped when ${edit.job} was submitted; ` +
      `a rerun keeps ${edit.job}'s channels and instance, so the job would not run as the config says. Nothing was created. ` +
      `Change the config and submit it instead: npm run submit -- ${edit.configPath ?? '<config>'}`,
    'RerunChangesInputs',
  );
}

/**
 * Refused as a submit refuses it (the same rules, messages and exit 2): an edit the config rules find
 * an error in. The config is resolved-config.yaml with the original's launcher section (its trainer,
 * `launcher.allow`); only errors the original's config does not have count, so a rule that reads the
 * job's own paths, or a finding the submit let through, refuses no rerun.
 */
function checkConfigRules(
  edit: EditedConfig,
  launcher: YamlMap | undefined,
  profiles: readonly TrainerProfile[],
): void {
  const configAbs = path.resolve(edit.cwd, edit.configPath ?? JOB_FILES.resolvedConfig);
  const display = `${edit.job}/${JOB_FILES.resolvedConfig}`;
  const problemsOf = (text: string): readonly Problem[] => {
    const withLauncher = launcher
      ? `${text}${text.endsWith('\n') ? '' : '\n'}${stringifyForTrainer({ launcher })}`
      : text;
    try {
      loadTrainingConfigText(withLauncher, configAbs, display, { profiles: () => profiles });
      return [];
    } catch (err) {
      if (err instanceof ProblemsError) return err.problems;
      throw err;
    }
  };
  const key = (p: Problem) => `${p.rule ?? ''} ${p.where}: ${p.message}`;
  const before = new Set(problemsOf(edit.original).map(key));
  const found = problemsOf(edit.edited).filter((p) => !before.has(key(p)));
  if (found.length === 0) return;
  throw new ProblemsError(
    `${display} with ${edit.overrides.map((o) => `${o.adds ? '--add' : '--set'} ${o.key}`).join(', ')} is not a valid training config (${found.length === 1 ? '1 problem' : `${found.length} problems`}); nothing was created`,
    found,
  );
}

/**
 * A pass@k job's rerun resumes by prompt id: the original's streamed shards become its `resume` channel
 * (each shard starts from them and skips the prompts they finished). An original that wrote nothing yet
 * keeps the channel it had (its own `--continue`), since SageMaker fails a job whose channel is empty.
 */
async function passkOutputKept(
  context: JobContext,
  job: string,
  request: CreateTrainingJobRequest,
): Promise<RerunPlan['keeps']> {
  if (kindOfEnvironment(request.Environment) !== PASSK_KIND) return undefined;
  const layout = requireLayout(context);
  const prefix = `${layout.checkpointsPrefix(job)}${PASSK_DIR}/`;
  const listed = await context.aws.s3.listObjects(layout.bucket, prefix);
  const shards = new Set(
    listed.filter((o) => o.size > 0).flatMap((o) => /\/(shard_\d+)\/[^/]+\.jsonl$/.exec(o.key)?.[1] ?? []),
  ).size;
  if (shards === 0) return undefined;
  const uri = layout.uri(prefix);
  const channels = (request.InputDataConfig ?? []).filter((c) => c.ChannelName !== PASSK_RESUME_CHANNEL);
  request.InputDataConfig = [...channels, s3Channel(PASSK_RESUME_CHANNEL, uri, 'File')];
  return { uri, shards };
}

/**
 * The rerun's forecast, from the shape the original recorded (its batch and steps as `--set` leaves
 * them), recorded in the rerun's contract.json (`files` is updated) as a submit's is.
 */
async function rerunForecast(
  context: JobContext,
  input: RerunInput,
  request: CreateTrainingJobRequest,
  files: RerunPlan['files'][number][],
): Promise<ForecastReport | undefined> {
  const at = files.findIndex((f) => f.file === JOB_FILES.contract);
  const resolved = files.find((f) => f.file === JOB_FILES.resolvedConfig);
  let contract: unknown;
  try {
    contract = at < 0 ? undefined : JSON.parse(files[at].body);
  } catch {
    return undefined;
  }
  if (!isObject(contract) || !isObject(contract.forecast)) return undefined;
  const recorded = readShape(contract.forecast.shape);
  if (!recorded) return undefined;
  let config: unknown;
  try {
    config = resolved ? parseYaml(resolved.body) : undefined;
  } catch {
    config = undefined;
  }
  const steps = typeof contract.forecast.maxSteps === 'number' ? contract.forecast.maxSteps : undefined;
  const shape = isMap(config) ? { ...recorded, batch: batchOf(config) } : recorded;
  const maxSteps = (isMap(config) ? maxStepsOf(config) : undefined) ?? steps;
  const stepKey = isObject(contract.resume) ? contract.resume.stepKey : undefined;
  const fromStep =
    isMap(config) && Array.isArray(stepKey)
      ? resumeStepOf(config, stepKey as (string | number)[])
      : undefined;
  const resource = request.ResourceConfig;
  const evalWait = Number(request.Environment?.[JOB_ENV.evalWait] ?? 0);
  const report = forecastReport({
    shape,
    maxSteps,
    fromStep,
    maxRuntimeSeconds: request.StoppingCondition?.MaxRuntimeInSeconds ?? 0,
    perHour: costOf(resource?.InstanceType ?? '', context.region, resource?.InstanceCount ?? 1, 3600),
    evalWaitSeconds: Number.isFinite(evalWait) ? evalWait : 0,
    cwd: input.cwd ?? process.cwd(),
    resultsDir: input.resultsDir,
    sagemaker: await sageMakerRunsOrWhy({
      s3: context.aws.s3,
      sagemaker: context.aws.sagemaker,
      layout: requireLayout(context),
      jobNamePrefix: context.jobNamePrefix,
      shape,
      cacheDir: input.cacheDir,
    }),
  });
  files[at] = {
    ...files[at],
    body: `${JSON.stringify({ ...contract, forecast: recordOf(report.forecast) }, null, 2)}\n`,
  };
  return report;
}

/**
 * What a rerun's tags and environment say differently from the original's: who submitted it; a sweep
 * member's overrides with what `--set`/`--add` changed after them; a run name `--set run.name` changed.
 */
function changedByRerun(record: JobRecord, changes: readonly OverrideChange[]): RerunPlan['requestChanges'] {
  const tags: Record<string, string> = {};
  const environment: Record<string, string> = {};
  if (record.tags[TAGS.user] !== undefined) tags[TAGS.user] = os.userInfo().username;
  const overrides = record.tags[TAGS.overrides];
  if (overrides !== undefined && changes.length > 0)
    tags[TAGS.overrides] = [overrides, ...changes.map((c) => `${c.key}=${overrideLiteral(c.after)}`)].join(
      ' ',
    );
  const runName = changes.find((c) => c.key === 'run.name');
  if (runName && typeof runName.after === 'string') {
    if (record.tags[TAGS.runName] !== undefined) tags[TAGS.runName] = runName.after;
    environment[JOB_ENV.runName] = runName.after;
  }
  return { tags, environment };
}

/**
 * The original request for a new job: its name, where its own files are (the config channel), where its
 * checkpoints go, its submit id and the rerun tag changed — nothing else.
 */
export function rerunRequest(
  original: CreateTrainingJobRequest,
  change: {
    jobName: string;
    layout: S3Layout;
    submitId: string;
    rerunOf: string;
    /** Tags the rerun gives other values (who submitted it; what `--set` changed), set, not appended. */
    tags?: Readonly<Record<string, string>>;
    /** Environment the rerun's `--set` changed (the run name). */
    environment?: Readonly<Record<string, string>>;
  },
): CreateTrainingJobRequest {
  const request = JSON.parse(JSON.stringify(original)) as CreateTrainingJobRequest;
  const { layout, jobName } = change;
  request.TrainingJobName = jobName;
  for (const channel of request.InputDataConfig ?? []) {
    const s3 = channel.DataSource?.S3DataSource;
    if (channel.ChannelName === CHANNELS.config && s3) s3.S3Uri = layout.uri(layout.jobPrefix(jobName));
  }
  if (request.CheckpointConfig)
    request.CheckpointConfig.S3Uri = layout.uri(layout.checkpointsPrefix(jobName));
  request.Environment = {
    ...request.Environment,
    ...change.environment,
    [JOB_ENV.submitId]: change.submitId,
  };
  const tags = { ...change.tags };
  request.Tags = [
    ...(request.Tags ?? [])
      .filter((t) => t.Key !== RERUN_OF_TAG)
      .map((t) => (t.Key! in tags ? { Key: t.Key, Value: sanitizeTagValue(tags[t.Key!]) } : t)),
    { Key: RERUN_OF_TAG, Value: change.rerunOf },
  ];
  return request;
}

/**
 * Whether what the job read is still there: the source archive (the `code` channel's object), the image
 * (its manifest, by digest, in the registry the launcher pushes to) and each S3 input channel (an object
 * under its prefix).
 */
async function checkInputs(context: JobContext, request: CreateTrainingJobRequest): Promise<RerunCheck[]> {
  const { s3 } = context.aws;
  const checks: RerunCheck[] = [];
  const image = request.AlgorithmSpecification?.TrainingImage ?? '';
  checks.push(await checkImage(context, image));
  for (const channel of request.InputDataConfig ?? []) {
    const uri = channel.DataSource?.S3DataSource?.S3Uri;
    if (channel.ChannelName === CHANNELS.config || !uri) continue;
    const at = parseS3Uri(uri);
    if (!at) continue;
    const isCode = channel.ChannelName === CHANNELS.code;
    const what = isCode ? 'source archive' : `input channel ${channel.ChannelName}`;
    const exists = isCode
      ? (await s3.headObject(at.bucket, at.key)) !== undefined
      : (await s3.listObjects(at.bucket, at.key, 1)).length > 0;
    checks.push({ what, location: uri, state: exists ? 'present' : 'missing' });
  }
  return checks;
}

async function checkImage(context: JobContext, image: string): Promise<RerunCheck> {
  const at = image.indexOf('@');
  if (at < 0)
    return {
      what: 'image',
      location: image,
      state: 'not checked',
      detail: 'it is named by tag, not digest: the tag may name another image by now',
    };
  const repositoryUri = context.settings.values.repositoryUri;
  let repo: ReturnType<typeof parseRepositoryUri>;
  try {
    repo = parseRepositoryUri(image.slice(0, at));
  } catch {
    return { what: 'image', location: image, state: 'not checked', detail: 'not a registry/repository name' };
  }
  if (!repositoryUri || repo.registry !== repositoryUri.split('/')[0])
    return {
      what: 'image',
      location: image,
      state: 'not checked',
      detail: `its registry ${repo.registry} is not the launcher's (${repositoryUri ?? 'no repository configured'}), which is the only one it logs in to`,
    };
  const digest = await remoteDigest(
    repo,
    image.slice(at + 1),
    cachedCredentials(ecrCredentials(context.aws.ecr)),
  );
  return { what: 'image', location: image, state: digest ? 'present' : 'missing' };
}

export interface RerunResult extends SubmittedJob {
  readonly rerunOf: string;
  readonly jobLogPath: string;
  readonly request: CreateTrainingJobRequest;
}

/** The rerun as the one submit path takes it: name claim, the job's files, create, the job-log row. */
export async function submitRerun(
  context: JobContext,
  plan: RerunPlan,
  options: { jobLogPath: string; listener?: SubmitListener; signal?: AbortSignal },
): Promise<RerunResult> {
  const resource = plan.request.ResourceConfig;
  const spot = Boolean(plan.request.EnableManagedSpotTraining);
  const request = (jobName: string) =>
    rerunRequest(plan.request, {
      jobName,
      layout: plan.layout,
      submitId: plan.submitId,
      rerunOf: plan.rerunOf,
      ...plan.requestChanges,
    });
  const submission: JobSubmission = {
    kind: 'job',
    layout: plan.layout,
    namePrefix: plan.namePrefix,
    submittedAt: plan.submittedAt,
    submitId: plan.submitId,
    reservation: { rerunOf: plan.rerunOf, ...(plan.original.config ? { config: plan.original.config } : {}) },
    files: plan.files,
    request,
    quota: { instanceType: resource?.InstanceType ?? '', spot },
    jobLog: {
      path: options.jobLogPath,
      row: (jobName) => ({
        jobName,
        config: plan.original.config ?? '',
        description: rerunDescription(plan),
        submitted: plan.submittedAt,
        instance: `${resource?.InstanceCount ?? 1}× ${resource?.InstanceType ?? '?'}${spot ? ' (spot)' : ''}`,
        template: plan.original.template ?? '',
        commit: plan.original.commit
          ? `${plan.original.commit.slice(0, 12)}${plan.original.commit.endsWith('+dirty') ? '+dirty' : ''}`
          : '',
      }),
    },
  };
  const submitted = await submitJob(submission, context.aws, {
    ...(options.listener ? { listener: options.listener } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return {
    ...submitted,
    rerunOf: plan.rerunOf,
    jobLogPath: options.jobLogPath,
    request: request(submitted.jobName),
  };
}

/** The job log's description of a rerun: `rerun of <job>` and the overrides. */
export function rerunDescription(plan: Pick<RerunPlan, 'rerunOf' | 'flags'>): string {
  return [`rerun of ${plan.rerunOf}`, ...plan.flags].join(' ');
}
