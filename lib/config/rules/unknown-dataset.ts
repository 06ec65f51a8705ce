import type { Problem } from '../../errors';
import { MIXED } from '../../trainers';
import { loaderUses } from '../loader-uses';
import type { KeyPath } from '../yaml-file';
import { didYouMean } from '../zod-problems';
import { presentDataSections } from './data-sections';
import type { TrainingRule } from './rule';

export const unknownDataset: TrainingRule = {
  id: 'RLVR111',
  name: 'unknown-dataset',
  doc: 'a dataset name (or a mixed entry) no loader of the trainer reads: it fails loading its data',
  severity: 'error',
  allowable: false,
  check: (context) => {
    const { config, profile, file, trainerName } = context;
    const problems: Problem[] = [];
    const loaderNames = profile.loaders ? Object.keys(profile.loaders) : undefined;
    const unknown = (name: string, at: KeyPath, accepted: readonly string[], where: string) => {
      const guess = didYouMean(name, accepted);
      problems.push(
        file.problem(
          at,
          `${trainerName} has no dataset "${name}" ${where}${guess ? ` — did you mean "${guess}"?` : ''}`,
          `Use one of ${accepted.join(', ')}.`,
        ),
      );
    };
    for (const { ds, section } of presentDataSections(context)) {
      const accepted = ds.datasets ?? (loaderNames && [...loaderNames, MIXED]);
      if (accepted && !accepted.includes(section.dataset)) {
        unknown(section.dataset, [ds.section, 'dataset'], accepted, `in ${ds.section}`);
      }
      if (section.dataset !== MIXED) continue;
      for (const use of loaderUses(config, [ds.section as 'data' | 'sft_data'])) {
        if (loaderNames && !loaderNames.includes(use.name))
          unknown(use.name, use.nameAt, loaderNames, 'to mix');
      }
    }
    return problems;
  },
};
