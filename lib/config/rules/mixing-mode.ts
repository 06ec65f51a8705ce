import { MIXED, MIXED_MODES } from '../../trainers';
import { presentDataSections } from './data-sections';
import type { TrainingRule } from './rule';

export const mixingMode: TrainingRule = {
  id: 'RLVR113',
  name: 'mixing-mode',
  doc: 'a mixed dataset with a mode the trainer does not know: it fails loading its data',
  severity: 'error',
  allowable: false,
  check: (context) =>
    presentDataSections(context)
      .filter(
        ({ section }) =>
          section.dataset === MIXED && section.mode !== undefined && !MIXED_MODES.includes(section.mode),
      )
      .map(({ ds, section }) =>
        context.file.problem(
          [ds.section, 'mode'],
          `"${section.mode}" is not a mixing mode`,
          `Use ${MIXED_MODES.join(' or ')}.`,
        ),
      ),
};
