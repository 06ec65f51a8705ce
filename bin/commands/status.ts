import type { Command } from 'commander';
import {
  describeAttempts,
  describeResume,
  jobStatus,
  type AttemptsReport,
  type JobStatusReport,
} from '../../lib/operate';
import { formatUsd } from '../../lib/job-options';
import { pastRuntimeLine } from '../../lib/forecast';
import { progressLine } from '../forecast-output';
import {
  addSettingsOptions,
  exits,
  formatSeconds,
  formatTime,
  print,
  withContext,
  type JsonFlag,
  type SettingsFlagValues,
} from './common';

/** The attempts line, and one line per attempt run.json records when there was more than one. */
function renderAttempts(attempts: AttemptsReport): string {
  let out = `  attempts: ${describeAttempts(attempts)}\n`;
  if (attempts.recorded.length < 2) return out;
  attempts.recorded.forEach((a, i) => {
    const end = a.endedAt ? `ended ${a.endedAt}${a.status ? ` (${a.status})` : ''}` : 'no end recorded';
    const resumed =
      a.resume?.step !== undefined
        ? `, resumed from step ${a.resume.step}`
        : a.resume
          ? `, ${a.resume.note}`
          : '';
    out += `    ${i + 1}. started ${a.startedAt ?? '?'} on ${a.host ?? '?'}, ${end}${resumed}\n`;
  });
  return out;
}

function renderStatus(name: string, report: JobStatusReport): string {
  const j = report.job;
  let out = `${name}: ${j.TrainingJobStatus}${j.SecondaryStatus ? ` (${j.SecondaryStatus})` : ''}\n`;
  if (report.rerunOf) out += `  rerun of: ${report.rerunOf}\n`;
  if (j.FailureReason) out += `  failure: ${j.FailureReason}\n`;
  out += `  instance: ${j.ResourceConfig?.InstanceCount ?? 1}× ${j.ResourceConfig?.InstanceType}${j.EnableManagedSpotTraining ? ' (spot)' : ''}\n`;
  out += '  history:\n';
  for (const t of j.SecondaryStatusTransitions ?? []) {
    out += `    ${formatTime(t.StartTime)}  ${t.Status?.padEnd(12)} ${t.StatusMessage ?? ''}\n`;
  }
  const c = report.checkpoints;
  out += `  checkpoints: ${c.count} in ${report.checkpointsUri}${c.latestStep !== undefined ? `, latest step ${c.latestStep}` : ''}, final ${c.final ? 'present' : 'not present'}\n`;
  if (c.resume) out += `  ${describeResume(c.resume)}\n`;
  out += renderAttempts(report.attempts);
  out += report.trace
    ? `  trace: step ${report.trace.step ?? '?'}, reward ${report.trace.reward ?? '?'} (read the last ${report.trace.bytesRead} bytes)\n`
    : '  trace: none yet\n';
  if (report.progress) out += `  progress: ${progressLine(report.progress)}\n`;
  const cost = report.cost;
  out += `  time: ${formatSeconds(cost.elapsedSeconds)} elapsed, ${formatSeconds(cost.billableSeconds)} billable; cost ${formatUsd(cost.cost)}${cost.final ? '' : ' so far'}`;
  out += cost.spotSavings !== undefined ? `, spot saved ${Math.round(cost.spotSavings * 100)}%\n` : '\n';
  const late = report.progress && pastRuntimeLine(report.progress);
  if (late) out += `\n  !! ${late}\n`;
  if (report.problem) out += `\n  !! ${report.problem}\n`;
  return out;
}

export function registerStatus(program: Command): void {
  addSettingsOptions(program.command('status'))
    .description(
      'one job: status history, failure reason, checkpoints in S3, latest trace step and reward, cost',
    )
    .argument('<job>', 'training job name')
    .option('--json', 'print JSON')
    .action(
      exits(async (job: string, flags: SettingsFlagValues & JsonFlag) => {
        const report = await withContext(flags, (context) => jobStatus(context, job));
        print(flags, report, () => renderStatus(job, report));
        return report.problem ? 1 : 0;
      }),
    );
}
