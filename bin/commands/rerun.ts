import type { Command } from 'commander';
import {
  overrideLiteral,
  parseSetFlag,
  planRerun,
  submitRerun,
  type OverrideValue,
  type RerunPlan,
  type RerunResult,
} from '../../lib/operate';
import { writableJobLogPath } from '../../lib/submission';
import { withInterrupt } from '../interrupt';
import { createReporter } from '../reporter';
import { forecastCell, forecastSection } from '../forecast-output';
import { json } from '../submit-output';
import { addSettingsOptions, exits, withContext, type JsonFlag, type SettingsFlagValues } from './common';

interface RerunFlags extends SettingsFlagValues, JsonFlag {
  set?: string[];
  add?: string[];
  setString?: string[];
  dryRun?: boolean;
  jobLog?: string;
  resultsDir?: string;
}

/** A value as the config spells it (floats in the form the trainer reads), `(absent)` when not there. */
function shown(value: unknown): string {
  if (value === undefined) return '(absent)';
  const scalar = value === null || ['string', 'number', 'boolean'].includes(typeof value);
  return scalar ? overrideLiteral(value as OverrideValue) : JSON.stringify(value);
}

function renderRerunPlan(plan: RerunPlan): string {
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

function planJson(plan: RerunPlan) {
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

function renderRerun(result: RerunResult, plan: RerunPlan, asJson: boolean): string {
  if (asJson)
    return json({
      ok: true,
      jobName: result.jobName,
      rerunOf: result.rerunOf,
      jobArn: result.jobArn,
      checkpointsUri: result.checkpointsUri,
      consoleUrl: result.consoleUrl,
      jobLog: result.jobLogPath,
      changes: planJson(plan).changes,
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

export function registerRerun(program: Command): void {
  addSettingsOptions(program.command('rerun'))
    .description(
      'submit a job again exactly as it ran (same image, source archive, config, options) under a new name',
    )
    .argument('<job>', 'training job name')
    .option(
      '--set <key=value>',
      'change a key of the config the trainer reads, by dotted path (run.seed=7); repeatable',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--set-string <key=value>',
      'like --set, with the value taken as text whatever it looks like (yes, 007, 2024-01-01); repeatable',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--add <key=value>',
      'add a key the config does not have (--set refuses a new key that looks like a misspelling); repeatable',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--dry-run', 'print the plan (and the request) without creating anything')
    .option('--job-log <file>', 'job log to append to (default: docs/job_log.md of this repository)')
    .option(
      '--results-dir <dir>',
      'where the forecast finds past runs (rlvr download, submit --local)',
      'results',
    )
    .option('--json', 'print JSON')
    .action(
      exits(async (job: string, flags: RerunFlags) => {
        // A malformed --set/--add is bad input reported before any setting is resolved or AWS asked.
        for (const f of flags.set ?? []) parseSetFlag(f);
        for (const f of flags.add ?? []) parseSetFlag(f, { adds: true });
        for (const f of flags.setString ?? []) parseSetFlag(f, { asString: true });
        // The log is checked before anything is read or written, as a submit does.
        const jobLogPath = flags.dryRun
          ? undefined
          : await writableJobLogPath({ explicit: flags.jobLog, env: process.env, cwd: process.cwd() });
        await withContext(flags, async (context) => {
          const plan = await planRerun(context, {
            job,
            sets: flags.set ?? [],
            adds: flags.add ?? [],
            setStrings: flags.setString ?? [],
            resultsDir: flags.resultsDir,
          });
          if (flags.dryRun || !jobLogPath) {
            process.stdout.write(flags.json ? json(planJson(plan)) : renderRerunPlan(plan));
            return;
          }
          const listener = createReporter({ json: Boolean(flags.json) });
          const result = await withInterrupt((signal) =>
            submitRerun(context, plan, { jobLogPath, listener, signal }),
          );
          process.stdout.write(renderRerun(result, plan, Boolean(flags.json)));
        });
      }),
    );
}
