import type { TrainingRule } from './rule';

export const greedyRollouts: TrainingRule = {
  id: 'RLVR121',
  name: 'greedy-rollouts',
  doc: 'sampling.temperature 0 with n > 1: all rollouts of a prompt are identical',
  severity: 'warning',
  allowable: true,
  check: ({ config, profile, file }) => {
    const sampling = config.sampling;
    if (!profile.samples || !sampling || sampling.temperature !== 0 || (sampling.n ?? 1) <= 1) return [];
    return [
      file.problem(
        ['sampling', 'temperature'],
        `0 with n=${sampling.n}: all rollouts of a prompt are identical`,
      ),
    ];
  },
};
