import type { Command } from 'commander';
import { openJobContext } from '../../lib/aws';
import { resultsOfJobs } from '../../lib/eval';
import { readStatsLine, renderResultsTable } from '../eval-output';
import { addSettingsOptions, exits, oneOf, settingsOf, type SettingsFlagValues } from './common';
import { checkRunFolders } from './run-folders';

interface ResultsFlags extends SettingsFlagValues {
  baseline?: string;
  format?: string;
}

/** `rlvr eval results`: the table of eval jobs, training jobs and local run folders. */
export function registerEvalResults(evalCommand: Command): void {
  addSettingsOptions(evalCommand.command('results'))
    .description(
      'checkpoint × benchmark table of eval jobs, training jobs (their eval watchers) and local run folders, merged',
    )
    .argument('<jobs...>', 'eval or training job names, or local run folders')
    .option('--baseline <label>', 'a row (label or checkpoint id): the others show their difference to it')
    .option('--format <format>', 'md, csv or json', 'md')
    .action(exits((jobs: string[], flags: ResultsFlags) => runResults(jobs, flags)));
}

async function runResults(jobs: string[], flags: ResultsFlags): Promise<number> {
  const format = oneOf('--format', flags.format ?? 'md', ['md', 'csv', 'json'] as const);
  checkRunFolders(jobs, process.cwd());
  const { table, stats } = await resultsOfJobs(jobs, {
    cwd: process.cwd(),
    baseline: flags.baseline,
    openContext: () => openJobContext({ settings: settingsOf(flags) }),
    // A unit record that could not be read is a failed cell in the table and a warning here.
    warn: (warning) => process.stderr.write(`warning: ${warning}\n`),
  });
  process.stdout.write(renderResultsTable(table, format));
  if (stats) process.stderr.write(readStatsLine(stats));
  return 0;
}
