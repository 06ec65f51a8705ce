/** One thing the pre-flight checked in S3, and what it found. */
export interface PreflightCheck {
  readonly what: string;
  readonly target: string;
  readonly ok: boolean;
  readonly detail: string;
}
