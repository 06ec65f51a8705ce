import type { Problem } from '../../errors';
import type { EvalRule, RuleCode, TrainingRule } from './rule';

/*
 * What is found before the rules can run, while the file is read (lib/config/load.ts): its YAML, a key
 * written twice, values of the wrong type, keys of the launcher's own section it does not know, and (for a
 * training config) which trainer runs it. Their checks are the loader's; these give the findings an id.
 */

export const configSchema: TrainingRule = {
  id: 'RLVR100',
  name: 'config-schema',
  doc: 'the file cannot be read as a training config: YAML, a key written twice, a wrong type, an unknown launcher key, no trainer to run it',
  severity: 'error',
  allowable: false,
  check: () => [],
};

export const evalConfigSchema: EvalRule = {
  id: 'RLVR200',
  name: 'eval-config-schema',
  doc: 'the file cannot be read as an eval config: YAML, a key written twice, a wrong type, an unknown key',
  severity: 'error',
  allowable: false,
  check: () => [],
};

/** The problems, each with the rule's id unless a rule already gave it one. */
export function withRule(problems: readonly Problem[], rule: RuleCode): Problem[] {
  return problems.map((p) => (p.rule ? p : { ...p, rule }));
}
