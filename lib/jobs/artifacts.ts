import type { ImagePipeline } from '../image';
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
import type { JobConfigs, Placeholders } from './resolve';
import type { SubmitConnection } from './submit-session';
import { checkTrainerScript } from './trainer-checks';
import type { ResolvedJobOptions } from './options';

/**
 * Work a sweep's plans share: every combination stages the same source and reads the same inputs, so
 * each is packed and checked once (keyed by what it depends on).
 */
export interface PlanCache {
  readonly sources: Map<string, Promise<SourceArtifact>>;
  readonly preflights: Map<string, Promise<PreflightResult>>;
}

export function newPlanCache(): PlanCache {
  return { sources: new Map(), preflights: new Map() };
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
  readonly image: { readonly uri: string; readonly source: string };
  /** What the image pipeline said when it found no image. */
  readonly imageNote: string | undefined;
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
  return { image: { uri: input.placeholders.value('image', uri), source }, note: resolution?.note };
}

/** What the job ships: the trainer's source package and the image it runs in. */
export async function prepareArtifacts(input: ArtifactInput): Promise<Artifacts> {
  const { config, sourceRootFor } = input.configs;
  const launcher = config.value.launcher ?? {};
  const sourceRoot = sourceRootFor(launcher.trainer_src);
  if (!sourceRoot) {
    throw new UserError(
      `${config.displayPath} is not inside a git repository, so the trainer's source is unknown. Pass --trainer-src DIR or set launcher.trainer_src.`,
      'NoTrainerSource',
    );
  }
  input.listener?.({ type: 'step', message: `staging the trainer's source from ${sourceRoot}` });
  const source = await packTrainerSource(sourceRoot, launcher, input.cache);
  const warnings = checkSourceCarries(input, source.staged);
  const { image, note } = await resolveImage(input, sourceRoot);
  return { ...source, sourceRoot, image, imageNote: note, warnings };
}
