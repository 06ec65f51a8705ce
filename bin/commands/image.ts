import type { Command } from 'commander';
import { UserError } from '../../lib/errors';
import {
  assembleContext,
  describeArgSource,
  ecrCredentials,
  ensureImage,
  planImage,
  type ImagePlan,
  type ImageResult,
} from '../../lib/image';
import { SETTINGS_ENV } from '../../lib/layout';
import { formatBytes } from '../output';
import { createReporter } from '../reporter';
import { addSettingsOptions, exits, print, settingsOf, withContext, type SettingsFlagValues } from './common';

export interface ImageFlagValues {
  dockerDir?: string;
  buildArg?: string[];
  dockerHost?: string;
}

/** The image flags `rlvr image` and `submit` share. */
export function addImageOptions(command: Command): Command {
  return command
    .option('--docker-dir <dir>', "folder with the image's Dockerfile (default: this package's docker/)")
    .option(
      '--build-arg <key=value>',
      'Dockerfile build argument, e.g. VLLM_VERSION=0.10.2 (repeatable)',
      collect,
    )
    .option('--docker-host <uri>', 'Docker engine, e.g. unix:///var/run/docker.sock (else DOCKER_HOST)');
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function parseBuildArgs(values: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values ?? []) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(v);
    if (!m)
      throw new UserError(
        `--build-arg ${v}: expected KEY=VALUE, e.g. --build-arg VLLM_VERSION=0.10.2`,
        'BadFlag',
      );
    out[m[1]] = m[2];
  }
  return out;
}

interface ImageCommandFlags extends SettingsFlagValues, ImageFlagValues {
  trainerSrc?: string;
  push?: boolean;
  alsoTag?: string[];
  json?: boolean;
  dryRun?: boolean;
}

export function registerImage(program: Command): void {
  const image = program
    .command('image')
    .description(
      'the training image: build it with BuildKit and push it, only when its dependencies changed',
    );
  for (const [name, push] of [
    ['build', false],
    ['push', true],
  ] as const) {
    addImageOptions(addSettingsOptions(image.command(name)))
      .description(
        push
          ? 'build if needed, then push to the repository unless it already has this content tag'
          : 'build the image unless the engine has it (content-addressed tag); --push pushes too',
      )
      .option('--trainer-src <dir>', "the trainer's folder: its dependency files go into the image", '.')
      .option('--push', 'push after building', push)
      .option('--also-tag <tag>', 'another tag for the same image, e.g. git-<commit> (repeatable)', collect)
      .option(
        '--dry-run',
        'print the plan (base image, every build argument and where it came from, the checks, the tag, whether the engine or registry has it) and build nothing; needs no engine or AWS',
      )
      .option('--json', 'print JSON')
      .action(
        exits(async (flags: ImageCommandFlags) => {
          const buildArgs = parseBuildArgs(flags.buildArg);
          const alsoTags = parseAlsoTags(flags.alsoTag);
          const contextOptions = { dockerDir: flags.dockerDir, trainerSrc: flags.trainerSrc, buildArgs };
          if (flags.dryRun) {
            const plan = await imagePlan(flags, contextOptions);
            print(flags, { ...imagePlanJson(plan, Boolean(flags.push)), alsoTags }, () =>
              renderImagePlan(plan, flags.trainerSrc ?? '.', Boolean(flags.push), alsoTags),
            );
            return;
          }
          // The build's arguments are checked against the trainer's lock before AWS or the engine is asked.
          const assembled = await assembleContext(contextOptions);
          const result = await withContext(flags, (context) => {
            const repositoryUri = context.settings.values.repositoryUri;
            if (!repositoryUri) {
              throw new UserError(
                `No image repository: pass --repository-uri, set ${SETTINGS_ENV.repositoryUri}, or deploy the infrastructure stack.`,
                'NoRepository',
              );
            }
            return ensureImage({
              context: contextOptions,
              assembled,
              repositoryUri,
              build: true,
              push: Boolean(flags.push),
              credentials: ecrCredentials(context.aws.ecr),
              dockerHost: flags.dockerHost,
              aliasTags: alsoTags,
              listener: createReporter({ json: Boolean(flags.json) }),
            });
          });
          const summary = imageSummary(result);
          print(flags, summary, () => renderImage(result, summary, Boolean(flags.push)));
        }),
      );
  }
}

function imageSummary(result: ImageResult) {
  return {
    ref: result.ref,
    tag: result.context.tag,
    digest: result.digest ?? null,
    pinned: result.pinned ?? null,
    built: Boolean(result.built),
    cachedSteps: result.built?.steps.filter((s) => s.cached).length ?? 0,
    builtSteps: result.built?.steps.filter((s) => !s.cached).length ?? 0,
    pushed: Boolean(result.pushed),
    pushedLayers: result.pushed?.pushedLayers ?? 0,
    pushedBytes: result.pushed?.pushedBytes ?? 0,
  };
}

