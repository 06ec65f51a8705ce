import type { Command } from 'commander';
import { UserError } from '../../lib/errors';
import { ecrCredentials, ensureImage, type ImageResult } from '../../lib/image';
import { SETTINGS_ENV } from '../../lib/layout';
import { formatBytes } from '../output';
import { createReporter } from '../reporter';
import { addSettingsOptions, exits, print, withContext, type SettingsFlagValues } from './common';

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
      .option('--json', 'print JSON')
      .action(
        exits(async (flags: ImageCommandFlags) => {
          const buildArgs = parseBuildArgs(flags.buildArg);
          const result = await withContext(flags, (context) => {
            const repositoryUri = context.settings.values.repositoryUri;
            if (!repositoryUri) {
              throw new UserError(
                `No image repository: pass --repository-uri, set ${SETTINGS_ENV.repositoryUri}, or deploy the infrastructure stack.`,
                'NoRepository',
              );
            }
            return ensureImage({
              context: { dockerDir: flags.dockerDir, trainerSrc: flags.trainerSrc, buildArgs },
              repositoryUri,
              build: true,
              push: Boolean(flags.push),
              credentials: ecrCredentials(context.aws.ecr),
              dockerHost: flags.dockerHost,
              aliasTags: flags.alsoTag,
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
