import * as path from 'node:path';
import { loadEvalConfig, loadTrainingConfig, YamlFile, type AllowedFinding } from '../config';
import { ProblemsError, type Problem } from '../errors';
import { isMap } from '../trainers';
import { trainerSourceOf } from './trainer-source';

/** One config's findings (`rlvr lint`): the checks a submit runs on it, alone, without AWS or an image. */
export interface LintReport {
  readonly file: string;
  readonly kind: 'training' | 'eval';
  /** The trainer that would run a training config, and why. */
  readonly trainer?: { readonly id: string; readonly reason: string };
  /** Problems; those a rule found carry its id (`ruleOf`). */
  readonly errors: readonly Problem[];
  readonly warnings: readonly Problem[];
  /** Findings the config's `launcher.allow` silenced, with its reasons. */
  readonly allowed: readonly AllowedFinding[];
}

/**
 * Lints one training or eval config (a config with `roles` is a training config). The trainer's
 * repository profile file is read as a submit reads it (trainer-source.ts). Problems in the file are
 * returned, not thrown.
 */
export async function lintConfigFile(
  file: string,
  displayPath = file,
  options: { strict?: boolean; cwd?: string } = {},
): Promise<LintReport> {
  const raw = YamlFile.read(file, displayPath).toJS();
  const kind = isMap(raw) && 'roles' in raw ? 'training' : 'eval';
  try {
    if (kind === 'eval') {
      const loaded = loadEvalConfig(file, displayPath);
      return { file: displayPath, kind, errors: [], warnings: loaded.warnings, allowed: [] };
    }
    const source = await trainerSourceOf(path.resolve(file), { cwd: options.cwd ?? process.cwd() });
    const loaded = loadTrainingConfig(file, displayPath, {
      strict: options.strict,
      profiles: source.profiles,
    });
    const trainer = loaded.trainer && { id: loaded.trainer.profile.id, reason: loaded.trainer.reason };
    const allowed = loaded.allowed;
    return { file: displayPath, kind, trainer, errors: [], warnings: loaded.warnings, allowed };
  } catch (err) {
    if (err instanceof ProblemsError)
      return { file: displayPath, kind, errors: err.problems, warnings: [], allowed: [] };
    throw err;
  }
}
