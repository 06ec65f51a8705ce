import type { Problem } from '../../errors';
import type { TrainingRule } from './rule';

export const zeroLearningRate: TrainingRule = {
  id: 'RLVR108',
  name: 'zero-learning-rate',
  doc: 'a trainable titan role with optimizer.lr 0: its weights never change',
  severity: 'warning',
  allowable: true,
  check: ({ config, file }) => {
    const problems: Problem[] = [];
    config.roles.forEach((role, i) => {
      if (role.kind !== 'titan') return;
      if (role.config?.optimizer?.lr === 0 && role.config.trainable !== false) {
        problems.push(
          file.problem(['roles', i, 'config', 'optimizer', 'lr'], 'is 0: the weights never change'),
        );
      }
    });
    return problems;
  },
};
