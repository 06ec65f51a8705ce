import { findLikelyTypos } from '../typos';
import type { TrainingRule } from './rule';

export const likelyTypo: TrainingRule = {
  id: 'RLVR102',
  name: 'likely-typo',
  doc: "a likely misspelling of a key a trainer reads (an error for the chosen trainer's keys, beside the key it resembles too: one of the two values is not read)",
  severity: 'warning',
  strictSeverity: 'error',
  allowable: true,
  check: ({ config, file, profiles, profile, trainerName }) =>
    findLikelyTypos(config, file, profiles, { profile, trainerName }),
};
