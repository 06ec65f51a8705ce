import type { Finding } from './rules/rule';
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

/** Where a walk stands: the known keys there, and those the chosen trainer itself reads (its profile's `keys`). */
interface Place {
  readonly known: KeyTree;
  readonly chosen?: KeyTree;
  /** The chosen trainer's script, as messages name it. */
  readonly trainerName?: string;
}

const sub = (tree: KeyTree | undefined, key: string): KeyTree | undefined => {
  const child = tree?.[key];
  return child === undefined || child === true ? undefined : child;
};

function typo(
  key: string,
  guess: string,
  beside: boolean,
  at: KeyPath,
  place: Place,
  file: YamlFile,
): Finding {
  // A misspelling of a key the chosen trainer reads: the trainer runs on its default instead, unnoticed.
  const read = place.chosen?.[guess] !== undefined;
  const reader = read && place.trainerName ? place.trainerName : 'The trainer';
  const problem = beside
    ? file.problem(
        [...at, key],
        `"${key}" is a likely misspelling of "${guess}", which is also set: ${reader} reads only "${guess}"`,
        `Remove "${key}" (or, if its value is the one meant, give it to "${guess}" and remove it).`,
        { key: true },
      )
    : file.problem(
        [...at, key],
        `unknown key "${key}" — did you mean "${guess}"?`,
        read
          ? `${reader} reads "${guess}", not "${key}": it would run on its default for "${guess}". Rename it.`
          : `The trainer would not read "${key}"; rename it to "${guess}" (or pass it on with its own spelling if it is new).`,
        { key: true },
      );
  // Beside the key it resembles, one of the two values is not read: the trainer runs on the other one,
  // which may not be the one meant (max_stalenes: 0 beside max_staleness: 1 runs on 1). Keys a trainer
  // reads are never flagged against each other (top_k beside top_p): only an unknown key is a typo.
  return read ? { ...problem, severity: 'error' } : problem;
}

function walk(value: unknown, place: Place, at: KeyPath, file: YamlFile, out: Finding[]): void {
  const { known, chosen } = place;
  if (Array.isArray(value)) {
    const element = known['[]'];
    if (element && element !== true)
      value.forEach((v, i) =>
        walk(v, { ...place, known: element, chosen: sub(chosen, '[]') }, [...at, i], file, out),
      );
    return;
  }
  if (!isMap(value)) return;
  const names = Object.keys(known).filter((k) => k !== '[]');
  for (const [key, child] of Object.entries(value)) {
    const tree = known[key];
    if (tree === undefined) {
      const guess = didYouMean(key, names);
      // Beside the key it resembles, it is as likely a leftover: one of the two values is not read.
      if (guess) out.push(typo(key, guess, guess in value, at, place, file));
      continue;
    }
    if (tree !== true)
      walk(child, { ...place, known: tree, chosen: sub(chosen, key) }, [...at, key], file, out);
  }
}

/** Likely typos against a known-key tree (a config whose keys another program reads). */
export function findTyposAgainst(value: unknown, known: KeyTree, file: YamlFile): Finding[] {
  const out: Finding[] = [];
  walk(value, { known }, [], file, out);
  return out;
}

/**
 * Likely typos in the trainer's part of the config, each at file:line:column of the key. A misspelling of
 * a key the chosen trainer reads (its profile's `keys`) is an error; of a key only another trainer or a
 * role's framework reads, a warning.
 */
export function findLikelyTypos(
  config: unknown,
  file: YamlFile,
  profiles: readonly TrainerProfile[],
  chosen?: { readonly profile: TrainerProfile; readonly trainerName: string },
): Finding[] {
  const out: Finding[] = [];
  const known = knownTrainerKeys(profiles);
  if (!isMap(config)) return out;
  const { roles, ...rest } = config;
  walk(rest, { known, chosen: chosen?.profile.keys, trainerName: chosen?.trainerName }, [], file, out);
  if (Array.isArray(roles)) {
    roles.forEach((role, i) => {
      if (!isMap(role)) return;
      walk(role, { known: (known.roles as KeyTree)['[]'] as KeyTree }, ['roles', i], file, out);
      const tree =
        role.kind === 'titan' ? TITAN_CONFIG_KEYS : role.kind === 'vllm' ? VLLM_CONFIG_KEYS : undefined;
      if (tree) walk(role.config, { known: tree }, ['roles', i, 'config'], file, out);
    });
  }
  return out;
}
