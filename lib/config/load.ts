import * as path from 'node:path';
import type { z } from 'zod';
import { ProblemsError, type Problem } from '../errors';
import { checkEvalConfig, checkTrainingConfig, type CheckResult } from './checks';
import { SCHEMA_RULES, withRule } from './rules';
import type { AllowedFinding, RuleCode } from './rules/rule';
import { evalConfigSchema, type EvalConfig } from './eval-schema';
import { trainingConfigSchema, type TrainingConfig } from './training-schema';
import { BUILT_IN_PROFILES, selectTrainer, type TrainerProfile, type TrainerSelection } from '../trainers';
import { mergeProfiles } from './trainer-profile-file';
import { YamlFile } from './yaml-file';
import { zodIssuesToProblems } from './zod-problems';

export interface LoadedConfig<T> {
  /** The trainer that runs it (training configs only). */
  readonly trainer?: TrainerSelection;
  /** Absolute path of the file. */
  readonly path: string;
  /** The path as the user wrote it (shown in messages). */
  readonly displayPath: string;
  readonly file: YamlFile;
  /** The file's text exactly as written. */
  readonly text: string;
  readonly value: T;
  readonly warnings: readonly Problem[];
  /** Findings the config silences with a reason (`launcher.allow`), shown in the plan. */
  readonly allowed: readonly AllowedFinding[];
}

/** Reads the file; its YAML problems (syntax, aliases, a key written twice) carry `rule`'s id. */
function readFile(filePath: string, displayPath: string, text: string | undefined, rule: RuleCode): YamlFile {
  try {
    return text === undefined ? YamlFile.read(filePath, displayPath) : YamlFile.parse(text, displayPath);
  } catch (err) {
    if (err instanceof ProblemsError) throw new ProblemsError(err.title, withRule(err.problems, rule));
    throw err;
  }
}

function load<T>(
  filePath: string,
  kind: string,
  schema: z.ZodType<T>,
  check: (value: T, file: YamlFile) => CheckResult & { trainer?: TrainerSelection },
  displayPath: string,
  text?: string,
): LoadedConfig<T> {
  const rule = kind === 'eval config' ? SCHEMA_RULES.eval.id : SCHEMA_RULES.training.id;
  const file = readFile(filePath, displayPath, text, rule);
  const raw = file.toJS();
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ProblemsError(`${displayPath} is not a valid ${kind}`, [
      { location: file.locate([]), where: '(top level)', message: 'expected a mapping of sections', rule },
    ]);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const problems = withRule(zodIssuesToProblems(parsed.error.issues, file, schema, raw), rule);
    // Cross-key checks on the raw value too, so one run reports everything; they may trip over
    // values of the wrong type, which the schema problems already name.
    try {
      const reported = new Set(problems.map((p) => p.where));
      problems.push(...check(raw as T, file).errors.filter((p) => !reported.has(p.where)));
    } catch {
      // a wrongly typed value the schema already reported
    }
    throw new ProblemsError(
      `${displayPath} is not a valid ${kind} (${countLabel(problems.length)})`,
      sortByPosition(problems),
    );
  }
  const { errors, warnings, trainer, allowed } = check(parsed.data, file);
  if (errors.length > 0) {
    throw new ProblemsError(
      `${displayPath} is not a valid ${kind} (${countLabel(errors.length)})`,
      sortByPosition(errors),
    );
  }
  return {
    path: path.resolve(filePath),
    displayPath,
    file,
    text: file.text,
    value: parsed.data,
    warnings: [...withRule(file.duplicateKeyWarnings, rule), ...warnings],
    allowed: allowed ?? [],
    trainer,
  };
}

function countLabel(n: number): string {
  return n === 1 ? '1 problem' : `${n} problems`;
}

function sortByPosition(problems: Problem[]): Problem[] {
  return [...problems].sort(
    (a, b) =>
      (a.location?.line ?? 0) - (b.location?.line ?? 0) ||
      (a.location?.column ?? 0) - (b.location?.column ?? 0),
  );
}

export interface TrainingLoadOptions {
  /**
   * Profiles in play besides the built-ins (the trainer repository's own file), found from the config's
   * launcher section (it may name where the trainer's source is).
   */
  readonly profiles?: (launcher: Record<string, unknown>) => readonly TrainerProfile[];
  /** A trainer command given by a flag (it outranks the config's launcher section). */
  readonly trainerCommand?: string;
  /** Likely typos of known keys are errors. */
  readonly strict?: boolean;
}

/** Picks the trainer, then runs its rules; an unknown trainer is a problem of the config. */
function trainingCheck(options: TrainingLoadOptions) {
  return (config: TrainingConfig, file: YamlFile): CheckResult & { trainer?: TrainerSelection } => {
    const launcher = (config as { launcher?: Record<string, unknown> }).launcher ?? {};
    const profiles = mergeProfiles(BUILT_IN_PROFILES, options.profiles?.(launcher) ?? []);
    const trainer = typeof launcher.trainer === 'string' ? launcher.trainer : undefined;
    const configCommand = typeof launcher.trainer_command === 'string' ? launcher.trainer_command : undefined;
    const picked = selectTrainer({
      config,
      trainer,
      command: options.trainerCommand ?? configCommand,
      profiles,
    });
    if ('problem' in picked) {
      const at = picked.problem.at === 'trainer' ? ['launcher', 'trainer'] : [];
      return {
        errors: withRule(
          [file.problem(at, picked.problem.message, picked.problem.hint)],
          SCHEMA_RULES.training.id,
        ),
        warnings: [],
      };
    }
    return {
      ...checkTrainingConfig(config, file, { selection: picked.selection, profiles, strict: options.strict }),
      trainer: picked.selection,
    };
  };
}

export function loadTrainingConfig(
  filePath: string,
  displayPath = filePath,
  options: TrainingLoadOptions = {},
): LoadedConfig<TrainingConfig> {
  return load(filePath, 'training config', trainingConfigSchema, trainingCheck(options), displayPath);
}

/** A training config whose text is given (a sweep variant); `filePath` is where it stands for. */
export function loadTrainingConfigText(
  text: string,
  filePath: string,
  displayPath: string,
  options: TrainingLoadOptions = {},
): LoadedConfig<TrainingConfig> {
  return load(filePath, 'training config', trainingConfigSchema, trainingCheck(options), displayPath, text);
}

export function loadEvalConfig(filePath: string, displayPath = filePath): LoadedConfig<EvalConfig> {
  return load(filePath, 'eval config', evalConfigSchema, checkEvalConfig, displayPath);
}
