/** What `rlvr rerun` prints: the plan (text or JSON) and the submitted job. */
import { overrideLiteral, type OverrideValue, type RerunPlan, type RerunResult } from '../lib/operate';
import { forecastCell, forecastSection } from './forecast-output';
import { json } from './submit-output';

/** A value as the config spells it (floats in the form the trainer reads), `(absent)` when not there. */
function shown(value: unknown): string {
  if (value === undefined) return '(absent)';
  const scalar = value === null || ['string', 'number', 'boolean'].includes(typeof value);
  return scalar ? overrideLiteral(value as OverrideValue) : JSON.stringify(value);
}

export function renderRerunPlan(plan: RerunPlan): string {
  const r = plan.request;
  const res = r.ResourceConfig;
  let out = `Rerun of ${plan.rerunOf} as ${plan.jobName} (the first free name is taken at submit)\n`;
  out += `  request: ${plan.rerunOf}'s, from its ${plan.requestSource}; new name, config channel, checkpoints, submit id and the rerun tag\n`;
  out += `  instance: ${res?.InstanceCount ?? 1}× ${res?.InstanceType}${r.EnableManagedSpotTraining ? ' (spot)' : ''}, max runtime ${r.StoppingCondition?.MaxRuntimeInSeconds ?? '?'} s\n`;
  for (const c of plan.checks)
    out += `  ${c.what}: ${c.location} (${c.state}${c.detail ? `: ${c.detail}` : ''})\n`;
  out += `  checkpoints: ${r.CheckpointConfig?.S3Uri ?? '-'}\n`;
  if (plan.keeps)
    out += `  keeps: ${plan.keeps.uri} (${plan.keeps.shards} shard(s) with finished prompts: each resumes from them)\n`;
  out += `  files: ${plan.files.map((f) => f.file).join(', ')}\n`;
  out +=
    plan.changes.length === 0
      ? '  config: unchanged\n'
      : `  config changes (resolved-config.yaml):\n${plan.changes.map((c) => `    ${c.key}: ${shown(c.before)} → ${shown(c.after)}\n`).join('')}`;
  if (plan.forecast)
    out += forecastSection(plan.forecast, (label, value) => `  ${label.padEnd(16)}${value}\n`);
  else out += '\nForecast\n  none: the job recorded no shape to match runs on (submitted before forecasts)\n';
  for (const w of plan.warnings) out += `  warning: ${w}\n`;
  return out;
}

export function rerunPlanJson(plan: RerunPlan) {
  return {
    ok: true,
    dryRun: true,
    rerunOf: plan.rerunOf,
    jobName: plan.jobName,
    requestSource: plan.requestSource,
    createTrainingJobRequest: plan.request,
    changes: plan.changes.map((c) => ({
      key: c.key,
      before: c.before ?? null,
      // JSON numbers lose an integer beyond 2^53 in most readers: such a value is given as its digits.
      after: typeof c.after === 'bigint' ? String(c.after) : c.after,
      absent: c.before === undefined,
    })),
    checks: plan.checks,
    uploads: plan.files.map((f) => f.file),
    forecast: plan.forecast ? { ...plan.forecast.forecast, resultsDir: plan.forecast.resultsDir } : null,
    keeps: plan.keeps ?? null,
    warnings: plan.warnings,
  };
}

export function renderRerun(result: RerunResult, plan: RerunPlan, asJson: boolean): string {
  if (asJson)
    return json({
      ok: true,
      jobName: result.jobName,
      rerunOf: result.rerunOf,
      jobArn: result.jobArn,
      checkpointsUri: result.checkpointsUri,
      consoleUrl: result.consoleUrl,
      jobLog: result.jobLogPath,
      changes: rerunPlanJson(plan).changes,
      createTrainingJobRequest: result.request,
    });
  return (
    plan.warnings.map((w) => `  warning: ${w}\n`).join('') +
    `Submitted ${result.jobName} (rerun of ${result.rerunOf})\n` +
    (plan.forecast ? `  forecast: ${forecastCell(plan.forecast.forecast)}\n` : '') +
    plan.changes.map((c) => `  ${c.key}: ${shown(c.before)} → ${shown(c.after)}\n`).join('') +
    `  checkpoints and traces stream to ${result.checkpointsUri}\n` +
    `  console: ${result.consoleUrl}\n` +
    `  logged in ${result.jobLogPath}\n`
  );
}
