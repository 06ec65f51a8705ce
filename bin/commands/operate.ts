import type { TrainingJobStatus } from '@aws-sdk/client-sagemaker';
import { Command } from 'commander';
import { runDoctor } from '../../lib/doctor';
import { UserError } from '../../lib/errors';
import {
  formatUsd,
  jobStatus,
  listJobs,
  openJobContext,
  resolveJobLogPath,
  stopJob,
  watchJob,
  type JobContext,
} from '../../lib/jobs';
import { describeResume } from '../../lib/jobs/inspect';
import { gitRoot } from '../../lib/source';
import {
  addSettingsOptions,
  formatSeconds,
  formatTime,
  settingsOf,
  table,
  type SettingsFlagValues,
} from './common';
import { renderWatchEvent } from './watch-output';

interface OperateFlags extends SettingsFlagValues {
  json?: boolean;
}

const STATUSES: readonly TrainingJobStatus[] = ['InProgress', 'Completed', 'Failed', 'Stopping', 'Stopped'];

async function withContext<T>(flags: OperateFlags, fn: (context: JobContext) => Promise<T>): Promise<T> {
  const context = await openJobContext({ settings: settingsOf(flags) });
  try {
    return await fn(context);
  } finally {
    context.close();
  }
}

function print(flags: OperateFlags, json: unknown, text: () => string): void {
  process.stdout.write(flags.json ? `${JSON.stringify(json, null, 2)}\n` : text());
}

