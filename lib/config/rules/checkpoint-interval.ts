import { hasKey, valueAtDotted } from '../../trainers';
import { toPath, type TrainingRule } from './rule';

export const checkpointInterval: TrainingRule = {
  id: 'RLVR118',
  name: 'checkpoint-interval',
  doc: 'a checkpoint interval of 0 or above max_steps: only the final checkpoint is saved',
  severity: 'warning',
  allowable: true,
  check: ({ config, raw, profile, file, trainerName }) => {
    const intervalKey = profile.checkpoints.intervalKey;
    if (!profile.checkpoints.writes || !intervalKey) return [];
    const maxSteps = config.training.max_steps;
    const interval = valueAtDotted(raw, intervalKey) ?? profile.checkpoints.intervalDefault;
    if (hasKey(raw, intervalKey) && !interval) {
      return [
        file.problem(
          toPath(intervalKey),
          `is ${String(valueAtDotted(raw, intervalKey))}: ${trainerName} saves only the final checkpoint`,
        ),
      ];
    }
    if (typeof interval === 'number' && typeof maxSteps === 'number' && maxSteps > 0 && interval > maxSteps) {
      return [
        file.problem(
          toPath(intervalKey),
          `is larger than max_steps (${maxSteps}): only the final checkpoint will be saved`,
        ),
      ];
    }
    return [];
  },
};
