import type { Command } from 'commander';
import { watchJob } from '../../lib/operate';
import { createReporter } from '../reporter';
import { addSettingsOptions, exits, withContext, type SettingsFlagValues } from './common';

export function registerLogs(program: Command): void {
  addSettingsOptions(program.command('logs'))
    .description("a job's CloudWatch logs, every host interleaved by time")
    .argument('<job>', 'training job name')
    .option('--follow', 'keep printing new lines until the job ends')
    .option('--poll <seconds>', 'seconds between polls with --follow', '5')
    .action(
      exits(async (job: string, flags: SettingsFlagValues & { follow?: boolean; poll: string }) => {
        // The log lines are the command's output (stdout); waiting notes go to stderr.
        const report = createReporter({
          json: false,
          streamFor: (event) => (event.type === 'waiting' ? process.stderr : process.stdout),
        });
        await withContext(flags, async (context) => {
          const options = { follow: Boolean(flags.follow), pollMs: Number(flags.poll) * 1000 };
          for await (const event of watchJob(context, job, options)) report(event);
        });
      }),
    );
}
