/** The tag a rerun carries (`rlvr rerun`): the name of the job it reruns. `status` reads it. */
export const RERUN_OF_TAG = 'rlvr:rerun-of';

/** Launcher tags a rerun gives its own values (the submit and a sweep write them). */
export const TAGS = {
  user: 'rlvr:user',
  overrides: 'rlvr:overrides',
  runName: 'rlvr:run-name',
} as const;
