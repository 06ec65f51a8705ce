import * as path from 'node:path';
import {
  loadTrainerProfiles,
  type LoadedConfig,
  type TrainingConfig,
  type TrainingLoadOptions,
} from '../config';
import { ProblemsError, UserError, type Problem } from '../errors';
import { gitRoot, refusedSourceFolder, systemFolderReason } from '../source';

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
    // A system folder is refused with its location once the config is read (checkedSourceRoot): read nothing there.
    return root && !systemFolderReason(root)
      ? loadTrainerProfiles(root, path.relative(options.cwd, root) || '.')
      : [];
  };
  return { configGitRoot, sourceRootFor, profiles };
}

/** What `checkedSourceRoot` reads of a submit's configs (resolve.ts JobConfigs). */
export interface SourceRootInput {
  readonly configAbs: string;
  readonly config: LoadedConfig<TrainingConfig>;
  readonly configGitRoot: string | undefined;
  readonly sourceRootFor: (trainerSrc: string | undefined) => string | undefined;
}

/** Who named the source: the flag, the config's `launcher.trainer_src`, or neither (the config's repository). */
function sourceOrigin(input: SourceRootInput, root: string): 'flag' | 'config' | 'default' {
  const fromConfig = input.config.value.launcher?.trainer_src;
  if (typeof fromConfig === 'string') {
    return path.resolve(path.dirname(input.configAbs), fromConfig) === root ? 'config' : 'flag';
  }
  return root === input.configGitRoot ? 'default' : 'flag';
}

/**
 * The trainer's source folder, once it is known to be one a job may ship: a system folder, the home
 * folder, or a folder that does not belong with the config (source/location.ts) is refused with exit 2
 * naming `launcher.trainer_src` (file:line:column), `--trainer-src`, or the config.
 */
export async function checkedSourceRoot(input: SourceRootInput): Promise<string> {
  const { config } = input;
  const root = input.sourceRootFor(config.value.launcher?.trainer_src);
  if (!root) {
    throw new UserError(
      `${config.displayPath} is not inside a git repository, so the trainer's source is unknown. Pass --trainer-src DIR or set launcher.trainer_src.`,
      'NoTrainerSource',
    );
  }
  const reason = await refusedSourceFolder(root, input);
  if (!reason) return root;
  const message = `the trainer source ${root} ${reason}: nothing in it is packed or uploaded`;
  const hint =
    "Point it at the trainer's repository (a git checkout, or a folder of the config's own); every file in it that is not withheld is uploaded with the job.";
  const origin = sourceOrigin(input, root);
  const problem: Problem =
    origin === 'config'
      ? config.file.problem(['launcher', 'trainer_src'], message, hint)
      : {
          where:
            origin === 'flag' ? '--trainer-src' : `${config.displayPath} (the git repository holding it)`,
          message,
          hint: origin === 'flag' ? hint : `Set launcher.trainer_src or pass --trainer-src. ${hint}`,
        };
  throw new ProblemsError('The trainer source cannot be shipped', [problem]);
}
