import type { EvalRule } from './rule';

export const watchSource: EvalRule = {
  id: 'RLVR205',
  name: 'watch-source',
  doc: 'watch.local_dir and watch.s3_prefix both set: the watcher reads one place',
  severity: 'error',
  allowable: false,
  check: ({ config, file }) =>
    config.watch?.local_dir && config.watch.s3_prefix
      ? [file.problem(['watch', 's3_prefix'], 'set either watch.local_dir or watch.s3_prefix, not both')]
      : [],
};
