import { findLikelyTypos } from '../typos';
import type { TrainingRule } from './rule';

export const likelyTypo: TrainingRule = {
  id: 'RLVR102',
  name: 'likely-typo',
  doc: "a likely misspelling of a key a trainer reads (an error for the chosen trainer's keys), or one beside the key it resembles (a warning: that key is set)",
  severity: 'warning',
  strictSeverity: 'error',
  allowable: true,
  check: ({ config, file, profiles, profile, trainerName }) =>
    findLikelyTypos(config, file, profiles, { profile, trainerName }),
};
