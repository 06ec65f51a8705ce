import type { Problem } from '../../errors';
import { isMap } from '../../trainers';
import type { TrainingConfig } from '../training-schema';
import type { YamlFile } from '../yaml-file';
import { didYouMean } from '../zod-problems';
import { RULE_IDS, type RuleCode, type TrainingRule } from './rule';

/*
 * The config's own say over the rules, in its launcher section:
 * - `allow: {RLVR120: "why"}` silences a rule's findings for this config, with a reason; they are then
 *   returned as allowed (the plan shows them), not as problems. Only rules whose findings would not make
 *   the job fail or lose work may be allowed.
 * - `acknowledge: [sampling-seed]` (the older form, no reason) keeps an incident rule's error as a
 *   warning that names it.
 */

/** Whether a value is a reason: a string with something in it. */
export function isReason(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/** The rule `key` most likely meant: by its name or older acknowledgement id, exact or misspelt. */
function likelyRule(key: string, rules: readonly TrainingRule[]): TrainingRule | undefined {
  const lower = key.toLowerCase();
  const exact = rules.find((r) => r.name === lower || r.acknowledge === lower || r.id === key.toUpperCase());
  if (exact) return exact;
  const name = didYouMean(
    lower,
    rules.map((r) => r.name),
  );
  return rules.find((r) => r.name === name);
}

/** `launcher.allow` read against the rules: the reasons by rule id, and what is wrong with it. */
export function readAllowances(
  config: TrainingConfig,
  file: YamlFile,
  rules: readonly TrainingRule[],
): { reasons: Map<RuleCode, string>; problems: Problem[] } {
  const reasons = new Map<RuleCode, string>();
  const problems: Problem[] = [];
  const allow: unknown = config.launcher?.allow;
  if (!isMap(allow)) return { reasons, problems }; // absent, or a wrong type the schema reports
  const allowable = rules.filter((r) => r.allowable).map((r) => r.id);
  for (const [key, reason] of Object.entries(allow)) {
    const at = ['launcher', 'allow', key];
    const rule = rules.find((r) => r.id === key);
    if (!rule) {
      const guess = likelyRule(key, rules);
      problems.push(
        file.problem(
          at,
          `no rule "${key}"${guess ? ` — did you mean ${guess.id} (${guess.name})?` : ''}`,
          `Rules a config can allow: ${allowable.join(', ')} (rlvr lint --rules says what each guards).`,
          { key: true },
        ),
      );
    } else if (!rule.allowable) {
      problems.push(
        file.problem(
          at,
          `${rule.id} (${rule.name}) cannot be allowed: ${rule.doc}`,
          `Findings that would make the job fail or lose work stay errors: fix the config.${rule.acknowledge ? ` If it is deliberate, add "${rule.acknowledge}" to launcher.acknowledge (the finding stays a warning).` : ''}`,
          { key: true },
        ),
      );
    } else if (!isReason(reason)) {
      problems.push(
        file.problem(
          at,
          `${rule.id} (${rule.name}) needs a reason: why this config may break it`,
          `Write ${rule.id}: "<why>" (the plan shows it with each finding it silences).`,
          { key: true },
        ),
      );
    } else {
      reasons.set(rule.id, reason);
    }
  }
  return { reasons, problems };
}

/** `launcher.acknowledge` names real rules. */
export function acknowledgementProblems(config: TrainingConfig, file: YamlFile): Problem[] {
  const ids: string[] = Object.values(RULE_IDS);
  return (config.launcher?.acknowledge ?? []).flatMap((id, i) => {
    if (ids.includes(id)) return [];
    const guess = didYouMean(id, ids);
    return [
      file.problem(
        ['launcher', 'acknowledge', i],
        `no rule named "${id}"${guess ? ` — did you mean "${guess}"?` : ''}`,
        `Rules that can be acknowledged: ${ids.join(', ')}.`,
      ),
    ];
  });
}
