/**
 * The image pipeline: a content-addressed build context, BuildKit builds through the engine, and
 * pushes that happen only when the registry lacks the tag. The tag is a hash of what goes into the
 * image, so a change in the trainer's code changes nothing here.
 */
import type { IEcr } from '../aws';
import { ProblemsError, RlvrError, RuntimeFailure } from '../errors';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { planImageBuild } from './build-plan';
import {
  assembleContext,
  contextTar,
  defaultDockerDir,
  type BuildContext,
  type ContextOptions,
} from './context';
import { connectEngine, type Engine } from './engine';
import type { BuildResult, ImageListener, PushResult } from './engine-streams';
import {
  ecrCredentials,
  parseRepositoryUri,
  pushImage,
  remoteDigest,
  remoteLabels,
  tagRemote,
} from './registry';
import { cachedCredentials, type CredentialSource } from './credentials';

export interface ImageRequest {
  readonly context: ContextOptions;
  /** The context already assembled from `context` (its plan checked), to skip doing it twice. */
  readonly assembled?: BuildContext;
  readonly repositoryUri: string;
  /** Build when the engine lacks the tag. */
  readonly build: boolean;
  /** Push when the registry lacks the tag (builds first if needed). */
  readonly push: boolean;
  /** Registry login (ECR's GetAuthorizationToken); needed to push or to ask the registry. */
  readonly credentials?: CredentialSource;
  readonly dockerHost?: string;
  /** More tags for the same image (e.g. `git-<commit>`), pushed alongside. */
  readonly aliasTags?: readonly string[];
  readonly listener?: ImageListener;
}

export interface ImageResult {
  readonly context: BuildContext;
  /** `repository:deps-…` */
  readonly ref: string;
  /** The registry digest, when known (pushed, or found locally or in the registry). */
  readonly digest?: string;
  /** `repository@sha256:…`, what a job runs. */
  readonly pinned?: string;
  readonly built?: BuildResult;
  readonly pushed?: PushResult;
  /** Where the digest came from. */
  readonly foundIn?: 'registry' | 'engine' | 'push';
}

function digestFromRepoDigests(repoDigests: readonly string[], repositoryUri: string): string | undefined {
  const hit = repoDigests.find((d) => d.startsWith(`${repositoryUri}@`));
  return hit?.slice(repositoryUri.length + 1);
}

export async function ensureImage(request: ImageRequest): Promise<ImageResult> {
  const repo = parseRepositoryUri(request.repositoryUri);
  const context = request.assembled ?? (await assembleContext(request.context));
  const ref = `${repo.uri}:${context.tag}`;
  const listener = request.listener;
  const credentials = request.credentials ? cachedCredentials(request.credentials) : undefined;
  const pinnedBy = (digest: string) => `${repo.uri}@${digest}`;

  // Pushing: the registry already holding the tag settles it, without touching the engine.
  if (request.push) {
    if (!credentials) throw new RuntimeFailure('Pushing needs registry credentials.', 'NoCredentials');
    const existing = await remoteDigest(repo, context.tag, credentials);
    if (existing) {
      listener?.({ type: 'step', message: `${ref} is already in the registry; nothing to build or push` });
      await pushAliases(request, repo.uri, credentials, existing);
      return { context, ref, digest: existing, pinned: pinnedBy(existing), foundIn: 'registry' };
    }
  }

  let engine: Engine | undefined;
  let built: BuildResult | undefined;
  if (request.build || request.push) {
    engine = await connectEngine(request.dockerHost);
    built = await buildIfMissing(engine, context, ref, listener);
  }

  if (request.push) {
    listener?.({ type: 'step', message: `pushing ${ref}` });
    const pushed = await pushImage(engine!, repo, context.tag, credentials!, listener ? { listener } : {});
    await pushAliases(request, repo.uri, credentials!, pushed.digest);
    const digest = pushed.digest;
    return { context, ref, digest, pinned: pinnedBy(digest), built, pushed, foundIn: 'push' };
  }

  // No push: the registry says whether the tag is there (or, without credentials, this engine's record).
  const digest = await lookupDigest(request, ref, repo.uri, context.tag, credentials, engine);
  return {
    context,
    ref,
    ...(digest ? { digest: digest.digest, pinned: pinnedBy(digest.digest), foundIn: digest.foundIn } : {}),
    ...(built ? { built } : {}),
  };
}

/** Builds `ref` unless the engine has it already; undefined when it did. */
async function buildIfMissing(
  engine: Engine,
  context: BuildContext,
  ref: string,
  listener: ImageListener | undefined,
): Promise<BuildResult | undefined> {
  if (await engine.exists(ref)) {
    listener?.({ type: 'step', message: `${ref} is built already; no build` });
    return undefined;
  }
  listener?.({
    type: 'step',
    message: `building ${ref} (${context.files.length} context files) with BuildKit`,
  });
  return engine.build(await contextTar(context), {
    tags: [ref],
    buildArgs: context.buildArgs,
    labels: { ...context.plan.labels, 'rlvr.content-tag': context.tag },
    ...(listener ? { listener } : {}),
  });
}

