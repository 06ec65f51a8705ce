/** Forecasts and live progress as text: the plan's section, a sweep's column, status and jobs lines. */
import * as path from 'node:path';
import { formatDuration } from '../lib/config';
import {
  roughDuration,
  SHAPE_LABELS,
  type Forecast,
  type ForecastReport,
  type LiveProgress,
  type SimilarRun,
} from '../lib/forecast';

import { formatUsd } from '../lib/job-options';

function perStep(seconds: number): string {
  return `${seconds < 10 ? seconds.toFixed(2) : seconds.toFixed(1)} s`;
}

const VERDICTS: Record<Forecast['verdict'], string> = {
  covers: 'covers it',
  thin: 'covers it with little margin',
  short: 'DOES NOT cover it',
  generous: 'covers it many times over',
  unproven: 'is not known to cover it (rough forecast)',
  unknown: '',
};

/** A folder as the user would type it: relative to the current folder when inside it. */
function shownDir(dir: string): string {
  const rel = path.relative(process.cwd(), dir);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : dir;
}

/** Where the runs came from, as the plan says it. */
function sources(f: Forecast, resultsDir: string): string {
  const fromSageMaker = f.similar.filter((s) => s.source === 'sagemaker').length;
  const fromResults = f.similar.length - fromSageMaker;
  const parts = [
    fromResults ? `${fromResults} in ${shownDir(resultsDir)}` : '',
    fromSageMaker ? `${fromSageMaker} in SageMaker` : '',
  ].filter(Boolean);
  return parts.join(', ');
}

/** The plan's forecast section. */
export function forecastSection(
  planned: ForecastReport,
  row: (label: string, value: string) => string,
): string {
  const f = planned.forecast;
  const matched = f.matchedOn.map((k) => SHAPE_LABELS[k]).join(', ');
  let out = `\nForecast (similar runs: the same ${matched})\n`;
  const sm = planned.sagemaker;
  out += row(
    'looked in',
    `${shownDir(planned.resultsDir)}; SageMaker's ended jobs${sm.read ? '' : `: not read (${sm.note})`}`,
  );
  if (!f.secondsPerStep) {
    const unknown = f.unknownShape ? `, ${f.unknownShape} of them without a shape to compare` : '';
    out += row('similar runs', `none: ${f.why}${unknown}`);
    for (const n of f.nearest)
      out += row('', `${n.id} differs in ${n.differs.map((k) => SHAPE_LABELS[k]).join(', ')}`);
    out += row('', 'no forecast: the plan gives no number it has not measured');
    return out;
  }
  const s = f.secondsPerStep;
  const rough = f.basis === 'rough';
  out += row('similar runs', `${f.similar.length} (${sources(f, planned.resultsDir)})`);
  for (const r of f.similar) out += row('', similarLine(r));
  out += row(
    'per step',
    `${perStep(s.median)} (the runs' average step, checkpoints included; 10–90% of steps: ${perStep(s.p10)}–${perStep(s.p90)})${rough ? ', rough' : ''}`,
  );
  for (const c of f.caveats ?? []) out += row('caveat', c);
  if (f.wallSeconds === undefined) return out + row('to the end', `unknown: ${f.why}`);
  const from = f.fromStep ?? 0;
  const outside = f.outsideMeasured
    ? `${roughDuration(f.outsideSeconds ?? 0)} start-up and final checkpoint`
    : `startup ${roughDuration(f.outsideSeconds ?? 0)}`;
  out += row(
    from > 0 ? `${from} → ${f.maxSteps}` : `to step ${f.maxSteps}`,
    `${rough ? 'at least ' : ''}${roughDuration(f.wallSeconds)} (${outside} + ${f.maxSteps! - from} × ${perStep(s.median)}${from > 0 ? `, resumed at step ${from}` : ''})${rough ? ', rough' : ''}`,
  );
  if (f.cost !== undefined)
    out += row('cost', `${rough ? 'at least ' : ''}${formatUsd(f.cost)} on demand to the last step`);
  const verdict = `${formatDuration(f.maxRuntimeSeconds)} ${VERDICTS[f.verdict]}`;
  const ratio = ` (${(f.maxRuntimeSeconds / f.wallSeconds).toFixed(1)}× the ${rough ? 'rough floor' : 'forecast'})`;
  out += row(
    'max runtime',
    f.verdict === 'short' ? `${verdict}: training stops at about step ${f.cutAtStep}` : `${verdict}${ratio}`,
  );
  return out;
}

/** A similar run as the plan lists it: its rate and what else it measured. */
function similarLine(r: SimilarRun): string {
  const steps =
    r.steps === undefined
      ? `${r.measuredSteps + 1} steps read`
      : `${r.steps}${r.plannedSteps !== undefined ? ` of ${r.plannedSteps}` : ''} steps`;
  const checkpoints =
    r.checkpoints === undefined
      ? 'checkpoints not known'
      : r.checkpoints === 0
        ? 'no checkpoint'
        : `${r.checkpoints} checkpoint${r.checkpoints === 1 ? '' : 's'}`;
  const ended = r.ended ? r.ended.toLowerCase() : 'its end not recorded';
  const alone = r.notAlone ? `; not enough alone: ${r.notAlone}` : '';
  const used = r.used ? '' : ' (not used: the runs enough alone are)';
  return `${r.id} ${perStep(r.secondsPerStep)}/step over ${steps}, ${checkpoints}, ${ended}${alone}${used}`;
}

/** One cell for a sweep's table: the forecast wall time and cost, or why there is none. */
export function forecastCell(f: Forecast): string {
  if (f.wallSeconds === undefined)
    return f.secondsPerStep ? `${perStep(f.secondsPerStep.median)}/step` : 'no similar run';
  const flag = f.verdict === 'short' ? ' (past max runtime)' : '';
  if (f.basis === 'rough') return `≥ ${roughDuration(f.wallSeconds)} (rough)${flag}`;
  return `${roughDuration(f.wallSeconds)}${f.cost !== undefined ? `, ${formatUsd(f.cost)}` : ''}${flag}`;
}

/** A running job's progress line: step N of M, the rate, the ETA, cost so far and at finish. */
export function progressLine(p: LiveProgress): string {
  const step =
    p.step === undefined
      ? 'no step yet'
      : `step ${p.step}${p.maxSteps !== undefined ? ` of ${p.maxSteps}` : ''}`;
  const rate =
    p.secondsPerStep === undefined
      ? ''
      : `, ${perStep(p.secondsPerStep)}/step${p.forecastSecondsPerStep !== undefined ? ` (forecast ${perStep(p.forecastSecondsPerStep)})` : ''}`;
  const eta = p.etaSeconds === undefined ? '' : `, ETA ${roughDuration(p.etaSeconds)}`;
  const cost =
    p.costAtFinish !== undefined
      ? `, cost ${formatUsd(p.costSoFar)} so far, ${formatUsd(p.costAtFinish)} at finish`
      : '';
  return `${step}${rate}${eta}${cost}`;
}

/** A running job in `rlvr jobs`: `step 120/200, ETA 55m`. */
export function progressCell(p: LiveProgress): string {
  if (p.step === undefined) return 'no step yet';
  const of = p.maxSteps !== undefined ? `/${p.maxSteps}` : '';
  return `step ${p.step}${of}${p.etaSeconds !== undefined ? `, ETA ${roughDuration(p.etaSeconds)}` : ''}`;
}
