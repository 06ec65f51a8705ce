import * as path from 'node:path';
import { platformEnvOverride, type KeyPath } from '../config';
import { ecrCredentials, imageLabels, type ImagePipeline } from '../image';
import { ProblemsError, UserError, type Problem } from '../errors';
import type { ProgressOf } from '../progress';
import {
  captureGitState,
  packSource,
  stageSource,
  type GitState,
  type PackedSource,
  type StagedSource,
} from '../source';
import type { InputPlan } from './inputs';
import type { PreflightResult } from './preflight';
import { checkReferencedFiles } from './references';
import type { JobConfigs } from './resolve';
import type { Placeholders, SubmitConnection } from '../submission';
import { planImportRoots, type ImportRootsPlan } from './import-roots';
import { checkPlatformEnv, importTimeWrites, type PlatformEnvCheck } from './platform-env';
import { commandScript } from '../trainers';
import { checkTrainerScript } from './trainer-checks';
import { problemAt, type ResolvedJobOptions } from '../job-options';
import { checkedSourceRoot } from './trainer-source';
import type { SageMakerPastRuns } from '../forecast';

/**
 * Work a sweep's plans share: every combination stages the same source and reads the same inputs, so
 * each is packed and checked once (keyed by what it depends on).
 */
export interface PlanCache {
  readonly sources: Map<string, Promise<SourceArtifact>>;
  readonly preflights: Map<string, Promise<PreflightResult>>;
  /** SageMaker's past runs, by the shape asked for. */
  readonly pastRuns: Map<string, Promise<SageMakerPastRuns>>;
}

export function newPlanCache(): PlanCache {
  return { sources: new Map(), preflights: new Map(), pastRuns: new Map() };
}

export function cached<T>(
  cache: Map<string, Promise<T>> | undefined,
  key: string,
  make: () => Promise<T>,
): Promise<T> {
  if (!cache) return make();
  let value = cache.get(key);
  if (!value) cache.set(key, (value = make()));
  return value;
}

export interface SourceArtifact {
  readonly staged: StagedSource;
  readonly packed: PackedSource;
  readonly git: GitState | undefined;
}

export interface Artifacts extends SourceArtifact {
  readonly sourceRoot: string;
  readonly image: {
    readonly uri: string;
    readonly source: string;
    /** What the image says it has (its labels), when that can be read. */
    readonly labels?: Readonly<Record<string, string>>;
  };
  /** What the image pipeline said when it found no image. */
  readonly imageNote: string | undefined;
  /** Where the trainer's own packages are imported from in the job. */
  readonly importRoots: ImportRootsPlan;
  /** What the trainer's modules assign at import of the variables the platform owns, judged for the job. */
  readonly platformEnv: PlatformEnvCheck;
  readonly warnings: readonly Problem[];
}

export interface ArtifactInput {
  readonly configs: JobConfigs;
  readonly inputs: InputPlan;
  readonly options: ResolvedJobOptions;
  readonly session: SubmitConnection;
  readonly placeholders: Placeholders;
  /** `--image`: used as it is. */
  readonly image?: string;
  readonly pipeline?: ImagePipeline;
  readonly cache?: PlanCache;
  readonly listener?: (event: ProgressOf<'step'>) => void;
}

/** The trainer's source: staged, packed reproducibly, content-addressed (once per sweep). */
async function packTrainerSource(
  sourceRoot: string,
  launcher: { include?: string[]; exclude?: string[] },
  cache: PlanCache | undefined,
): Promise<SourceArtifact> {
  return cached(
    cache?.sources,
    JSON.stringify([sourceRoot, launcher.include ?? [], launcher.exclude ?? []]),
    async () => {
      const staged = await stageSource({
        root: sourceRoot,
        include: launcher.include,
        exclude: launcher.exclude,
      });
      return {
        staged,
        packed: await packSource(staged),
        git: staged.isGit ? await captureGitState(sourceRoot) : undefined,
      };
    },
  );
}