/** The registry is the authority when we can ask it; without credentials, the engine's record of a push. */
async function lookupDigest(
  request: ImageRequest,
  ref: string,
  repositoryUri: string,
  tag: string,
  credentials: CredentialSource | undefined,
  engine: Engine | undefined,
): Promise<{ digest: string; foundIn: 'engine' | 'registry' } | undefined> {
  if (credentials) {
    const digest = await remoteDigest(parseRepositoryUri(repositoryUri), tag, credentials);
    return digest ? { digest, foundIn: 'registry' } : undefined;
  }
  let eng = engine;
  if (!eng) {
    try {
      eng = await connectEngine(request.dockerHost);
    } catch {
      return undefined; // no engine and no registry access: nothing to look in
    }
  }
  const local = await eng.inspect(ref);
  const digest = local && digestFromRepoDigests(local.repoDigests, repositoryUri);
  return digest ? { digest, foundIn: 'engine' } : undefined;
}

/** Commit tags and the like: the registry tags the pushed manifest itself, nothing is pushed again. */
async function pushAliases(
  request: ImageRequest,
  repositoryUri: string,
  credentials: CredentialSource,
  digest: string,
): Promise<void> {
  const repo = parseRepositoryUri(repositoryUri);
  for (const alias of request.aliasTags ?? []) {
    if ((await remoteDigest(repo, alias, credentials)) === digest) continue;
    await tagRemote(repo, digest, alias, credentials);
    request.listener?.({ type: 'step', message: `tagged ${repositoryUri}@${digest} as ${alias}` });
  }
}

export interface JobImageOptions {
  readonly build: boolean;
  readonly push: boolean;
  readonly dockerDir?: string;
  readonly buildArgs?: Readonly<Record<string, string>>;
  readonly dockerHost?: string;
  readonly listener?: ImageListener;
}

/** The image a submit runs, when neither --image nor launcher.image names one. */
export interface ImageResolution {
  /** `repository@sha256:…`; undefined when no pushed image matches the trainer's dependencies. */
  readonly uri?: string;
  /** Where the image came from, for the plan. */
  readonly source: string;
  /** Why there is no image, and what to do. */
  readonly note?: string;
  /** What the image says it has (our build's labels), when known. */
  readonly labels?: Readonly<Record<string, string>>;
}

export interface ImageResolveRequest {
  readonly trainerSrc: string;
  readonly repositoryUri: string | undefined;
  /** Registry login; without it, a dry-run looks only in the engine. */
  readonly ecr: IEcr | undefined;
  readonly dryRun: boolean;
}

/** What a submit is handed to find (or build and push) its image. */
export interface ImagePipeline {
  resolve(request: ImageResolveRequest): Promise<ImageResolution>;
}

/** The image pipeline with the submit's image flags (--build, --push, --docker-dir, --build-arg, …). */
export function createImagePipeline(options: JobImageOptions): ImagePipeline {
  return { resolve: (request) => resolveJobImage(options, request) };
}

/**
 * The image a submit runs when none is named: the pipeline's image for the trainer's dependencies,
 * pinned by digest. A dry-run only looks (engine, then registry); a submit builds and pushes when
 * asked to. Returns a note instead of a URI when no pushed image matches.
 */
export async function resolveJobImage(
  options: JobImageOptions,
  request: ImageResolveRequest,
): Promise<ImageResolution> {
  const context = {
    dockerDir: options.dockerDir,
    trainerSrc: request.trainerSrc,
    buildArgs: options.buildArgs,
  };
  if (!request.repositoryUri) {
    // No image to find, but what the pipeline would build is known (and its arguments checked).
    let labels: Readonly<Record<string, string>> | undefined;
    let why = '';
    try {
      const dockerfile = fs.readFileSync(
        path.join(options.dockerDir ?? defaultDockerDir(), 'Dockerfile'),
        'utf8',
      );
      labels = planImageBuild({
        dockerfile,
        trainerSrc: request.trainerSrc,
        flags: options.buildArgs ?? {},
      }).labels;
    } catch (err) {
      if (err instanceof ProblemsError) throw err;
      why = `; and what it would build is not known: ${(err as Error).message}`;
    }
    return {
      source: 'unresolved',
      note: `no image repository is configured, so no image can be looked up${why}`,
      ...(labels ? { labels } : {}),
    };
  }
  const act = !request.dryRun;
  let result: ImageResult;
  try {
    result = await ensureImage({
      context,
      repositoryUri: request.repositoryUri,
      build: act && (options.build || options.push),
      push: act && options.push,
      ...(request.ecr ? { credentials: ecrCredentials(request.ecr) } : {}),
      ...(options.dockerHost ? { dockerHost: options.dockerHost } : {}),
      ...(options.listener ? { listener: options.listener } : {}),
    });
  } catch (err) {
    // A dry-run reports what it could not find; a submit stops on it. Build arguments that contradict
    // the trainer's lock are bad input either way.
    if (request.dryRun && err instanceof RlvrError && !(err instanceof ProblemsError)) {
      return { source: 'unresolved', note: `no image from the image pipeline: ${err.message}` };
    }
    throw err;
  }
  const labels = result.context.plan.labels;
  if (result.pinned) {
    return {
      uri: result.pinned,
      source: `image pipeline, ${result.context.tag} (${result.foundIn})`,
      labels,
    };
  }
  const how = `\`rlvr image push --trainer-src ${request.trainerSrc}\`, or submit with --push`;
  return {
    source: 'unresolved',
    labels,
    note:
      request.dryRun && options.push
        ? `${result.ref} is not in the registry yet: the submit would build and push it`
        : `No pushed image for the trainer's dependencies (${result.ref}). Run ${how}; or pass --image.`,
  };
}

