/*
 * The kinds of job the launcher submits, in one registry: each names the mode its container runs
 * (`RLVR_MODE`), the part its job names carry after the team's prefix, what the job log and messages call
 * it, and whether it writes results only (no checkpoints). Every place that treats kinds differently asks
 * the kind found here instead of comparing a mode string; a kind's parts that live higher up (its
 * planner, its program in the container) are registered under the same kind where they live.
 */

import { JOB_ENV } from '../layout';

/** The container's variable naming the kind (unset: training). */
export const MODE_VARIABLE = JOB_ENV.mode;
/** The tag every job carries with its kind's id. */
export const KIND_TAG = 'rlvr:kind';

export interface JobKind {
  /** Its `RLVR_MODE` and `rlvr:kind` value; letters, digits and `-`. */
  readonly id: string;
  /** What the job log and messages call one: `eval job`. */
  readonly what: string;
  /** The part its job names carry after the team's prefix (`<prefix>-eval-…`); none: the prefix alone. */
  readonly namePart?: string;
  /** It writes results, never checkpoints: "completed without a checkpoint" is no incident for it. */
  readonly resultsOnly: boolean;
  /** The kind a container runs when `RLVR_MODE` is unset (training, as jobs were before kinds had modes). */
  readonly isDefault?: boolean;
}

const KINDS = new Map<string, JobKind>();

/** Adds a kind; the same id twice is a programming error unless it is the same kind. */
export function registerJobKind<K extends JobKind>(kind: K): K {
  if (!/^[a-z][a-z0-9-]*$/.test(kind.id))
    throw new Error(`job kind id "${kind.id}": lowercase letters, digits, -`);
  const known = KINDS.get(kind.id);
  if (known && known !== kind) throw new Error(`job kind "${kind.id}" is registered twice`);
  if (kind.isDefault && [...KINDS.values()].some((k) => k.isDefault && k !== kind))
    throw new Error(`job kind "${kind.id}": only one kind runs when ${MODE_VARIABLE} is unset`);
  KINDS.set(kind.id, kind);
  return kind;
}

export const TRAINING_KIND = registerJobKind({
  id: 'train',
  what: 'training job',
  resultsOnly: false,
  isDefault: true,
});
export const EVAL_KIND = registerJobKind({
  id: 'eval',
  what: 'eval job',
  namePart: 'eval',
  resultsOnly: true,
});
export const PASSK_KIND = registerJobKind({
  id: 'passk',
  what: 'pass@k job',
  namePart: 'passk',
  resultsOnly: true,
});

/** The kind registered under `id`, if any. */
export function jobKind(id: string): JobKind | undefined {
  return KINDS.get(id);
}

/**
 * The kind of a job from its environment: `RLVR_MODE`'s kind, the default kind when it is unset, and
 * undefined for a mode no kind has (a job of a newer launcher).
 */
export function kindOfEnvironment(
  environment: Readonly<Record<string, string | undefined>> | undefined,
): JobKind | undefined {
  const mode = environment?.[MODE_VARIABLE];
  if (mode === undefined || mode === '') return [...KINDS.values()].find((k) => k.isDefault);
  return KINDS.get(mode);
}

/** Whether a job of this environment writes results only (an unknown kind is not assumed to). */
export function writesResultsOnly(
  environment: Readonly<Record<string, string | undefined>> | undefined,
): boolean {
  return kindOfEnvironment(environment)?.resultsOnly ?? false;
}

/** The environment entry that makes a container run `kind` (none for the default kind). */
export function modeEnvironment(kind: JobKind): Record<string, string> {
  return kind.isDefault ? {} : { [MODE_VARIABLE]: kind.id };
}

/** The prefix of a kind's job names: the team's prefix, then the kind's part. */
export function kindJobNamePrefix(kind: JobKind, teamPrefix: string): string {
  return kind.namePart ? `${teamPrefix}-${kind.namePart}` : teamPrefix;
}
