import type { Command } from 'commander';
import { UserError } from '../../lib/errors';
import { uploadPath, type UploadKind } from '../../lib/transfers';
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

const KINDS: readonly UploadKind[] = ['model', 'dataset', 'curricula'];

export function registerUpload(program: Command): void {
  addSettingsOptions(program.command('upload'))
    .description(
      'upload a model folder, dataset (save_to_disk) or curricula to the bucket; unchanged files are skipped',
    )
    .argument('<kind>', KINDS.join(', ').replace(/, (?=[^,]*$)/, ' or '))
    .argument('<local-path>', 'folder (or one curriculum file)')
    .option('--name <name>', 'name in the bucket (default: the folder or file name)')
    .option('--json', 'print JSON')
    .action(
      exits(
        async (kind: string, localPath: string, flags: SettingsFlagValues & JsonFlag & { name?: string }) => {
          if (!KINDS.includes(kind as UploadKind)) {
            throw new UserError(`upload ${kind}: use model, dataset or curricula.`, 'BadFlag');
          }
          // Ctrl-C aborts the multipart uploads in flight (none is left billed) and exits 1.
          const report = await withContext(flags, (context) =>
            withInterrupt((signal) =>
              uploadPath(context, {
                kind: kind as UploadKind,
                localPath,
                name: flags.name,
                onEvent: createReporter({ json: Boolean(flags.json) }),
                signal,
              }),
            ),
          );
          print(
            flags,
            report,
            () =>
              `${report.uri}\n  ${report.uploaded} uploaded (${formatBytes(report.bytes)}), ${report.skipped} unchanged\n  in a config: ${report.configLine}\n`,
          );
        },
      ),
    );
}
