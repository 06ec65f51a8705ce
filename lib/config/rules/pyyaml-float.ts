import type { Problem } from '../../errors';
import type { YamlFile } from '../yaml-file';
import { formatTrainerFloat, isPyyamlFloatTrap } from '../yaml-write';
import type { TrainingRule } from './rule';

/** Numbers the trainer's YAML reader (PyYAML, YAML 1.1) would read as strings. */
export function checkPyyamlFloats(file: YamlFile): Problem[] {
  return file
    .scalarsWhere(isPyyamlFloatTrap)
    .map(({ path, source }) =>
      file.problem(
        path,
        `${source} is a number here, but the trainer's YAML reader (PyYAML, YAML 1.1) reads it as the string "${source}"`,
        `Write ${formatTrainerFloat(Number(source))} (a "." before the exponent and a signed exponent).`,
      ),
    );
}

export const pyyamlFloat: TrainingRule = {
  id: 'RLVR101',
  name: 'pyyaml-float',
  doc: 'a number PyYAML (YAML 1.1) reads as a string, e.g. 1e-6: the trainer gets "1e-6", not 0.000001',
  severity: 'error',
  allowable: false,
  check: ({ file }) => checkPyyamlFloats(file),
};
