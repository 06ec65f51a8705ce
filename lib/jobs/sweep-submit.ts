import { YamlFile } from '../config';
import { jobNameTimestamp } from '../layout';
import { newPlanCache, planSubmit, type SubmitInput, type SubmitListener, type SubmitPlan } from './plan';
import { submitPlanned, type SubmitResult } from './submit';
import type { SubmitSession } from './submit-session';
import { expandSweep, type SweepAxis, type SweepVariant } from './sweep';

/** How a sweep's names are claimed (said with every provisional name). */
export const PROVISIONAL_NAMES =
  'Names are claimed when submitting, in this order; one taken by then moves on to the next free -N suffix';

export interface PlannedSweep {
  readonly sweepId: string;
  readonly variants: readonly SweepVariant[];
  /** One plan per variant; job n carries the n-th name candidate of the sweep's second. */
  readonly plans: readonly SubmitPlan[];
  readonly totalEstimatedCost: number;
}

/** Validates every combination first: one bad one stops the whole sweep before anything is created. */
export async function planSweep(
  configPath: string,
  input: SubmitInput,
  axes: readonly SweepAxis[],
  session: SubmitSession,
): Promise<PlannedSweep> {
  const variants = expandSweep(YamlFile.read(configPath), axes);
  // One second for the whole sweep: job n is the n-th name candidate of it, claimed in order at submit.
  const now = new Date();
  const sweepId = `sweep-${jobNameTimestamp(now)}`;
  const plans: SubmitPlan[] = [];
  const cache = newPlanCache();
  for (const [i, variant] of variants.entries()) {
    const variantInput = {
      ...input,
      now: () => now,
      nameIndex: i + 1,
      configText: { text: variant.text, label: variant.label },
      cache,
      extraTags: { 'rlvr:sweep': sweepId, 'rlvr:overrides': variant.label },
    };
    plans.push(await planSubmit(variantInput, session));
  }
  const totalEstimatedCost = plans.reduce((sum, p) => sum + (p.estimate?.maxRuntimeCost ?? 0), 0);
  return { sweepId, variants, plans, totalEstimatedCost };
}

/** Submits the planned jobs one by one, in order (each claims the next free name). */
export async function submitSweep(
  sweep: PlannedSweep,
  session: SubmitSession,
  listener?: SubmitListener,
): Promise<SubmitResult[]> {
  const results: SubmitResult[] = [];
  for (const plan of sweep.plans) results.push(await submitPlanned(plan, session, listener));
  return results;
}
