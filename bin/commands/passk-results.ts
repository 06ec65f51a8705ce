import type { Command } from 'commander';
import { openJobContext } from '../../lib/aws';
import { passkResultsOf } from '../../lib/passk';
import { passkResultsWarnings, renderPasskResults } from '../passk-output';
import { addSettingsOptions, exits, oneOf, settingsOf, type SettingsFlagValues } from './common';

interface ResultsFlags extends SettingsFlagValues {
  format?: string;
  prompts?: boolean;
}

/** `rlvr passk results`: the merged shards of campaigns, jobs or run folders. */
export function registerPasskResults(passk: Command): void {
  addSettingsOptions(passk.command('results'))
    .description(
      'merge the shards of pass@k campaigns: per prompt n, c and pass rate; unbiased pass@k beside the first-k figure',
    )
    .argument(
      '<sources...>',
      "passk job names, or run folders (also a bare folder of the script's shard_<i>/)",
    )
    .option('--format <format>', 'md, csv (per prompt), pass-at-k-csv or json', 'md')
    .option('--prompts', 'with md: the per-prompt table too')
    .action(exits((sources: string[], flags: ResultsFlags) => runResults(sources, flags)));
}

async function runResults(sources: string[], flags: ResultsFlags): Promise<number> {
  const format = oneOf('--format', flags.format ?? 'md', ['md', 'csv', 'pass-at-k-csv', 'json'] as const);
  const results = await passkResultsOf(sources, {
    cwd: process.cwd(),
    openContext: () => openJobContext({ settings: settingsOf(flags) }),
  });
  process.stdout.write(renderPasskResults(results, format, Boolean(flags.prompts)));
  for (const warning of passkResultsWarnings(results)) process.stderr.write(warning);
  return 0;
}
