import type { EvalRule } from './rule';

export const olmesSection: EvalRule = {
  id: 'RLVR204',
  name: 'olmes-section',
  doc: 'harness olmes without an olmes section: there are no tasks to run',
  severity: 'error',
  allowable: false,
  check: ({ config, file }) =>
    config.harness === 'olmes' && !config.olmes
      ? [
          file.problem(
            ['harness'],
            'harness is olmes but there is no olmes section',
            'Add olmes: {tasks: […]}.',
          ),
        ]
      : [],
};
