/** One finding of `rlvr doctor`, with what to do about it. */
export type CheckLevel = 'ok' | 'warn' | 'fail';

export interface DoctorCheck {
  readonly name: string;
  readonly level: CheckLevel;
  readonly detail: string;
  /** What to do about it. */
  readonly fix?: string;
}
