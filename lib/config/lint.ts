import * as fs from 'node:fs';
import * as path from 'node:path';
import { ProblemsError, type Problem } from '../errors';
import { isMap } from '../trainers/config-tree';
import { loadEvalConfig, loadTrainingConfig } from './load';
import { loadTrainerProfiles } from './trainer-profile-file';
import { YamlFile } from './yaml-file';

/** One config's findings (`rlvr lint`): the checks a submit runs on it, alone, without AWS or an image. */
export interface LintReport {
  readonly file: string;
  readonly kind: 'training' | 'eval';
  /** The trainer that would run a training config, and why. */
  readonly trainer?: { readonly id: string; readonly reason: string };
  readonly errors: readonly Problem[];
  readonly warnings: readonly Problem[];
}

function gitRoot(dir: string): string | undefined {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, '.git'))) return d;
    if (path.dirname(d) === d) return undefined;
  }
}

/**
 * Lints one training or eval config (a config with `roles` is a training config). The trainer's
 * repository profile file is read as a submit would: from `launcher.trainer_src`, else the git
 * repository holding the config. Problems in the file are returned, not thrown.
 */
export function lintConfigFile(
  file: string,
  displayPath = file,
  options: { strict?: boolean } = {},
): LintReport {
  const raw = YamlFile.read(file, displayPath).toJS();
  const kind = isMap(raw) && 'roles' in raw ? 'training' : 'eval';
  try {
    if (kind === 'eval') {
      const loaded = loadEvalConfig(file, displayPath);
      return { file: displayPath, kind, errors: [], warnings: loaded.warnings };
    }
    const loaded = loadTrainingConfig(file, displayPath, {
      strict: options.strict,
      profiles: (launcher) => {
        const src = launcher.trainer_src;
        const root =
          typeof src === 'string' ? path.resolve(path.dirname(file), src) : gitRoot(path.dirname(file));
        return root ? loadTrainerProfiles(root, path.relative(process.cwd(), root) || '.') : [];
      },
    });
    const trainer = loaded.trainer && { id: loaded.trainer.profile.id, reason: loaded.trainer.reason };
    return { file: displayPath, kind, trainer, errors: [], warnings: loaded.warnings };
  } catch (err) {
    if (err instanceof ProblemsError) return { file: displayPath, kind, errors: err.problems, warnings: [] };
    throw err;
  }
}
