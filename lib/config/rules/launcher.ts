import type { Problem } from '../../errors';
import { isMap } from '../../trainers';
import type { TrainingConfig } from '../training-schema';
import type { YamlFile } from '../yaml-file';
import { didYouMean } from '../zod-problems';
import { RULE_IDS, type RuleCode, type TrainingRule } from './rule';

/*
 * The config's own say over the rules, in its launcher section: `allow: {RLVR120: "why"}` silences a
 * rule's findings for this config, with a reason; they are then returned as allowed (the plan shows them),
 * not as problems. Only rules whose findings would not make the job fail or lose work may be allowed.
 * `acknowledge: [sampling-seed]` is its older, reason-less form: still accepted so configs written for it
 * keep working (the error stays as a warning that names it), with a warning that says what to write now.
 */

/** The findings about the launcher section's `allow` and `acknowledge`; made by checkTrainingConfig, which reads them before the rules run. */
export const launcherAllow: TrainingRule = {
  id: 'RLVR123',
  name: 'launcher-allow',
  doc: 'launcher.allow names no rule, a rule that cannot be allowed, or no reason; launcher.acknowledge, its older form',
  severity: 'error',
  allowable: false,
  check: () => [],
};

const stamped = (problem: Problem): Problem => ({ ...problem, rule: launcherAllow.id });

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
          'Findings that would make the job fail or lose work stay errors: fix the config.',
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
  return { reasons, problems: problems.map((p) => stamped(p)) };
}

/** `launcher.acknowledge` names real rules (errors), and is the older form of `launcher.allow` (a warning). */
export function acknowledgementProblems(
  config: TrainingConfig,
  file: YamlFile,
  rules: readonly TrainingRule[],
): { errors: Problem[]; warnings: Problem[] } {
  const ids: string[] = Object.values(RULE_IDS);
  const written = config.launcher?.acknowledge ?? [];
  const errors = written.flatMap((id, i) => {
    if (ids.includes(id)) return [];
    const guess = didYouMean(id, ids);
    return [
      stamped(
        file.problem(
          ['launcher', 'acknowledge', i],
          `no rule named "${id}"${guess ? ` — did you mean "${guess}"?` : ''}`,
          `Rules that can be acknowledged: ${ids.join(', ')}. launcher.acknowledge is the older form: write launcher.allow: {RLVR120: "<why>"} instead.`,
        ),
      ),
    ];
  });
  // An id it does not know is an error whose hint already says what to write now.
  if (written.length === 0 || errors.length > 0) return { errors, warnings: [] };
  const named = written.flatMap((id) => rules.filter((r) => r.acknowledge === id));
  const allowable = named.filter((r) => r.allowable);
  const not = named.filter((r) => !r.allowable);
  const instead = allowable.length
    ? `Write launcher.allow: {${allowable.map((r) => `${r.id}: "<why>"`).join(', ')}} instead (the plan shows the reason with each finding it silences).`
    : 'Write launcher.allow: {RLVR…: "<why>"} instead (the plan shows the reason with each finding it silences).';
  const cannot = not.length
    ? ` ${not.map((r) => `${r.id} (${r.name})`).join(', ')} cannot be allowed: the older form still keeps ${not.length > 1 ? 'their findings' : 'its finding'} a warning, but fix the config rather than rely on it.`
    : '';
  const warning = file.problem(
    ['launcher', 'acknowledge'],
    'launcher.acknowledge is the older form of launcher.allow (no reason): still accepted, each acknowledged error stays a warning',
    `${instead}${cannot}`,
    { key: true },
  );
  return { errors, warnings: [stamped(warning)] };
}
