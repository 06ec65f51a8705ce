import * as path from 'node:path';
import {
  loadEvalConfig,
  loadTrainingConfig,
  SCHEMA_RULES,
  withRule,
  YamlFile,
  type AllowedFinding,
  type LoadedConfig,
  type TrainingConfig,
} from '../config';
import type { IS3 } from '../aws';
import type { S3Layout } from '../layout';
import { planInputs } from './inputs';
import { checkCurricula, type PreflightCheck } from './preflight';
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
  /** With `curricula`: each order file's ids against its dataset copy in S3. */
  readonly curricula?: readonly PreflightCheck[];
}

/** `rlvr lint --curricula`: where the configs' order files and dataset copies are. */
export interface LintCurricula {
  readonly s3: IS3;
  readonly layout: S3Layout;
  readonly cacheDir?: string;
}

/**
 * Lints one training or eval config (a config with `roles` is a training config). The trainer's
 * repository profile file is read as a submit reads it (trainer-source.ts). Problems in the file are
 * returned, not thrown.
 */
export async function lintConfigFile(
  file: string,
  displayPath = file,
  options: { strict?: boolean; cwd?: string; curricula?: LintCurricula } = {},
): Promise<LintReport> {
  let kind: LintReport['kind'] = 'training';
  try {
    const raw = YamlFile.read(file, displayPath).toJS();
    kind = isMap(raw) && 'roles' in raw ? 'training' : 'eval';
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
    const report: LintReport = {
      file: displayPath,
      kind,
      trainer,
      errors: [],
      warnings: loaded.warnings,
      allowed,
    };
    return options.curricula ? await withCurricula(report, loaded, file, options.curricula) : report;
  } catch (err) {
    // A file that is not YAML is reported as a training config's (its kind cannot be told).
    if (err instanceof ProblemsError) {
      const errors = withRule(err.problems, SCHEMA_RULES[kind].id);
      return { file: displayPath, kind, errors, warnings: [], allowed: [] };
    }
    throw err;
  }
}

/** The curriculum step of the pre-flight on a linted training config (no job, no image). */
async function withCurricula(
  report: LintReport,
  loaded: LoadedConfig<TrainingConfig>,
  file: string,
  curricula: LintCurricula,
): Promise<LintReport> {
  const loaders = loaded.trainer!.profile.loaders;
  const planned = planInputs(loaded.value, loaded.file, curricula.layout, path.dirname(path.resolve(file)), {
    networkIsolation: true,
    loaders,
  });
  if (!planned.inputs) return { ...report, errors: [...report.errors, ...planned.problems] };
  const found = await checkCurricula(curricula.s3, planned.inputs, loaded.file, {
    loaders,
    cacheDir: curricula.cacheDir,
  });
  return {
    ...report,
    errors: [...report.errors, ...found.problems],
    warnings: [...report.warnings, ...found.warnings],
    curricula: found.checks,
  };
}
