import type { TrainingRule } from './rule';

export const missingRole: TrainingRule = {
  id: 'RLVR106',
  name: 'missing-role',
  doc: 'a role the trainer looks up by name is not in roles: it fails after start-up',
  severity: 'error',
  allowable: false,
  check: ({ config, profile, file, trainerName }) => {
    const names = new Set(config.roles.map((r) => r.name));
    const missing = profile.requiredRoles.filter((r) => !names.has(r));
    if (missing.length === 0) return [];
    return [
      file.problem(
        ['roles'],
        `${trainerName} looks up the role${missing.length > 1 ? 's' : ''} ${missing.map((r) => `"${r}"`).join(', ')}, which the config does not have`,
        `Add ${missing.map((r) => `{name: ${r}, kind: ${r === 'trainer' ? 'titan' : 'vllm'}, config: …}`).join(', ')}.`,
      ),
    ];
  },
};