export function registerOperate(program: Command): void {
  addSettingsOptions(program.command('jobs'))
    .description('list our training jobs: status, instance, time, cost, config, description')
    .option('--name-contains <text>', 'only jobs whose name contains this (e.g. a date, 20260125)')
    .option('--status <status>', `only jobs in this status (${STATUSES.join(', ')})`)
    .option('--limit <n>', 'at most this many, newest first', '50')
    .option('--job-log <file>', 'job log for descriptions (default: docs/job_log.md of this repository)')
    .option('--json', 'print JSON')
    .action(
      async (
        flags: OperateFlags & { nameContains?: string; status?: string; limit: string; jobLog?: string },
      ) => {
        if (flags.status && !STATUSES.includes(flags.status as TrainingJobStatus)) {
          throw new UserError(`--status ${flags.status}: use one of ${STATUSES.join(', ')}.`, 'BadFlag');
        }
        const limit = Number(flags.limit);
        if (!Number.isInteger(limit) || limit < 1)
          throw new UserError(`--limit ${flags.limit}: a positive whole number.`, 'BadFlag');
        const jobLogPath = resolveJobLogPath({
          explicit: flags.jobLog,
          env: process.env,
          cwd: process.cwd(),
          repoRoot: (await gitRoot(process.cwd())) ?? process.cwd(),
        });
        const rows = await withContext(flags, (context) =>
          listJobs(context, {
            nameContains: flags.nameContains,
            status: flags.status as TrainingJobStatus,
            limit,
            jobLogPath,
          }),
        );
        print(flags, rows, () =>
          rows.length === 0
            ? 'No jobs.\n'
            : table(
                [
                  'JOB',
                  'STATUS',
                  'INSTANCE',
                  'STARTED',
                  'ELAPSED',
                  'BILLABLE',
                  'COST',
                  'CONFIG',
                  'DESCRIPTION',
                ],
                rows.map((r) => [
                  `${r.problem ? '!! ' : ''}${r.name}`,
                  r.secondaryStatus && r.secondaryStatus !== r.status
                    ? `${r.status}/${r.secondaryStatus}`
                    : r.status,
                  `${r.instanceCount}× ${r.instanceType}`,
                  formatTime(r.started),
                  formatSeconds(r.cost.elapsedSeconds),
                  formatSeconds(r.cost.billableSeconds),
                  `${formatUsd(r.cost.cost)}${r.cost.final ? '' : ' so far'}${r.cost.spotSavings !== undefined ? ` (spot -${Math.round(r.cost.spotSavings * 100)}%)` : ''}`,
                  r.config ?? '-',
                  r.description ?? '-',
                ]),
              ) +
              rows
                .filter((r) => r.problem)
                .map((r) => `!! ${r.name}: ${r.problem}\n`)
                .join(''),
        );
      },
    );

  addSettingsOptions(program.command('status'))
    .description(
      'one job: status history, failure reason, checkpoints in S3, latest trace step and reward, cost',
    )
    .argument('<job>', 'training job name')
    .option('--json', 'print JSON')
    .action(async (job: string, flags: OperateFlags) => {
      const report = await withContext(flags, (context) => jobStatus(context, job));
      const j = report.job;
      print(flags, report, () => {
        let out = `${job}: ${j.TrainingJobStatus}${j.SecondaryStatus ? ` (${j.SecondaryStatus})` : ''}\n`;
        if (j.FailureReason) out += `  failure: ${j.FailureReason}\n`;
        out += `  instance: ${j.ResourceConfig?.InstanceCount ?? 1}× ${j.ResourceConfig?.InstanceType}${j.EnableManagedSpotTraining ? ' (spot)' : ''}\n`;
        out += '  history:\n';
        for (const t of j.SecondaryStatusTransitions ?? []) {
          out += `    ${formatTime(t.StartTime)}  ${t.Status?.padEnd(12)} ${t.StatusMessage ?? ''}\n`;
        }
        const c = report.checkpoints;
        out += `  checkpoints: ${c.count} in ${report.checkpointsUri}${c.latestStep !== undefined ? `, latest step ${c.latestStep}` : ''}, final ${c.final ? 'present' : 'not present'}\n`;
        if (c.resume) out += `  ${describeResume(c.resume)}\n`;
        if (report.trace) {
          out += `  trace: step ${report.trace.step ?? '?'}, reward ${report.trace.reward ?? '?'} (read the last ${report.trace.bytesRead} bytes)\n`;
        } else {
          out += '  trace: none yet\n';
        }
        const cost = report.cost;
        out += `  time: ${formatSeconds(cost.elapsedSeconds)} elapsed, ${formatSeconds(cost.billableSeconds)} billable; cost ${formatUsd(cost.cost)}${cost.final ? '' : ' so far'}`;
        out +=
          cost.spotSavings !== undefined ? `, spot saved ${Math.round(cost.spotSavings * 100)}%\n` : '\n';
        if (report.problem) out += `\n  !! ${report.problem}\n`;
        return out;
      });
      if (report.problem) process.exitCode = 1;
    });

  addSettingsOptions(program.command('logs'))
    .description("a job's CloudWatch logs, every host interleaved by time")
    .argument('<job>', 'training job name')
    .option('--follow', 'keep printing new lines until the job ends')
    .option('--poll <seconds>', 'seconds between polls with --follow', '5')
    .action(async (job: string, flags: OperateFlags & { follow?: boolean; poll: string }) => {
      await withContext(flags, async (context) => {
        for await (const event of watchJob(context, job, {
          follow: Boolean(flags.follow),
          pollMs: Number(flags.poll) * 1000,
        })) {
          (event.type === 'waiting' ? process.stderr : process.stdout).write(`${renderWatchEvent(event)}\n`);
        }
      });
    });

  addSettingsOptions(program.command('stop'))
    .description('stop a training job (it saves nothing more; checkpoints already in S3 stay)')
    .argument('<job>', 'training job name')
    .option('--json', 'print JSON')
    .action(async (job: string, flags: OperateFlags) => {
      const { before, after } = await withContext(flags, (context) => stopJob(context, job));
      print(
        flags,
        { jobName: job, before: before.TrainingJobStatus, after: after.TrainingJobStatus },
        () =>
          `${job}: ${before.TrainingJobStatus}${before.SecondaryStatus ? ` (${before.SecondaryStatus})` : ''} → ${after.TrainingJobStatus}${after.SecondaryStatus ? ` (${after.SecondaryStatus})` : ''}\n`,
      );
    });

  addSettingsOptions(program.command('doctor'))
    .description(
      'check credentials, deployed settings, bucket, repository, Docker, GPUs and the instance quota',
    )
    .option('--instance-type <type>', 'instance type whose quota to check (default ml.p4de.24xlarge)')
    .option('--json', 'print JSON')
    .action(async (flags: OperateFlags & { instanceType?: string }) => {
      const checks = await runDoctor({ settings: settingsOf(flags), instanceType: flags.instanceType });
      print(
        flags,
        checks,
        () =>
          checks
            .map(
              (c) =>
                `${c.level === 'ok' ? 'ok  ' : c.level === 'warn' ? 'warn' : 'FAIL'}  ${c.name}: ${c.detail}${c.fix ? `\n      → ${c.fix}` : ''}`,
            )
            .join('\n') + '\n',
      );
      if (checks.some((c) => c.level === 'fail')) process.exitCode = 1;
    });
}
