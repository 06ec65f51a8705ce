import type { TrainingRule } from './rule';

export const trainerRoleKind: TrainingRule = {
  id: 'RLVR107',
  name: 'trainer-role-kind',
  doc: 'the role named "trainer" is not a titan role: the trainer cannot train it',
  severity: 'error',
  allowable: false,
  check: ({ config, file, trainerIndex }) =>
    trainerIndex >= 0 && config.roles[trainerIndex].kind !== 'titan'
      ? [file.problem(['roles', trainerIndex, 'kind'], 'the trainer role must be of kind "titan"')]
      : [],
};
