import { YamlFile } from '../config';
import { RlvrError, RuntimeFailure } from '../errors';
import { jobNameTimestamp } from '../layout';
import { newPlanCache, planSubmit, type SubmitInput, type SubmitListener, type SubmitPlan } from './plan';
import { submitPlanned, type SubmitResult } from './submit';
import type { SubmitSession } from '../submission';
import { expandSweep, SWEEP_MAX_JOBS, type SweepAxis, type SweepVariant } from './sweep';

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

/**
 * Validates every combination first: one bad one, or more of them than `maxJobs` (default
 * SWEEP_MAX_JOBS), stops the whole sweep before anything is created.
 */
export async function planSweep(
  configPath: string,
  input: SubmitInput,
  axes: readonly SweepAxis[],
  session: SubmitSession,
  options: { readonly maxJobs?: number } = {},
): Promise<PlannedSweep> {
  const variants = expandSweep(YamlFile.read(configPath), axes, options.maxJobs ?? SWEEP_MAX_JOBS);
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

/**
 * A sweep that stopped after creating some of its jobs (exit 1): they run and bill, so the message
 * names each and how to stop it.
 */
export class SweepIncomplete extends RuntimeFailure {
  constructor(
    readonly created: readonly SubmitResult[],
    readonly total: number,
    cause: unknown,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `The sweep stopped at job ${created.length + 1} of ${total}: ${reason}\n` +
        `${created.length} of its jobs were created and are running; stop those you do not want:\n` +
        created.map((r) => `  rlvr stop ${r.jobName}\n`).join(''),
      cause instanceof RlvrError && cause.code === 'Interrupted' ? 'Interrupted' : 'SweepIncomplete',
      { cause },
    );
    this.name = 'SweepIncomplete';
  }
}

/**
 * Submits the planned jobs one by one, in order (each claims the next free name). A failure, or the
 * signal, after some were created is a SweepIncomplete naming them; before any, the failure itself.
 */
export async function submitSweep(
  sweep: PlannedSweep,
  session: SubmitSession,
  listener?: SubmitListener,
  signal?: AbortSignal,
): Promise<SubmitResult[]> {
  const results: SubmitResult[] = [];
  for (const plan of sweep.plans) {
    try {
      if (signal?.aborted) throw new RuntimeFailure('interrupted (Ctrl-C)', 'Interrupted');
      results.push(await submitPlanned(plan, session, listener, signal));
    } catch (err) {
      if (results.length === 0) throw err;
      throw new SweepIncomplete(results, sweep.plans.length, err);
    }
  }
  return results;
}
