import { formatDuration } from '../config';
import type { Forecast } from './forecast';
import { roughDuration } from './format';

/** What a forecast says of the max runtime, in words: an error (it cannot cover the job) or a warning. */
export interface RuntimeVerdict {
  readonly severity: 'error' | 'warning';
  readonly message: string;
  /** The max runtime that covers the forecast with its margin. */
  readonly fits: string;
}

export function runtimeVerdict(f: Forecast): RuntimeVerdict | undefined {
  if (f.wallSeconds === undefined || f.secondsPerStep === undefined || f.maxSteps === undefined)
    return undefined;
  const used = f.similar.filter((s) => s.used).length;
  const runs = `${used} similar run${used === 1 ? '' : 's'}`;
  const rough = f.basis === 'rough';
  const basis = `${f.maxSteps} steps at ${f.secondsPerStep.median.toFixed(1)} s/step (${runs}) take ${rough ? 'at least' : 'about'} ${roughDuration(f.wallSeconds)}`;
  const runtime = formatDuration(f.maxRuntimeSeconds);
  const fits = formatDuration(f.fitsSeconds!);
  // A forecast from runs not enough alone is a floor: it can say a runtime is too short (a warning: the
  // floor itself is rough), never that one is enough.
  const caveat = rough ? ` (rough: ${f.similar.map((s) => `${s.id}: ${s.notAlone}`).join('; ')})` : '';
  if (rough && f.verdict === 'short')
    return {
      severity: 'warning',
      message: `max runtime ${runtime} would stop training at about step ${f.cutAtStep} of ${f.maxSteps} even on a rough forecast: ${basis}${caveat}`,
      fits,
    };
  if (rough)
    return {
      severity: 'warning',
      message: `the forecast cannot say whether max runtime ${runtime} covers the job: ${basis}${caveat}`,
      fits,
    };
  switch (f.verdict) {
    case 'short':
      return {
        severity: 'error',
        message: `max runtime ${runtime} would stop training at about step ${f.cutAtStep} of ${f.maxSteps}: ${basis}`,
        fits,
      };
    case 'thin':
      return {
        severity: 'warning',
        message: `max runtime ${runtime} leaves little margin: ${basis}; a slower run would be stopped before its last step`,
        fits,
      };
    case 'generous':
      return {
        severity: 'warning',
        message: `max runtime ${runtime} is over ${Math.floor(f.maxRuntimeSeconds / f.wallSeconds)}× the forecast (${basis}): a run that hangs is paid for until then`,
        fits,
      };
    default:
      return undefined;
  }
}
