import type { Command } from 'commander';
import { runDoctor, trainerRepositoryChecks } from '../../lib/doctor';
import {
  addSettingsOptions,
  exits,
  print,
  settingsOf,
  type JsonFlag,
  type SettingsFlagValues,
} from './common';

export function registerDoctor(program: Command): void {
  addSettingsOptions(program.command('doctor'))
    .description(
      'check credentials, deployed settings, bucket, repository, Docker, GPUs and the instance quota',
    )
    .option('--instance-type <type>', 'instance type whose quota to check (default ml.p4de.24xlarge)')
    .option(
      '--trainer-src <dir>',
      "check a trainer repository instead (no AWS): import roots, the image its lock makes, each trainer's imports, the network at start",
    )
    .option(
      '--docker-dir <dir>',
      "with --trainer-src: the image's Dockerfile folder (default: this package's docker/)",
    )
    .option('--json', 'print JSON')
    .action(
      exits(
        async (
          flags: SettingsFlagValues &
            JsonFlag & { instanceType?: string; trainerSrc?: string; dockerDir?: string },
        ) => {
          const checks = flags.trainerSrc
            ? await trainerRepositoryChecks(
                flags.trainerSrc,
                flags.dockerDir ? { dockerDir: flags.dockerDir } : {},
              )
            : await runDoctor({ settings: settingsOf(flags), instanceType: flags.instanceType });
          const level = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;
          print(
            flags,
            checks,
            () =>
              checks
                .map((c) => `${level[c.level]}  ${c.name}: ${c.detail}${c.fix ? `\n      → ${c.fix}` : ''}`)
                .join('\n') + '\n',
          );
          return checks.some((c) => c.level === 'fail') ? 1 : 0;
        },
      ),
    );
}
