import * as path from 'node:path';
import type { z } from 'zod';
import { ProblemsError, type Problem } from '../errors';
import { checkEvalConfig, checkTrainingConfig, type CheckResult } from './checks';
import { evalConfigSchema, type EvalConfig } from './eval-schema';
import { trainingConfigSchema, type TrainingConfig } from './training-schema';
import { YamlFile } from './yaml-file';
import { zodIssuesToProblems } from './zod-problems';

export interface LoadedConfig<T> {
  /** Absolute path of the file. */
  readonly path: string;
  /** The path as the user wrote it (shown in messages). */
  readonly displayPath: string;
  readonly file: YamlFile;
  /** The file's text exactly as written. */
  readonly text: string;
  readonly value: T;
  readonly warnings: readonly Problem[];
}

function load<T>(
  filePath: string,
  kind: string,
  schema: z.ZodType<T>,
  check: (value: T, file: YamlFile) => CheckResult,
  displayPath: string,
  text?: string,
): LoadedConfig<T> {
  const file = text === undefined ? YamlFile.read(filePath, displayPath) : YamlFile.parse(text, displayPath);
  const raw = file.toJS();
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ProblemsError(`${displayPath} is not a valid ${kind}`, [
      { location: file.locate([]), where: '(top level)', message: 'expected a mapping of sections' },
    ]);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const problems = zodIssuesToProblems(parsed.error.issues, file, schema, raw);
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
  const { errors, warnings } = check(parsed.data, file);
  if (errors.length > 0) {
    throw new ProblemsError(
      `${displayPath} is not a valid ${kind} (${countLabel(errors.length)})`,
      sortByPosition(errors),
    );
  }
  return { path: path.resolve(filePath), displayPath, file, text: file.text, value: parsed.data, warnings };
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

export function loadTrainingConfig(filePath: string, displayPath = filePath): LoadedConfig<TrainingConfig> {
  return load(filePath, 'training config', trainingConfigSchema, checkTrainingConfig, displayPath);
}

/** A training config whose text is given (a sweep variant); `filePath` is where it stands for. */
export function loadTrainingConfigText(
  text: string,
  filePath: string,
  displayPath: string,
): LoadedConfig<TrainingConfig> {
  return load(filePath, 'training config', trainingConfigSchema, checkTrainingConfig, displayPath, text);
}

export function loadEvalConfig(filePath: string, displayPath = filePath): LoadedConfig<EvalConfig> {
  return load(filePath, 'eval config', evalConfigSchema, checkEvalConfig, displayPath);
}
