/** Names of the files the launcher uploads under `jobs/<job>/` (and the entrypoint reads). */
export const JOB_FILES = {
  /** Written first, with If-None-Match: claims the job name across machines. */
  reservation: 'reservation.json',
  configAsWritten: 'config.yaml',
  resolvedConfig: 'resolved-config.yaml',
  evalConfig: 'eval-config.yaml',
  plan: 'plan.json',
  /** What the entrypoint must know of the trainer at run time (lib/trainers/job-contract.ts). */
  contract: 'contract.json',
  /** The exact CreateTrainingJob request the job was created with (no secrets): what a rerun resubmits. */
  request: 'request.json',
  patchesDir: 'patches/',
} as const;
export type JobFile = (typeof JOB_FILES)[keyof typeof JOB_FILES];

/** Source-state capture, in `jobs/<job>/patches/` and the run folder's `patches/`. */
export const PATCH_FILES = {
  status: 'git_status.txt',
  diff: 'git_diff.patch',
  diffCached: 'git_diff_cached.patch',
  untracked: 'git_untracked.txt',
  commit: 'git_commit.txt',
} as const;