/** Every string value in the config, with where it is. */
function stringValues(value: unknown, at: KeyPath = []): { path: KeyPath; value: string }[] {
  if (typeof value === 'string') return [{ path: at, value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringValues(v, [...at, i]));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => stringValues(v, [...at, k]));
  }
  return [];
}

/** A path as the staged source spells it (relative, `/`-separated, no `./`). */
function sourceRelative(value: string): string {
  return path.posix.normalize(value.replace(/^(\.\/)+/, ''));
}

const WITHHELD_HINT =
  'Credential files never travel with the job. Give the job what it needs another way (the job environment, a secret store), or, if the file holds no secret, rename it (.rlvrignore only adds to the deny-list).';

/**
 * A config value, or a word of the trainer command, naming a withheld file: the job would miss it, so
 * the submit stops (exit 2) rather than ship a job that fails, or quietly ship the secret.
 */
function checkWithheldReferences(input: ArtifactInput, staged: StagedSource): void {
  if (staged.withheld.length === 0) return;
  const withheld = new Map(staged.withheld.map((w) => [w.path, w.why]));
  const { config } = input.configs;
  const problems: Problem[] = [];
  for (const ref of stringValues(config.value)) {
    if (ref.path[0] === 'launcher' && ref.path[1] === 'exclude') continue; // leaving it out is fine
    const why = withheld.get(sourceRelative(ref.value));
    if (why) {
      problems.push(
        config.file.problem(
          ref.path,
          `"${ref.value}" is withheld from the job's source (${why})`,
          WITHHELD_HINT,
        ),
      );
    }
  }
  const command = input.options.trainerCommand;
  const words = command.value.split(/\s+/).flatMap((w) => [w, ...w.split('=').slice(1)]);
  for (const word of new Set(words.map((w) => w.replace(/^['"]|['"]$/g, '')))) {
    const why = word && withheld.get(sourceRelative(word));
    if (why) {
      problems.push(
        problemAt(
          command.source,
          'trainer_command',
          `the trainer command names ${word}, which is withheld from the job's source (${why})`,
          WITHHELD_HINT,
        ),
      );
    }
  }
  if (problems.length > 0) {
    throw new ProblemsError('The job would need files withheld from its source', problems);
  }
}

/** Every file the config names travels with the job, and so does the trainer command's script. */
function checkSourceCarries(input: ArtifactInput, staged: StagedSource): readonly Problem[] {
  const { config } = input.configs;
  const { inputs } = input;
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
  const scriptProblem = checkTrainerScript(input.options.trainerCommand, staged, config.file);
  if (scriptProblem)
    throw new ProblemsError('The trainer command names a script the job would not have', [scriptProblem]);
  return referenceCheck.warnings;
}

/** The image: as given, else the image pipeline's build for the trainer's dependencies, pinned by digest. */
async function resolveImage(
  input: ArtifactInput,
  sourceRoot: string,
): Promise<{ image: Artifacts['image']; note: string | undefined }> {
  const { config } = input.configs;
  const fromConfig = config.value.launcher?.image;
  const resolution =
    !input.image && !fromConfig && input.pipeline
      ? await input.pipeline.resolve({
          trainerSrc: sourceRoot,
          repositoryUri: input.session.settings.values.repositoryUri,
          ecr: input.session.aws?.ecr,
          dryRun: input.session.dryRun,
        })
      : undefined;
  const uri = input.image ?? fromConfig ?? resolution?.uri;
  if (!uri && !input.session.dryRun) {
    throw new UserError(
      resolution?.note ??
        `No training image. Pass --image <repository-uri>@sha256:… (or :tag), or set launcher.image in ${config.displayPath}.`,
      'NoImage',
    );
  }
  const source = input.image
    ? 'flag --image'
    : fromConfig
      ? 'config launcher.image'
      : resolution?.uri
        ? resolution.source
        : 'unresolved';
  // An image named by reference: its labels from the engine or the registry, when either can tell.
  const named = input.image ?? fromConfig;
  const repositoryUri = input.session.settings.values.repositoryUri;
  const labels =
    resolution?.labels ??
    (named
      ? await imageLabels(named, {
          ...(input.session.aws ? { credentials: ecrCredentials(input.session.aws.ecr) } : {}),
          ...(repositoryUri ? { registryHost: repositoryUri.split('/')[0] } : {}),
        })
      : undefined);
  return {
    image: { uri: input.placeholders.value('image', uri), source, ...(labels ? { labels } : {}) },
    note: resolution?.note,
  };
}

/** What the job ships: the trainer's source package and the image it runs in. */
export async function prepareArtifacts(input: ArtifactInput): Promise<Artifacts> {
  const { config } = input.configs;
  const launcher = config.value.launcher ?? {};
  const sourceRoot = await checkedSourceRoot(input.configs);
  input.listener?.({ type: 'step', message: `staging the trainer's source from ${sourceRoot}` });
  const source = await packTrainerSource(sourceRoot, launcher, input.cache);
  checkWithheldReferences(input, source.staged);
  const warnings = checkSourceCarries(input, source.staged);
  const { profile } = input.configs.trainer;
  const importRoots = planImportRoots({
    staged: source.staged,
    profile,
    trainerCommand: input.options.trainerCommand.value,
    ...(input.configs.evalConfig && profile.runtime.evalScript
      ? { evalScript: profile.runtime.evalScript.script }
      : {}),
  });
  if (importRoots.problems.length > 0) {
    throw new ProblemsError("The trainer's own packages would not import in the job", importRoots.problems);
  }
  const platformEnv = planPlatformEnv(input, source.staged, importRoots);
  const { image, note } = await resolveImage(input, sourceRoot);
  return {
    ...source,
    sourceRoot,
    image,
    imageNote: note,
    warnings: [...warnings, ...importRoots.warnings, ...platformEnv.warnings],
    importRoots,
    platformEnv,
  };
}

/**
 * What the modules the trainer's script and eval script import (their Ray actors' modules among them)
 * assign at import of the platform's variables: an error stops the submit (exit 2) before the image is
 * built, unless the job holds the platform's values or `launcher.allow` names the rule.
 */
function planPlatformEnv(
  input: ArtifactInput,
  staged: StagedSource,
  importRoots: ImportRootsPlan,
): PlatformEnvCheck {
  const { options, configs } = input;
  const files = staged.files.map((f) => f.path);
  const evalScript = configs.evalConfig ? configs.trainer.profile.runtime.evalScript?.script : undefined;
  const scripts = [commandScript(options.trainerCommand.value), evalScript].filter(
    (s): s is string => s !== undefined && !s.startsWith('/') && files.includes(s),
  );
  const allow = configs.config.value.launcher?.allow as Record<string, unknown> | undefined;
  const reason = allow?.[platformEnvOverride.id];
  const found = importTimeWrites({
    root: staged.root,
    files,
    roots: importRoots.roots.map((r) => r.path),
    scripts,
  });
  const check = checkPlatformEnv(found.writes, {
    instanceType: options.instanceType.value,
    instanceCount: options.instanceCount.value,
    networkIsolation: options.networkIsolation.value,
    hold: options.holdPlatformEnv.value,
    ...(typeof reason === 'string' ? { allowReason: reason } : {}),
    unread: found.unread,
  });
  // The warnings of the same check go with the errors: one edit of the modules fixes them together.
  if (check.errors.length > 0)
    throw new ProblemsError(
      "The trainer's modules assign variables the platform owns when they are imported",
      [...check.errors, ...check.warnings.map((w) => ({ ...w, where: `${w.where} (a warning)` }))],
    );
  return check;
}
