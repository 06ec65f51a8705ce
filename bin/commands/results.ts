import type { Command } from 'commander';
import { UserError } from '../../lib/errors';
import { openJobContext } from '../../lib/aws/session';
import {
  downloadJob,
  parseCheckpointSelection,
  syncTraces,
  uploadPath,
  type TransferEvent,
  type UploadKind,
} from '../../lib/results';
import { formatBytes } from '../output';
import { addSettingsOptions, settingsOf, type SettingsFlagValues } from './common';

/** Progress: one live line on a terminal; a plain line every few seconds otherwise (CI, pipes). */
function transferReporter(quiet: boolean): (event: TransferEvent) => void {
  const tty = process.stderr.isTTY;
  let lastPlain = 0;
  return (event) => {
    if (quiet) return;
    if (event.type === 'progress') {
      const pct = event.totalBytes ? Math.floor((100 * event.bytes) / event.totalBytes) : 100;
      const text = `${formatBytes(event.bytes)} / ${formatBytes(event.totalBytes)} (${pct}%)`;
      if (tty) process.stderr.write(`\r${text}   `);
      else if (Date.now() - lastPlain > 5000) {
        lastPlain = Date.now();
        process.stderr.write(`${text}\n`);
      }
      return;
    }
    if (tty) process.stderr.write('\r\x1b[K');
    if (event.type === 'file') {
      process.stderr.write(
        `${event.skipped ? 'up to date' : event.resumed ? 'updated' : 'done'}  ${event.key} (${formatBytes(event.bytes)})\n`,
      );
    } else {
      process.stderr.write(`note: ${event.message}\n`);
    }
  };
}

interface ResultFlags extends SettingsFlagValues {
  json?: boolean;
  resultsDir?: string;
}

export function registerResults(program: Command): void {
  addSettingsOptions(program.command('download'))
    .description("a job's results into results/<job>/: config, traces, and checkpoints (resumable, verified)")
    .argument('<job>', 'training job name')
    .option('--checkpoints <which>', 'all, final, none, or steps such as step20,step40', 'final')
    .option('--results-dir <dir>', 'where results/<job>/ goes', 'results')
    .option('--fsync', 'flush each file to disk before it gets its name (safe against a power loss; slower)')
    .option('--json', 'print JSON')
    .action(async (job: string, flags: ResultFlags & { checkpoints: string; fsync?: boolean }) => {
      const selection = parseCheckpointSelection(flags.checkpoints);
      const context = await openJobContext({ settings: settingsOf(flags) });
      try {
        const report = await downloadJob(context, {
          job,
          resultsDir: flags.resultsDir,
          checkpoints: selection,
          fsync: Boolean(flags.fsync),
          onEvent: transferReporter(Boolean(flags.json)),
        });
        if (flags.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        else {
          process.stdout.write(
            `${job} → ${report.dir}\n  ${report.downloaded} downloaded (${formatBytes(report.bytes)}), ${report.skipped} already complete\n` +
              `  checkpoints here: ${report.checkpointFolders.join(', ') || 'none'}; in S3: ${report.availableCheckpoints.join(', ') || 'none'}\n` +
              report.warnings.map((w) => `\n  !! ${w}\n`).join(''),
          );
        }
        if (report.availableCheckpoints.length === 0 && report.jobStatus === 'Completed')
          process.exitCode = 1;
        if (report.checks.some((c) => !c.ok)) process.exitCode = 1;
      } finally {
        context.close();
      }
    });

  addSettingsOptions(program.command('sync-traces'))
    .description('keep results/<job>/traces/*.jsonl current: fetches only what the traces grew by')
    .argument('<job-or-fragment>', 'a job name, or part of one (e.g. 20260125) matching running jobs')
    .argument('[interval-seconds]', 'poll every this many seconds (default: sync once)')
    .option('--idle-exit <seconds>', 'stop after this long without a change', '3600')
    .option('--results-dir <dir>', 'where results/<job>/ goes', 'results')
    .option('--json', 'print JSON stats at the end')
    .action(
      async (target: string, interval: string | undefined, flags: ResultFlags & { idleExit: string }) => {
        const seconds = interval === undefined ? undefined : Number(interval);
        if (seconds !== undefined && !(seconds > 0))
          throw new UserError(`interval ${interval}: a positive number of seconds.`, 'BadFlag');
        const context = await openJobContext({ settings: settingsOf(flags) });
        const abort = new AbortController();
        process.once('SIGINT', () => abort.abort());
        try {
          const { jobs, stats } = await syncTraces(context, {
            target,
            intervalSeconds: seconds,
            idleExitSeconds: Number(flags.idleExit),
            resultsDir: flags.resultsDir,
            onEvent: transferReporter(Boolean(flags.json)),
            signal: abort.signal,
          });
          if (flags.json) process.stdout.write(`${JSON.stringify({ jobs, stats }, null, 2)}\n`);
          else
            process.stdout.write(
              `synced ${jobs.join(', ')}: ${stats.polls} poll(s), ${formatBytes(stats.bodyBytes)} fetched\n`,
            );
        } finally {
          context.close();
        }
      },
    );

  addSettingsOptions(program.command('upload'))
    .description(
      'upload a model folder, dataset (save_to_disk) or curricula to the bucket; unchanged files are skipped',
    )
    .argument('<kind>', 'model, dataset or curricula')
    .argument('<local-path>', 'folder (or one curriculum file)')
    .option('--name <name>', 'name in the bucket (default: the folder or file name)')
    .option('--json', 'print JSON')
    .action(async (kind: string, localPath: string, flags: ResultFlags & { name?: string }) => {
      if (!['model', 'dataset', 'curricula'].includes(kind)) {
        throw new UserError(`upload ${kind}: use model, dataset or curricula.`, 'BadFlag');
      }
      const context = await openJobContext({ settings: settingsOf(flags) });
      try {
        const report = await uploadPath(context, {
          kind: kind as UploadKind,
          localPath,
          name: flags.name,
          onEvent: transferReporter(Boolean(flags.json)),
        });
        if (flags.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        else {
          process.stdout.write(
            `${report.uri}\n  ${report.uploaded} uploaded (${formatBytes(report.bytes)}), ${report.skipped} unchanged\n  in a config: ${report.configLine}\n`,
          );
        }
      } finally {
        context.close();
      }
    });
}
