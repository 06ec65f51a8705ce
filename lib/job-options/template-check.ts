import { YamlFile, type JobTemplate } from '../config';
import { resolveJobOptions } from './options';

/**
 * A job template checked on its own, as the stack does at synth: a name the launcher can select, and
 * values the option checks accept (instance type, GPU split, runtime, spot, warm pool). Pure; returns
 * every problem, empty when the template is good.
 */
export function templateProblems(name: string, values: JobTemplate): string[] {
  const problems = templateNameProblems(name);
  const checked = resolveJobOptions({
    flags: {},
    launcher: undefined,
    configFile: YamlFile.parse('{}', 'template'),
    template: { name, values },
    hasEvalConfig: false,
  });
  problems.push(...checked.problems.map((p) => `${p.where}: ${p.message}`));
  return problems;
}

/** A name `--template NAME` can select, and an SSM parameter name can hold. */
export function templateNameProblems(name: string): string[] {
  return /^[a-z0-9][a-z0-9-]{0,62}$/.test(name)
    ? []
    : [`name "${name}" must be lowercase letters, digits and "-"`];
}
