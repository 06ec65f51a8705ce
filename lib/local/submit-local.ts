import { formatProblem } from '../errors';
import type { ProgressListener } from '../progress';
import { ensureImage } from '../image';
import { planSubmit, type SubmitInput, type SubmitSession } from '../jobs';
import { runLocal, type LocalRunResult } from './run';

/** The repository name local builds get when no repository is configured. */
export const LOCAL_REPOSITORY = 'rlvr-local/train';

export interface LocalSubmitOptions {
  /** Host GPUs for the container (inside: 0..n-1). */
  readonly gpus?: readonly number[];
  /** The image build, when neither --image nor launcher.image names an image. */
  readonly build: {
    readonly dockerDir?: string;
    readonly buildArgs?: Readonly<Record<string, string>>;
  };
  readonly dockerHost?: string;
  /** Where the job's own output goes. */
  readonly out: NodeJS.WritableStream;
  readonly err: NodeJS.WritableStream;
  /** Aborted (Ctrl-C): the job gets SIGTERM, and SIGKILL after SageMaker's grace. */
  readonly signal?: AbortSignal;
  readonly onEvent?: ProgressListener;
}

export interface LocalSubmitResult extends LocalRunResult {
  /** The image the job ran in. */
  readonly image: string;
}

/**
 * `submit --local`: plans the job as for SageMaker (no S3 checks), builds the image if the engine
 * lacks it, and runs the identical job in local Docker.
 */
export async function submitLocal(
  input: SubmitInput,
  session: SubmitSession,
  options: LocalSubmitOptions,
): Promise<LocalSubmitResult> {
  const plan = await planSubmit({ ...input, dryRun: true, local: true, pipeline: undefined }, session);
  for (const w of plan.warnings) options.onEvent?.({ type: 'warning', message: formatProblem(w) });
  let image = input.image ?? plan.config.value.launcher?.image;
  if (!image) {
    const built = await ensureImage({
      context: {
        dockerDir: options.build.dockerDir,
        trainerSrc: plan.source.root,
        buildArgs: options.build.buildArgs,
      },
      repositoryUri: plan.placeholders.includes('repositoryUri')
        ? LOCAL_REPOSITORY
        : plan.requestSettings.repositoryUri,
      build: true,
      push: false,
      dockerHost: options.dockerHost,
      listener: options.onEvent,
    });
    image = built.ref;
  }
  const result = await runLocal({
    plan,
    image,
    gpus: options.gpus,
    dockerHost: options.dockerHost,
    aws: session.aws,
    out: options.out,
    err: options.err,
    signal: options.signal,
    listener: options.onEvent,
  });
  return { ...result, image };
}
