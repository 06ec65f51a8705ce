import { EVAL_CONFIG_KEYS } from '../../trainers';
import { findTyposAgainst } from '../typos';
import type { EvalRule } from './rule';

export const evalLikelyTypo: EvalRule = {
  id: 'RLVR202',
  name: 'eval-likely-typo',
  doc: 'a likely misspelling of a key the eval script reads: it would silently not be read',
  severity: 'warning',
  allowable: false,
  check: ({ config, file }) => findTyposAgainst(config, EVAL_CONFIG_KEYS, file),
};
