import type { TrainingJobStatus } from '@aws-sdk/client-sagemaker';
import type { Command } from 'commander';
import { UserError } from '../../lib/errors';
import { listJobs, type JobRow } from '../../lib/operate';
import { formatUsd } from '../../lib/job-options';
import { pastRuntimeLine, progressCell } from '../forecast-output';
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
    .option('--json', 'print JSON')
    .action(
      exits(async (flags: JobsFlags) => {
        if (flags.status && !STATUSES.includes(flags.status as TrainingJobStatus)) {
          throw new UserError(`--status ${flags.status}: use one of ${STATUSES.join(', ')}.`, 'BadFlag');
        }
        const limit = Number(flags.limit);
        if (!Number.isInteger(limit) || limit < 1)
          throw new UserError(`--limit ${flags.limit}: a positive whole number.`, 'BadFlag');
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
