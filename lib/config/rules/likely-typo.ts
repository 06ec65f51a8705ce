import { findLikelyTypos } from '../typos';
import type { TrainingRule } from './rule';

export const likelyTypo: TrainingRule = {
  id: 'RLVR102',
  name: 'likely-typo',
  doc: "a likely misspelling of a key a trainer reads, or one beside the key it resembles: not read (an error for the chosen trainer's keys)",
  severity: 'warning',
  strictSeverity: 'error',
  allowable: true,
  check: ({ config, file, profiles, profile, trainerName }) =>
    findLikelyTypos(config, file, profiles, { profile, trainerName }),
};
