import { formatProblem } from '../errors';
import type { ProgressListener } from '../progress';
import { ensureImage } from '../image';
import { planSubmit, type SubmitInput, type SubmitPlan } from '../training';
import { type SubmitSession } from '../submission';
import { localJobOfPlan, runLocal, type LocalRunResult } from './run';

/** The repository name local builds get when no repository is configured. */
export const LOCAL_REPOSITORY = 'rlvr-local/train';

export interface LocalSubmitOptions {
  /** Host GPUs for the container (inside: 0..n-1). */
  readonly gpus?: readonly number[];
  /** `--restart <run folder>`: run again in an earlier local run folder, as SageMaker restarts a job. */
  readonly restartIn?: string;
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

/** A local job ready to run: its plan and the image it runs in. */
export interface PreparedLocalRun {
  readonly plan: SubmitPlan;
  readonly image: string;
}

/**
 * `submit --local`, first half: plans the job as for SageMaker (no S3 checks) and builds the image if
 * the engine lacks it. Nothing runs yet, so an interrupt here simply ends the command.
 */
export async function prepareLocalRun(
  input: SubmitInput,
  session: SubmitSession,
  options: Pick<LocalSubmitOptions, 'build' | 'dockerHost' | 'onEvent'>,
): Promise<PreparedLocalRun> {
  const plan = await planSubmit({ ...input, dryRun: true, local: true, pipeline: undefined }, session);
  for (const w of plan.warnings) options.onEvent?.({ type: 'warning', message: formatProblem(w) });
  const given = input.image ?? plan.config.value.launcher?.image;
  if (given) return { plan, image: given };
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
  return { plan, image: built.ref };
}

/**
 * `submit --local`, second half: runs the identical job in local Docker; the signal (Ctrl-C) stops it
 * as SageMaker would.
 */
export async function runPreparedLocal(
  prepared: PreparedLocalRun,
  session: SubmitSession,
  options: LocalSubmitOptions,
): Promise<LocalSubmitResult> {
  const result = await runLocal({
    job: localJobOfPlan(prepared.plan),
    image: prepared.image,
    gpus: options.gpus,
    ...(options.restartIn ? { restartIn: options.restartIn } : {}),
    dockerHost: options.dockerHost,
    aws: (await session.connect()).aws,
    out: options.out,
    err: options.err,
    signal: options.signal,
    listener: options.onEvent,
  });
  return { ...result, image: prepared.image };
}
