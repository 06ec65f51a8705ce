import type { Command } from 'commander';
import { UserError } from '../../lib/errors';
import { syncTraces } from '../../lib/transfers';
import { withInterrupt } from '../interrupt';
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

interface SyncFlags extends SettingsFlagValues, JsonFlag {
  idleExit: string;
  resultsDir?: string;
}

export function registerSyncTraces(program: Command): void {
  addSettingsOptions(program.command('sync-traces'))
    .description('keep results/<job>/traces/*.jsonl current: fetches only what the traces grew by')
    .argument('<job-or-fragment>', 'a job name, or part of one (e.g. 20260125) matching running jobs')
    .argument('[interval-seconds]', 'poll every this many seconds (default: sync once)')
    .option('--idle-exit <seconds>', 'stop after this long without a change', '3600')
    .option('--results-dir <dir>', 'where results/<job>/ goes', 'results')
    .option('--json', 'print JSON stats at the end')
    .action(
      exits(async (target: string, interval: string | undefined, flags: SyncFlags) => {
        const seconds = interval === undefined ? undefined : Number(interval);
        if (seconds !== undefined && !(seconds > 0))
          throw new UserError(`interval ${interval}: a positive number of seconds.`, 'BadFlag');
        const { jobs, stats } = await withContext(flags, (context) =>
          withInterrupt((signal) =>
            syncTraces(context, {
              target,
              intervalSeconds: seconds,
              idleExitSeconds: Number(flags.idleExit),
              resultsDir: flags.resultsDir,
              onEvent: createReporter({ json: Boolean(flags.json) }),
              signal,
            }),
          ),
        );
        print(
          flags,
          { jobs, stats },
          () =>
            `synced ${jobs.join(', ')}: ${stats.polls} poll(s), ${formatBytes(stats.bodyBytes)} fetched\n`,
        );
      }),
    );
}
