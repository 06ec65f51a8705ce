import { formatDuration } from '../config';
import type { LiveProgress } from './live';

/* How forecasts and progress read, for the CLI and the dashboard alike. */

/** A duration rounded to the minute (to the second under one). */
export function roughDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return formatDuration(s >= 60 ? Math.round(s / 60) * 60 : s);
}

/** The warning for a running job whose ETA is past its remaining max runtime. */
export function pastRuntimeLine(p: LiveProgress): string | undefined {
  if (!p.pastMaxRuntime) return undefined;
  return `ETA ${roughDuration(p.etaSeconds!)} is past the ${roughDuration(p.remainingRuntimeSeconds!)} of max runtime left: SageMaker will stop it at about step ${p.cutAtStep}${p.maxSteps !== undefined ? ` of ${p.maxSteps}` : ''}, before its last checkpoint`;
}
