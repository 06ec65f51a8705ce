import { findLikelyTypos } from '../typos';
import type { TrainingRule } from './rule';

export const likelyTypo: TrainingRule = {
  id: 'RLVR102',
  name: 'likely-typo',
  doc: 'a likely misspelling of a key the trainer reads: the trainer would silently not read it',
  severity: 'warning',
  strictSeverity: 'error',
  allowable: true,
  check: ({ config, file, profiles }) => findLikelyTypos(config, file, profiles),
};
