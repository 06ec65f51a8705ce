import type { Problem } from '../../errors';
import { hasKey, isMap, valueAtDotted } from '../../trainers';
import { didYouMean } from '../zod-problems';
import { toPath, type TrainingRule } from './rule';

export const requiredKey: TrainingRule = {
  id: 'RLVR104',
  name: 'required-key',
  doc: 'a key the trainer reads without a default is missing: it fails after start-up, GPUs billed',
  severity: 'error',
  allowable: false,
  check: ({ profile, raw, file, trainerName }) => {
    const problems: Problem[] = [];
    const missing: string[] = [];
    for (const [key, where] of Object.entries(profile.requiredKeys)) {
      const parent = key.split('.').slice(0, -1).join('.');
      if (parent && !hasKey(raw, parent)) continue; // the missing section is reported by required-section
      if (hasKey(raw, key)) continue;
      const siblings = parent ? valueAtDotted(raw, parent) : raw;
      const leaf = key.split('.').pop()!;
      const typo = isMap(siblings) ? didYouMean(leaf, Object.keys(siblings)) : undefined;
      if (!typo) missing.push(key); // a misspelt key is not one the config lacks
      problems.push(
        file.problem(
          typo ? [...toPath(parent), typo] : toPath(parent),
          `${trainerName} reads ${key} without a default (${where}), and it is missing${typo ? ` — is "${typo}" a misspelling of it?` : ''}`,
          typo ? `Rename "${typo}" to "${leaf}".` : `Add ${key}.`,
          { key: Boolean(typo) },
        ),
      );
    }
    // Said once, on the last, and only of configs it describes (those missing the keys it names).
    const said = profile.missingKeysHint;
    const last = problems.pop();
    if (last && said && said.ifMissing.some((k) => missing.includes(k)))
      problems.push({ ...last, hint: `${last.hint ?? ''} ${said.text}`.trim() });
    else if (last) problems.push(last);
    return problems;
  },
};
