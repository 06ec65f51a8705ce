import type { Problem } from '../../errors';
import type { TrainingRule } from './rule';

export const duplicateRoleName: TrainingRule = {
  id: 'RLVR105',
  name: 'duplicate-role-name',
  doc: 'two roles with one name: the trainer looks roles up by name',
  severity: 'error',
  allowable: false,
  check: ({ config, file }) => {
    const problems: Problem[] = [];
    const seen = new Map<string, number>();
    config.roles.forEach((role, i) => {
      if (seen.has(role.name)) {
        problems.push(
          file.problem(
            ['roles', i, 'name'],
            `role name "${role.name}" is used twice (also roles[${seen.get(role.name)}])`,
          ),
        );
      }
      seen.set(role.name, i);
    });
    return problems;
  },
};
