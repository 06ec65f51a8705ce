import { titanCheckpointDisabled } from './no-checkpoints';
import type { TrainingRule } from './rule';

export const checkpointEnableForced: TrainingRule = {
  id: 'RLVR117',
  name: 'checkpoint-enable-forced',
  doc: "the trainer role's checkpoint.enable is false, but the trainer forces it on: the setting is moot",
  severity: 'warning',
  allowable: true,
  check: (context) => {
    const forced = context.profile.checkpoints.titanEnableForced;
    if (!forced || !titanCheckpointDisabled(context)) return [];
    return [
      context.file.problem(
        ['roles', context.trainerIndex, 'config', 'checkpoint', 'enable'],
        `is false, but ${context.trainerName} forces it on (${forced})`,
      ),
    ];
  },
};
