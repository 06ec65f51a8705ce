import type { TrainingRule } from './rule';

export const unknownLoss: TrainingRule = {
  id: 'RLVR110',
  name: 'unknown-loss',
  doc: 'a loss.name the trainer does not implement: it fails after start-up',
  severity: 'error',
  allowable: false,
  check: ({ config, profile, file, trainerName }) =>
    profile.losses && config.loss?.name !== undefined && !profile.losses.includes(config.loss.name)
      ? [
          file.problem(
            ['loss', 'name'],
            `${trainerName} has no loss "${config.loss.name}"`,
            `Use one of ${profile.losses.join(', ')}.`,
          ),
        ]
      : [],
};
