import { hasKey } from '../../trainers';
import type { TrainingRule } from './rule';

export const requiredSection: TrainingRule = {
  id: 'RLVR103',
  name: 'required-section',
  doc: 'a section the trainer reads at start-up is missing: it fails after start-up, GPUs billed',
  severity: 'error',
  allowable: false,
  check: ({ profile, raw, file, trainerName }) =>
    profile.requiredSections
      .filter((section) => !hasKey(raw, section))
      .map((section) =>
        file.problem(
          [],
          `${trainerName} needs a "${section}" section`,
          `Add ${section}: … (the trainer reads it at start-up), or pick another trainer with launcher.trainer.`,
        ),
      ),
};
