import type { Problem } from '../errors';
import {
  isMap,
  mergeKeyTrees,
  SHARED_KEYS,
  TITAN_CONFIG_KEYS,
  VLLM_CONFIG_KEYS,
  type KeyTree,
  type TrainerProfile,
} from '../trainers';
import type { KeyPath, YamlFile } from './yaml-file';
import { didYouMean } from './zod-problems';

/*
 * The trainer's keys are the trainer's: an unknown key passes, unless it is a likely misspelling of a
 * key known at that place (a misspelt `checkpoint_interval` once meant "no checkpoints"). Known keys
 * are those of every profile in play (built-in and the repository's), so a key another trainer reads is
 * never called a typo.
 */

/** The keys known anywhere: shared, each profile's own, and the launcher's section (checked apart). */
function knownTrainerKeys(profiles: readonly TrainerProfile[]): KeyTree {
  return mergeKeyTrees(SHARED_KEYS, ...profiles.map((p) => p.keys), { launcher: true });
}

function walk(value: unknown, known: KeyTree, at: KeyPath, file: YamlFile, out: Problem[]): void {
  if (Array.isArray(value)) {
    const element = known['[]'];
    if (element && element !== true) value.forEach((v, i) => walk(v, element, [...at, i], file, out));
    return;
  }
  if (!isMap(value)) return;
  const names = Object.keys(known).filter((k) => k !== '[]');
  for (const [key, child] of Object.entries(value)) {
    const sub = known[key];
    if (sub === undefined) {
      const guess = didYouMean(key, names);
      if (guess && !(guess in value)) {
        out.push(
          file.problem(
            [...at, key],
            `unknown key "${key}" — did you mean "${guess}"?`,
            `The trainer would not read "${key}"; rename it to "${guess}" (or pass it on with its own spelling if it is new).`,
            { key: true },
          ),
        );
      }
      continue;
    }
    if (sub !== true) walk(child, sub, [...at, key], file, out);
  }
}

/** Likely typos against a known-key tree (a config whose keys another program reads). */
export function findTyposAgainst(value: unknown, known: KeyTree, file: YamlFile): Problem[] {
  const out: Problem[] = [];
  walk(value, known, [], file, out);
  return out;
}

/** Likely typos in the trainer's part of the config, each at file:line:column of the key. */
export function findLikelyTypos(
  config: unknown,
  file: YamlFile,
  profiles: readonly TrainerProfile[],
): Problem[] {
  const out: Problem[] = [];
  const known = knownTrainerKeys(profiles);
  if (!isMap(config)) return out;
  const { roles, ...rest } = config;
  walk(rest, known, [], file, out);
  if (Array.isArray(roles)) {
    roles.forEach((role, i) => {
      if (!isMap(role)) return;
      walk(role, (known.roles as KeyTree)['[]'] as KeyTree, ['roles', i], file, out);
      const tree =
        role.kind === 'titan' ? TITAN_CONFIG_KEYS : role.kind === 'vllm' ? VLLM_CONFIG_KEYS : undefined;
      if (tree) walk(role.config, tree, ['roles', i, 'config'], file, out);
    });
  }
  return out;
}
