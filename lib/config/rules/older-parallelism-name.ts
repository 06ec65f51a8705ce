import type { Problem } from '../../errors';
import { TITAN_DEGREES, TITAN_DEGREES_CITE } from '../../trainers';
import type { TrainingRule } from './rule';

export const olderParallelismName: TrainingRule = {
  id: 'RLVR109',
  name: 'older-parallelism-name',
  doc: "a titan parallelism degree under its older name: the trainer's config parser counts 1 for it",
  severity: 'warning',
  allowable: true,
  check: ({ config, file }) => {
    const problems: Problem[] = [];
    config.roles.forEach((role, i) => {
      if (role.kind !== 'titan') return;
      const p = role.config?.parallelism ?? {};
      const old = Object.values(TITAN_DEGREES)
        .map(([current, older]) => ({ current, older }))
        .filter(({ older, current }) => older in p && !(current in p));
      for (const { older, current } of old) {
        problems.push(
          file.problem(
            ['roles', i, 'config', 'parallelism', older],
            `"${older}" is the older name: their config parser multiplies ${current} (${TITAN_DEGREES_CITE}) and would count 1 here`,
            `Write ${current}.`,
            { key: true },
          ),
        );
      }
    });
    return problems;
  },
};
