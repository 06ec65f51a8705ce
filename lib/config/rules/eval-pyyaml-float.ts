import { checkPyyamlFloats } from './pyyaml-float';
import type { EvalRule } from './rule';

export const evalPyyamlFloat: EvalRule = {
  id: 'RLVR201',
  name: 'eval-pyyaml-float',
  doc: 'an eval config number PyYAML (YAML 1.1) reads as a string, e.g. 1e-6',
  severity: 'error',
  allowable: false,
  check: ({ file }) => checkPyyamlFloats(file),
};
