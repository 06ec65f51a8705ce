import * as path from 'node:path';
import { loadTrainerProfiles, type TrainingLoadOptions } from '../config';
import { gitRoot } from '../source';

/**
 * Where a config's trainer source is, and the load options that read the trainer repository's profile
 * file from it — one answer for `submit` and `lint`: --trainer-src > launcher.trainer_src > the git
 * repository holding the config.
 */
export async function trainerSourceOf(
  configAbs: string,
  options: { readonly cwd: string; readonly trainerSrc?: string },
): Promise<{
  readonly configGitRoot: string | undefined;
  readonly sourceRootFor: (launcherSrc: unknown) => string | undefined;
  readonly profiles: NonNullable<TrainingLoadOptions['profiles']>;
}> {
  const configDir = path.dirname(configAbs);
  const configGitRoot = await gitRoot(configDir);
  const sourceRootFor = (launcherSrc: unknown): string | undefined =>
    options.trainerSrc
      ? path.resolve(options.cwd, options.trainerSrc)
      : typeof launcherSrc === 'string'
        ? path.resolve(configDir, launcherSrc)
        : configGitRoot;
  const profiles = (launcher: Record<string, unknown>) => {
    const root = sourceRootFor(launcher.trainer_src);
    return root ? loadTrainerProfiles(root, path.relative(options.cwd, root) || '.') : [];
  };
  return { configGitRoot, sourceRootFor, profiles };
}
