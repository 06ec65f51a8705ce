import type { TrainingRule } from './rule';

export const numEpochsIgnored: TrainingRule = {
  id: 'RLVR115',
  name: 'num-epochs-ignored',
  doc: 'training.num_epochs set for a trainer that does not read it: training ends at max_steps',
  severity: 'warning',
  allowable: true,
  check: ({ config, profile, file, trainerName }) => {
    const maxSteps = config.training.max_steps;
    if (!profile.ends || !config.training.num_epochs || profile.ends.numEpochs) return [];
    return [
      file.problem(
        ['training', 'num_epochs'],
        `${trainerName} does not read num_epochs: training ends at max_steps${maxSteps ? ` (${maxSteps})` : ''}`,
      ),
    ];
  },
};
