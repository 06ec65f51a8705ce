import type { Command } from 'commander';
import { downloadJob, parseCheckpointSelection, type DownloadReport } from '../../lib/transfers';
import { formatBytes } from '../output';
import { createReporter } from '../reporter';
import {
  addSettingsOptions,
  exits,
  print,
  withContext,
  type JsonFlag,
  type SettingsFlagValues,
} from './common';

interface DownloadFlags extends SettingsFlagValues, JsonFlag {
  checkpoints: string;
  resultsDir?: string;
  fsync?: boolean;
}

function renderDownload(job: string, report: DownloadReport): string {
  return (
    `${job} → ${report.dir}\n  ${report.downloaded} downloaded (${formatBytes(report.bytes)}), ${report.skipped} already complete\n` +
    `  checkpoints here: ${report.checkpointFolders.join(', ') || 'none'}; in S3: ${report.availableCheckpoints.join(', ') || 'none'}\n` +
    report.warnings.map((w) => `\n  !! ${w}\n`).join('')
  );
}

export function registerDownload(program: Command): void {
  addSettingsOptions(program.command('download'))
    .description("a job's results into results/<job>/: config, traces, and checkpoints (resumable, verified)")
    .argument('<job>', 'training job name')
    .option('--checkpoints <which>', 'all, final, none, or steps such as step20,step40', 'final')
    .option('--results-dir <dir>', 'where results/<job>/ goes', 'results')
    .option('--fsync', 'flush each file to disk before it gets its name (safe against a power loss; slower)')
    .option('--json', 'print JSON')
    .action(
      exits(async (job: string, flags: DownloadFlags) => {
        const selection = parseCheckpointSelection(flags.checkpoints);
        const report = await withContext(flags, (context) =>
          downloadJob(context, {
            job,
            resultsDir: flags.resultsDir,
            checkpoints: selection,
            fsync: Boolean(flags.fsync),
            onEvent: createReporter({ json: Boolean(flags.json) }),
          }),
        );
        print(flags, report, () => renderDownload(job, report));
        // A completed job without checkpoints, or a file that failed its check, is a failed download.
        const noCheckpoints =
          report.availableCheckpoints.length === 0 && report.jobStatus === 'Completed' && !report.resultsOnly;
        return noCheckpoints || report.checks.some((c) => !c.ok) ? 1 : 0;
      }),
    );
}
