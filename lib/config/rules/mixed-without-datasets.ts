import { MIXED } from '../../trainers';
import { presentDataSections } from './data-sections';
import type { TrainingRule } from './rule';

export const mixedWithoutDatasets: TrainingRule = {
  id: 'RLVR112',
  name: 'mixed-without-datasets',
  doc: 'dataset "mixed" without a datasets list: there is nothing to mix',
  severity: 'error',
  allowable: false,
  check: (context) =>
    presentDataSections(context)
      .filter(({ section }) => section.dataset === MIXED && !section.datasets)
      .map(({ ds }) =>
        context.file.problem(
          [ds.section],
          'dataset "mixed" needs a datasets list',
          `Add ${ds.section}.datasets: [{name, split, weight}].`,
        ),
      ),
};
