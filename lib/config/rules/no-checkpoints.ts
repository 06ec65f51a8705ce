import type { Problem } from '../../errors';
import { RULE_IDS, type TrainingRule } from './rule';

/** The trainer role's `checkpoint.enable: false`, when the trainer does not force it back on. */
export function titanCheckpointDisabled({
  config,
  trainerIndex,
}: Parameters<TrainingRule['check']>[0]): boolean {
  const trainer = trainerIndex >= 0 ? config.roles[trainerIndex] : undefined;
  return trainer?.kind === 'titan' && trainer.config?.checkpoint?.enable === false;
}

export const noCheckpoints: TrainingRule = {
  id: 'RLVR116',
  name: 'no-checkpoints',
  doc: 'a trainer or config that saves no checkpoint: the job would end "Completed" with none in S3',
  severity: 'error',
  // The work of the job would be lost; only the older, visible acknowledgement turns it into a warning.
  allowable: false,
  acknowledge: RULE_IDS.noCheckpoints,
  check: (context) => {
    const { config, profile, file, trainerName, trainerIndex } = context;
    const problems: Problem[] = [];
    if (!profile.checkpoints.writes) {
      problems.push(
        file.problem(
          config.launcher?.trainer
            ? ['launcher', 'trainer']
            : config.launcher?.trainer_command
              ? ['launcher', 'trainer_command']
              : [],
          `${trainerName} saves no checkpoints: the job would finish "Completed" with none in S3`,
          'Use a trainer that exports checkpoints (e.g. launcher.trainer: grpo-sft).',
        ),
      );
    }
    if (titanCheckpointDisabled(context) && !profile.checkpoints.titanEnableForced) {
      problems.push(
        file.problem(
          ['roles', trainerIndex, 'config', 'checkpoint', 'enable'],
          'checkpointing is disabled: the job would finish "Completed" with no checkpoint in S3',
          'Set enable: true (checkpoints stream to S3 as they are written).',
        ),
      );
    }
    return problems;
  },
};