function renderImage(result: ImageResult, summary: ReturnType<typeof imageSummary>, push: boolean): string {
  const built = summary.built
    ? `built (${summary.builtSteps} steps run, ${summary.cachedSteps} from cache)`
    : 'no build needed';
  const pushed = push
    ? summary.pushed
      ? `pushed ${summary.pushedLayers} layers (${formatBytes(summary.pushedBytes)})`
      : 'already in the registry'
    : 'not pushed';
  return `${result.pinned ?? result.ref}\n  ${built}; ${pushed}\n`;
}

/** The plan of a build: settings and registry access as a dry-run submit finds them (none needed). */
async function imagePlan(
  flags: ImageCommandFlags,
  context: Parameters<typeof planImage>[0]['context'],
): Promise<ImagePlan> {
  // Required here, not at the top: every `rlvr image` would otherwise load the submission library.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { openSubmitSession } = require('../../lib/submission') as typeof import('../../lib/submission');
  const session = openSubmitSession({ settings: settingsOf(flags), dryRun: true });
  try {
    const connection = await session.connect();
    const repositoryUri = connection.settings.values.repositoryUri;
    return await planImage({
      context,
      ...(repositoryUri ? { repositoryUri } : {}),
      ...(connection.aws ? { credentials: ecrCredentials(connection.aws.ecr) } : {}),
      noRegistryReason: connection.note ?? 'no AWS session',
      ...(flags.dockerHost ? { dockerHost: flags.dockerHost } : {}),
    });
  } finally {
    session.close();
  }
}

function wouldDo(plan: ImagePlan, push: boolean): string {
  if (push && plan.registry.state === 'has') return 'nothing: the registry has this tag';
  const build = plan.engine.state === 'has' ? 'no build (the engine has it)' : 'a build';
  return push ? `${build}, then a push` : build;
}

function imagePlanJson(plan: ImagePlan, push: boolean) {
  const { context } = plan;
  return {
    dryRun: true,
    tag: context.tag,
    ref: plan.ref ?? null,
    baseImage: context.buildArgs.BASE_IMAGE ?? null,
    args: context.plan.args.map((a) => ({
      name: a.name,
      value: a.value,
      from: a.source.kind,
      where: describeArgSource(a.source),
    })),
    dependencyFiles: context.plan.dependencyFiles,
    mainConstraints: context.plan.mainConstraints,
    checks: context.plan.checks,
    labels: context.plan.labels,
    engine: plan.engine,
    registry: plan.registry,
    wouldDo: wouldDo(plan, push),
  };
}

/** A tag as the registry's grammar has it: a registry refuses anything else, after the build. */
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** `--also-tag`: each a valid tag, checked before anything is built (exit 2 naming the one that is not). */
export function parseAlsoTags(values: readonly string[] | undefined): string[] {
  for (const t of values ?? [])
    if (!TAG.test(t))
      throw new UserError(
        `--also-tag ${t}: not a tag (letters, digits, _ . - and at most 128 of them, not starting with . or -), e.g. --also-tag git-1a2b3c4`,
        'BadFlag',
      );
  return [...(values ?? [])];
}

function renderImagePlan(
  plan: ImagePlan,
  trainerSrc: string,
  push: boolean,
  alsoTags: readonly string[] = [],
): string {
  const { context } = plan;
  const width = Math.max(...context.plan.args.map((a) => a.name.length));
  const valueWidth = Math.min(48, Math.max(...context.plan.args.map((a) => a.value.length)));
  const lines = [
    `Image plan  (dry run: nothing is built${push ? ' or pushed' : ''})`,
    `  trainer        ${trainerSrc} (${context.plan.dependencyFiles.join(', ') || 'no dependency files'})`,
    `  base image     ${context.buildArgs.BASE_IMAGE ?? '(the Dockerfile names its own)'}`,
    '  build arguments',
    ...context.plan.args.map(
      (a) =>
        `    ${a.name.padEnd(width)}  ${(a.value === '' ? '""' : a.value).padEnd(valueWidth)}  ← ${describeArgSource(a.source)}`,
    ),
    `  content tag    ${context.tag}${plan.ref ? ` (${plan.ref})` : ''}`,
    ...(alsoTags.length ? [`  also tagged    ${alsoTags.join(', ')}`] : []),
    `  engine         ${plan.engine.state === 'has' ? 'has it' : plan.engine.state === 'lacks' ? 'lacks it' : plan.engine.state}${plan.engine.detail ? ` (${plan.engine.detail})` : ''}`,
    `  registry       ${plan.registry.state === 'has' ? `has it (${plan.registry.digest})` : plan.registry.state === 'lacks' ? 'lacks it' : plan.registry.state}${plan.registry.detail ? ` (${plan.registry.detail})` : ''}`,
    `  would do       ${wouldDo(plan, push)}`,
    '  checks',
    ...(context.plan.checks.length
      ? context.plan.checks.map((c) => `    ${c.ok ? 'ok  ' : 'warn'}  ${c.message}`)
      : ['    (no trainer pins to check against)']),
    `  labels         ${Object.entries(context.plan.labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
  ];
  return `${lines.join('\n')}\n`;
}