/** What `rlvr image build|push --dry-run` shows: the build, decided, and whether it would run at all. */
export interface ImagePlan {
  readonly context: BuildContext;
  /** `repository:deps-…`, when a repository is configured. */
  readonly ref?: string;
  readonly engine: {
    readonly state: 'has' | 'lacks' | 'unreachable' | 'not asked';
    readonly detail?: string;
  };
  readonly registry: {
    readonly state: 'has' | 'lacks' | 'unreachable' | 'not asked';
    readonly digest?: string;
    readonly detail?: string;
  };
}

export interface ImagePlanRequest {
  readonly context: ContextOptions;
  readonly repositoryUri?: string;
  /** Registry login; without it the registry is not asked. */
  readonly credentials?: CredentialSource;
  /** Why there are no credentials (no AWS, no repository), for the plan. */
  readonly noRegistryReason?: string;
  readonly dockerHost?: string;
}

/**
 * The plan of a build, with no engine needed: the context and its arguments (the lock's checks run
 * here, so a contradiction exits 2 before anything else), then whether the engine or the registry
 * already has the content tag — each asked only if it can be, and said when it cannot.
 */
export async function planImage(request: ImagePlanRequest): Promise<ImagePlan> {
  const context = await assembleContext(request.context);
  if (!request.repositoryUri) {
    const detail = 'no image repository is configured (--repository-uri, or deploy the stack)';
    return { context, engine: { state: 'not asked', detail }, registry: { state: 'not asked', detail } };
  }
  const repo = parseRepositoryUri(request.repositoryUri);
  const ref = `${repo.uri}:${context.tag}`;
  let engine: ImagePlan['engine'];
  try {
    const eng = await connectEngine(request.dockerHost);
    engine = (await eng.exists(ref)) ? { state: 'has' } : { state: 'lacks' };
  } catch (err) {
    engine = { state: 'unreachable', detail: (err as Error).message };
  }
  let registry: ImagePlan['registry'];
  if (!request.credentials) {
    registry = { state: 'not asked', detail: request.noRegistryReason ?? 'no registry credentials' };
  } else {
    try {
      const digest = await remoteDigest(repo, context.tag, cachedCredentials(request.credentials));
      registry = digest ? { state: 'has', digest } : { state: 'lacks' };
    } catch (err) {
      registry = { state: 'unreachable', detail: (err as Error).message };
    }
  }
  return { context, ref, engine, registry };
}

/**
 * The labels of an image named by reference (`--image`): from the engine when it holds it, else from the
 * registry when we can log into it. Undefined when neither can tell.
 */
export async function imageLabels(
  uri: string,
  options: {
    readonly credentials?: CredentialSource;
    readonly registryHost?: string;
    readonly dockerHost?: string;
  },
): Promise<Readonly<Record<string, string>> | undefined> {
  try {
    const local = await (await connectEngine(options.dockerHost)).inspect(uri);
    if (local) return local.labels;
  } catch {
    // no engine here: the registry may still say
  }
  const at = uri.indexOf('@');
  const colon = uri.lastIndexOf(':');
  const [name, reference] =
    at >= 0
      ? [uri.slice(0, at), uri.slice(at + 1)]
      : colon > uri.indexOf('/')
        ? [uri.slice(0, colon), uri.slice(colon + 1)]
        : [uri, 'latest'];
  try {
    const repo = parseRepositoryUri(name);
    if (!options.credentials || repo.registry !== options.registryHost) return undefined;
    return await remoteLabels(repo, reference, cachedCredentials(options.credentials));
  } catch {
    return undefined;
  }
}
