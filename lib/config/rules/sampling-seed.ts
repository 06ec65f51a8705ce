import { RULE_IDS, type TrainingRule } from './rule';

export const samplingSeed: TrainingRule = {
  id: 'RLVR120',
  name: 'sampling-seed',
  doc: 'rollouts sampled with a fixed seed: every completion of a prompt comes out the same',
  severity: 'error',
  allowable: true,
  acknowledge: RULE_IDS.samplingSeed,
  check: ({ config, profile, file }) =>
    profile.samples && config.sampling?.seed !== undefined
      ? [
          file.problem(
            ['sampling', 'seed'],
            'a fixed sampling seed makes all n rollouts of a prompt identical (zero GRPO advantage)',
            'Remove sampling.seed; use run.seed or data.seed for a reproducible data order.',
            { key: true },
          ),
        ]
      : [],
};
