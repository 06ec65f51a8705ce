import * as path from 'node:path';
import {
  jobTemplateSchema,
  loadEvalConfig,
  loadTrainingConfig,
  loadTrainingConfigText,
  type EvalConfig,
  type JobTemplate,
  type LoadedConfig,
  type TrainingConfig,
  type TrainingLoadOptions,
} from '../config';
import { ProblemsError, UserError, type Problem } from '../errors';
import { S3Layout } from '../layout';
import type { ResolvedSettings } from '../settings';
import type { TrainerSelection } from '../trainers';
import { planInputs, type InputPlan } from './inputs';
import {
  BUILT_IN_TEMPLATES,
  resolveJobOptions,
  type JobOptionFlags,
  type ResolvedJobOptions,
} from '../job-options';
import type { Placeholders, SubmitConnection } from '../submission';
import { trainerSourceOf } from './trainer-source';
import { planSharedFileSystem, type SharedFileSystemPlan } from './shared-file-system';
import {
  checkRoleGpus,
  expectsCheckpoints,
  planTrainerRuntime,
  type TrainerRuntimePlan,
} from './trainer-checks';

/** What the submit reads from files: the configs, the trainer that runs them, where its source is. */
export interface JobConfigs {
  readonly configAbs: string;
  readonly config: LoadedConfig<TrainingConfig>;
  readonly trainer: TrainerSelection;
  readonly evalConfig: LoadedConfig<EvalConfig> | undefined;
  /** The git repository holding the config, if any. */
  readonly configGitRoot: string | undefined;
  /** The trainer's source folder for a `launcher.trainer_src` (or the default). */
  readonly sourceRootFor: (trainerSrc: string | undefined) => string | undefined;
}

export interface JobConfigInput {
  readonly configPath: string;
  /** The config's text, when it differs from the file (a sweep variant), and how to name it. */
  readonly configText?: { readonly text: string; readonly label: string };
  readonly evalConfigPath?: string;
  readonly trainerSrc?: string;
  readonly trainerCommand?: string;
  readonly strict?: boolean;
}

/**
 * Configs: every problem in a file at once, checked against the trainer that will run it (the trainer
 * repository may describe its trainers in its own profile file).
 */
export async function loadJobConfigs(input: JobConfigInput, cwd: string): Promise<JobConfigs> {
  const configAbs = path.resolve(cwd, input.configPath);
  const { configGitRoot, sourceRootFor, profiles } = await trainerSourceOf(configAbs, {
    cwd,
    trainerSrc: input.trainerSrc,
  });
  const loadOptions: TrainingLoadOptions = {
    profiles,
    trainerCommand: input.trainerCommand,
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
  let evalConfig: LoadedConfig<EvalConfig> | undefined;
  const evalFromConfig = config.value.launcher?.eval_config;
  if (input.evalConfigPath) {
    evalConfig = loadEvalConfig(path.resolve(cwd, input.evalConfigPath), input.evalConfigPath);
  } else if (evalFromConfig) {
    const abs = path.resolve(path.dirname(configAbs), evalFromConfig);
    evalConfig = loadEvalConfig(abs, path.relative(cwd, abs) || abs);
  }
  return { configAbs, config, trainer: config.trainer!, evalConfig, configGitRoot, sourceRootFor };
}

export interface ResolvedTemplate {
  readonly name: string;
  readonly values: JobTemplate;
  readonly from: 'parameter' | 'built-in';
}

/** The job template: the stack's published one, else a built-in (until the stack is deployed). */
export function pickTemplate(
  name: string | undefined,
  published: string | undefined,
  where: { readonly flag: boolean; readonly config: LoadedConfig<TrainingConfig> },
): ResolvedTemplate | undefined {
  if (!name) return undefined;
  if (published) {
    const parsed = jobTemplateSchema.safeParse(JSON.parse(published));
    if (!parsed.success) {
      throw new UserError(
        `The published template ${name} is invalid (${parsed.error.issues[0].message}); redeploy the infrastructure stack.`,
      );
    }
    return { name, values: parsed.data, from: 'parameter' };
  }
  if (BUILT_IN_TEMPLATES[name]) return { name, values: BUILT_IN_TEMPLATES[name], from: 'built-in' };
  const known = Object.keys(BUILT_IN_TEMPLATES).join(', ');
  const message = `no job template named "${name}"`;
  const problem: Problem = where.flag
    ? { where: '--template', message, hint: `Known templates: ${known}.` }
    : where.config.file.problem(['launcher', 'template'], message, `Known templates: ${known}.`);
  throw new ProblemsError('Unknown job template', [problem]);
}

export async function resolveTemplate(
  configs: JobConfigs,
  flag: string | undefined,
  session: SubmitConnection,
): Promise<ResolvedTemplate | undefined> {
  const name = flag ?? configs.config.value.launcher?.template;
  const published = name ? await session.publishedTemplate(name) : undefined;
  return pickTemplate(name, published, { flag: flag !== undefined, config: configs.config });
}

/** How the job runs and what it reads: every value with where it came from, or every problem. */
export interface ResolvedJob {
  readonly options: ResolvedJobOptions;
  readonly layout: S3Layout;
  readonly inputs: InputPlan;
  readonly runtime: TrainerRuntimePlan;
  /** The file system the hosts share, for a multi-host job of a trainer whose hosts share a folder. */
  readonly sharedFileSystem?: SharedFileSystemPlan;
  readonly warnings: readonly Problem[];
}

/**
 * Pure: configs + flags + template + settings → options, inputs and the trainer's run-time plan,
 * throwing every problem of a step at once (exit 2).
 */
export function resolveJob(
  configs: JobConfigs,
  flags: JobOptionFlags,
  template: ResolvedTemplate | undefined,
  settings: ResolvedSettings,
  placeholders: Placeholders,
  context: { readonly local?: boolean } = {},
): ResolvedJob {
  const { config, evalConfig, trainer } = configs;
  const resolved = resolveJobOptions({
    flags,
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
  const gpuCheck = checkRoleGpus(
    config,
    options,
    (hosts) =>
      planSharedFileSystem({
        profile: trainer.profile,
        options: { ...options, instanceCount: { ...options.instanceCount, value: hosts } },
        settings,
        placeholders,
        local: context.local,
      }).problems,
  );
  if (gpuCheck.problems.length > 0)
    throw new ProblemsError('The job cannot run as configured', gpuCheck.problems);

  const layout = new S3Layout(placeholders.value('bucket', settings.values.bucket), settings.values.prefix);
  const planned = planInputs(config.value, config.file, layout, path.dirname(configs.configAbs), {
    networkIsolation: options.networkIsolation.value,
    loaders: trainer.profile.loaders,
  });
  if (!planned.inputs)
    throw new ProblemsError(`${config.displayPath}: inputs cannot be mapped to S3`, planned.problems);
  const runtime = planTrainerRuntime({
    config,
    evalConfig,
    profile: trainer.profile,
    options,
    inputs: planned.inputs,
    expectCheckpoints: expectsCheckpoints(trainer.profile, config.value),
  });
  const shared = planSharedFileSystem({
    profile: trainer.profile,
    options,
    settings,
    placeholders,
    local: context.local,
  });
  const problems = [...runtime.problems, ...shared.problems];
  if (problems.length > 0) throw new ProblemsError('The job cannot run as configured', problems);
  return {
    options,
    layout,
    inputs: planned.inputs,
    runtime,
    ...(shared.plan ? { sharedFileSystem: shared.plan } : {}),
    warnings: [...planned.warnings, ...gpuCheck.warnings, ...runtime.warnings, ...shared.warnings],
  };
}
