import { hasKey } from '../../trainers';
import type { TrainingRule } from './rule';

export const nothingEndsTraining: TrainingRule = {
  id: 'RLVR114',
  name: 'nothing-ends-training',
  doc: 'neither max_steps nor (where read) num_epochs is set: the job runs, paid, until max_runtime',
  severity: 'error',
  allowable: false,
  check: ({ config, raw, profile, file, trainerName }) => {
    const maxSteps = config.training.max_steps;
    const epochs = config.training.num_epochs;
    const ends = profile.ends;
    if (!ends || maxSteps || (ends.numEpochs && epochs) || ends.maxStepsDefault) return [];
    return [
      file.problem(
        hasKey(raw, 'training.max_steps')
          ? ['training', 'max_steps']
          : hasKey(raw, 'training.num_epochs')
            ? ['training', 'num_epochs']
            : ['training'],
        `nothing ends training: ${trainerName} stops at training.max_steps${ends.numEpochs ? ' or training.num_epochs' : ''}, and ${ends.numEpochs ? 'neither is set' : 'it is not set'}`,
        'Set training.max_steps (the job would otherwise run, paid, until max_runtime).',
      ),
    ];
  },
};
