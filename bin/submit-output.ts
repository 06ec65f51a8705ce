/** What `rlvr submit` prints once it is done: the submitted job, a sweep, a local run, a waited job. */
import { formatProblem } from '../lib/errors';
import { PROVISIONAL_NAMES, type PlannedSweep, type SubmitResult } from '../lib/training';
import { type WaitResult } from '../lib/operate';
import { formatUsd, PRICES_AS_OF, PRICES_SOURCE } from '../lib/job-options';
import type { LocalSubmitResult } from '../lib/local';
import { table } from './commands/common';
import { forecastCell } from './forecast-output';
import { planJson } from './plan-output';

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function renderSubmitted(result: SubmitResult, asJson: boolean): string {
  if (asJson) {
    return json({
      ok: true,
      jobName: result.jobName,
      jobArn: result.jobArn,
      checkpointsUri: result.checkpointsUri,
      consoleUrl: result.consoleUrl,
      jobLog: result.jobLogPath,
      createTrainingJobRequest: { ...result.plan.request, TrainingJobName: result.jobName },
    });
  }
  const warnings = result.plan.warnings.map((w) => `  warning: ${formatProblem(w)}\n`).join('');
  return (
    `${warnings}Submitted ${result.jobName}\n` +
    `  forecast: ${forecastCell(result.plan.forecast.forecast)}\n` +
    `  checkpoints and traces stream to ${result.checkpointsUri}\n` +
    `  console: ${result.consoleUrl}\n` +
    `  logged in ${result.jobLogPath}\n`
  );
}

export function renderSweepPlan(sweep: PlannedSweep, asJson: boolean): string {
  const { sweepId, variants, plans, totalEstimatedCost } = sweep;
  if (asJson) {
    const jobs = plans.map((p, i) => ({ overrides: variants[i].label, ...planJson(p) }));
    return json({
      ok: true,
      dryRun: true,
      sweepId,
      namesProvisional: PROVISIONAL_NAMES,
      jobCount: jobs.length,
      jobs,
      totalEstimatedCost,
    });
  }
  const rows = plans.map((p, i) => [
    p.jobName,
    variants[i].label,
    forecastCell(p.forecast.forecast),
    formatUsd(p.estimate?.maxRuntimeCost),
    p.description,
  ]);
  return (
    `Sweep ${sweepId}: ${plans.length} jobs (dry run: nothing was created)\n\n` +
    table(['JOB (PROVISIONAL)', 'OVERRIDES', 'FORECAST', 'MAX COST', 'DESCRIPTION'], rows) +
    `\n${PROVISIONAL_NAMES}.\nEstimated at most ${formatUsd(totalEstimatedCost)} in all (on-demand price × max runtime; ${PRICES_SOURCE}, ${PRICES_AS_OF}).\n`
  );
}

export function renderSweepSubmitted(
  sweep: PlannedSweep,
  results: readonly SubmitResult[],
  asJson: boolean,
): string {
  const { sweepId, variants } = sweep;
  if (asJson) {
    const jobs = results.map((r, i) => ({
      jobName: r.jobName,
      overrides: variants[i].label,
      checkpointsUri: r.checkpointsUri,
    }));
    return json({ ok: true, sweepId, jobs });
  }
  return (
    `Submitted sweep ${sweepId}: ${results.length} jobs\n` +
    table(
      ['JOB', 'OVERRIDES'],
      results.map((r, i) => [r.jobName, variants[i].label]),
    ) +
    `logged in ${results[0]?.jobLogPath}; watch them with \`rlvr jobs --name-contains ${sweepId.slice(6, 14)}\`\n`
  );
}

/** The end of `--wait`: the final status and the post-job verdict (text), and the JSON result. */
export function renderWaited(result: WaitResult): { text: string; json: string } {
  const { report } = result;
  const text =
    `${result.jobName} ended: ${result.status}${result.failureReason ? ` (${result.failureReason})` : ''}\n` +
    `  results: ${report.checkpointsUri} (${report.checkpoints.count} checkpoints${report.checkpoints.final ? ', final present' : ''})\n` +
    (report.problem ? `  WARNING: ${report.problem}\n` : '');
  return {
    text,
    json: json({
      ok: result.ok,
      jobName: result.jobName,
      status: result.status,
      problem: report.problem ?? null,
      checkpointsUri: report.checkpointsUri,
    }),
  };
}

export function renderLocalRun(result: LocalSubmitResult, asJson: boolean): string {
  return asJson
    ? json({ ok: result.exitCode === 0, ...result })
    : `• exit ${result.exitCode}; run folder ${result.runDir}\n`;
}
