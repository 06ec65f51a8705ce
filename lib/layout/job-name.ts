/** The job-name prefix when neither the settings nor the flags give one. */
export const DEFAULT_JOB_NAME_PREFIX = 'annotations-adhoc';

/** Job names: `<prefix>-YYYYMMDD-HHMMSS` in UTC, then `-2`, `-3`, … when taken. */
export const TRAINING_JOB_NAME_PATTERN = /^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/;
export const TRAINING_JOB_NAME_MAX_LENGTH = 63;

export function jobNameTimestamp(date: Date): string {
  const iso = date.toISOString(); // 2026-11-22T04:05:06.789Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

/** The prefix a job's name was made from (`<prefix>-YYYYMMDD-HHMMSS[-N]`), when it was made so. */
export function jobNamePrefixOf(name: string): string | undefined {
  return /^(.+)-\d{8}-\d{6}(-\d+)?$/.exec(name)?.[1];
}

/** The n-th candidate name for a submit at `date` (n = 1 is the plain name). */
export function jobNameCandidate(prefix: string, date: Date, n: number): string {
  const base = `${prefix}-${jobNameTimestamp(date)}`;
  return n <= 1 ? base : `${base}-${n}`;
}

export function isValidTrainingJobName(name: string): boolean {
  return name.length <= TRAINING_JOB_NAME_MAX_LENGTH && TRAINING_JOB_NAME_PATTERN.test(name);
}
