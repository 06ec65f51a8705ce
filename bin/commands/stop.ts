import type { Command } from 'commander';
import { stopJob } from '../../lib/operate';
import {
  addSettingsOptions,
  exits,
  print,
  withContext,
  type JsonFlag,
  type SettingsFlagValues,
} from './common';

export function registerStop(program: Command): void {
  addSettingsOptions(program.command('stop'))
    .description('stop a training job (it saves nothing more; checkpoints already in S3 stay)')
    .argument('<job>', 'training job name')
    .option('--json', 'print JSON')
    .action(
      exits(async (job: string, flags: SettingsFlagValues & JsonFlag) => {
        const { before, after } = await withContext(flags, (context) => stopJob(context, job));
        const state = (d: typeof before) =>
          `${d.TrainingJobStatus}${d.SecondaryStatus ? ` (${d.SecondaryStatus})` : ''}`;
        print(
          flags,
          { jobName: job, before: before.TrainingJobStatus, after: after.TrainingJobStatus },
          () => `${job}: ${state(before)} → ${state(after)}\n`,
        );
      }),
    );
}
