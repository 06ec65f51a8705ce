import type { Command } from 'commander';
import { UserError } from '../../lib/errors';
import { assembleContext, ecrCredentials, ensureImage, planImage, type ImagePlan } from '../../lib/image';
import { SETTINGS_ENV } from '../../lib/layout';
import { imagePlanJson, imageSummary, renderImage, renderImagePlan } from '../image-output';
import { createReporter } from '../reporter';
import {
  addSettingsOptions,
  collect,
  exits,
  print,
  settingsOf,
  withContext,
  type SettingsFlagValues,
} from './common';
import { addImageOptions, parseAlsoTags, parseBuildArgs, type ImageFlagValues } from './image-flags';

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
