import type { TrainingJobStatus } from '@aws-sdk/client-sagemaker';
import type { Command } from 'commander';
import { UserError } from '../../lib/errors';
import { forecastChecks, listJobs, type ForecastChecks, type JobRow } from '../../lib/operate';
import { formatUsd } from '../../lib/job-options';
import { pastRuntimeLine, roughDuration } from '../../lib/forecast';
import { progressCell } from '../forecast-output';
import { defaultedJobLogPath } from '../../lib/submission';
import {
  addSettingsOptions,
  exits,
  formatSeconds,
  formatTime,
  print,
  table,
  withContext,
  type JsonFlag,
  type SettingsFlagValues,
} from './common';

const STATUSES: readonly TrainingJobStatus[] = ['InProgress', 'Completed', 'Failed', 'Stopping', 'Stopped'];

interface JobsFlags extends SettingsFlagValues, JsonFlag {
  nameContains?: string;
  status?: string;
  limit: string;
  jobLog?: string;
  forecast?: boolean;
}

function pct(x: number | undefined): string {
  return x === undefined ? '-' : `${x > 0 ? '+' : ''}${Math.round(x * 100)}%`;
}

/** `jobs --forecast`: each ended job's forecast beside what it took, and the error over them. */
function renderForecastChecks(checks: ForecastChecks): string {
  if (checks.jobs.length === 0) return 'No ended jobs.\n';
  const header = ['JOB', 'STATUS', 'STEPS', 'FORECAST', 'ACTUAL', 'ERROR', 'FROM'];
  const cells = checks.jobs.map((j) => [
    j.name,
    j.status,
    j.stepsReached === undefined
      ? '-'
      : `${j.stepsReached}${j.maxSteps !== undefined ? `/${j.maxSteps}` : ''}`,
    j.forecastWallSeconds === undefined
      ? j.similarRuns === 0
        ? 'none (no similar run)'
        : 'not recorded'
      : `${roughDuration(j.forecastWallSeconds)}${j.forecastSecondsPerStep !== undefined ? ` (${j.forecastSecondsPerStep} s/step)` : ''}`,
    j.actualWallSeconds === undefined ? '-' : roughDuration(j.actualWallSeconds),
    pct(j.error),
    j.similarRuns === undefined ? '-' : `${j.similarRuns} run${j.similarRuns === 1 ? '' : 's'}`,
  ]);
  const summary =
    checks.compared > 0
      ? `Over ${checks.compared} job${checks.compared === 1 ? '' : 's'} that reached their last step with a forecast: median |error| ${Math.round(checks.medianAbsError! * 100)}%, median error ${pct(checks.medianError)} (forecast − actual; actual: container start to trainer end, every attempt).\n`
      : 'No ended job reached its last step with a forecast yet: nothing to compare.\n';
  return table(header, cells) + summary;
}

function renderJobs(rows: readonly JobRow[]): string {
  if (rows.length === 0) return 'No jobs.\n';
  const header = [
    'JOB',
    'STATUS',
    'INSTANCE',
    'STARTED',
    'ELAPSED',
    'BILLABLE',
    'COST',
    'PROGRESS',
    'CONFIG',
    'DESCRIPTION',
  ];
  const cells = rows.map((r) => [
    `${r.problem ? '!! ' : ''}${r.name}`,
    r.secondaryStatus && r.secondaryStatus !== r.status ? `${r.status}/${r.secondaryStatus}` : r.status,
    `${r.instanceCount}× ${r.instanceType}`,
    formatTime(r.started),
    formatSeconds(r.cost.elapsedSeconds),
    formatSeconds(r.cost.billableSeconds),
    `${formatUsd(r.cost.cost)}${r.cost.final ? '' : ' so far'}${r.cost.spotSavings !== undefined ? ` (spot -${Math.round(r.cost.spotSavings * 100)}%)` : ''}`,
    r.progress ? progressCell(r.progress) : '-',
    r.config ?? '-',
    r.description ?? '-',
  ]);
  const problems = rows.flatMap((r) => {
    const late = r.progress && pastRuntimeLine(r.progress);
    return [late, r.problem].filter(Boolean).map((p) => `!! ${r.name}: ${p}\n`);
  });
  return table(header, cells) + problems.join('');
}

export function registerJobs(program: Command): void {
  addSettingsOptions(program.command('jobs'))
    .description('list our training jobs: status, instance, time, cost, config, description')
    .option('--name-contains <text>', 'only jobs whose name contains this (e.g. a date, 20260125)')
    .option('--status <status>', `only jobs in this status (${STATUSES.join(', ')})`)
    .option('--limit <n>', 'at most this many, newest first', '50')
    .option('--job-log <file>', 'job log for descriptions (default: docs/job_log.md of this repository)')
    .option(
      '--forecast',
      'ended jobs: the forecast each was given beside what it took, and the error over them',
    )
    .option('--json', 'print JSON')
    .action(
      exits(async (flags: JobsFlags) => {
        if (flags.status && !STATUSES.includes(flags.status as TrainingJobStatus)) {
          throw new UserError(`--status ${flags.status}: use one of ${STATUSES.join(', ')}.`, 'BadFlag');
        }
        const limit = Number(flags.limit);
        if (!Number.isInteger(limit) || limit < 1)
          throw new UserError(`--limit ${flags.limit}: a positive whole number.`, 'BadFlag');
        if (flags.forecast) {
          if (flags.status)
            throw new UserError('--forecast lists ended jobs: leave out --status.', 'BadFlag');
          const checks = await withContext(flags, (context) =>
            forecastChecks(context, { limit, nameContains: flags.nameContains }),
          );
          print(flags, checks, () => renderForecastChecks(checks));
          return;
        }
        const jobLogPath = await defaultedJobLogPath({
          explicit: flags.jobLog,
          env: process.env,
          cwd: process.cwd(),
        });
        const rows = await withContext(flags, (context) =>
          listJobs(context, {
            nameContains: flags.nameContains,
            status: flags.status as TrainingJobStatus,
            limit,
            jobLogPath,
          }),
        );
        print(flags, rows, () => renderJobs(rows));
      }),
    );
}
