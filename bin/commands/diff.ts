import type { Command } from 'commander';
import { diffJobs, overrideLiteral, type JobDiff, type OverrideValue } from '../../lib/operate';
import {
  addSettingsOptions,
  exits,
  print,
  withContext,
  type JsonFlag,
  type SettingsFlagValues,
} from './common';

/** A value as the config spells it (floats in the form the trainer reads), `(absent)` when not there. */
function shown(value: unknown): string {
  if (value === undefined) return '(absent)';
  if (typeof value === 'string') return value;
  const scalar = value === null || ['number', 'boolean'].includes(typeof value);
  return scalar ? overrideLiteral(value as OverrideValue) : JSON.stringify(value);
}

function renderDiff(diff: JobDiff): string {
  let out = '';
  for (const note of diff.notes) out += `note: ${note}\n`;
  if (diff.identical)
    return `${out}${diff.a} and ${diff.b} are identical: same config, options, image, source, channels and eval config\n`;
  out += `${diff.a} → ${diff.b}: ${diff.differences.length} difference(s)\n`;
  let section = '';
  for (const d of diff.differences) {
    if (d.section !== section) {
      section = d.section;
      out += `${section}:\n`;
    }
    out += `  ${d.key}: ${shown(d.a)} → ${shown(d.b)}\n`;
  }
  return out;
}

export function registerDiff(program: Command): void {
  addSettingsOptions(program.command('diff'))
    .description(
      'what differs between two jobs: config keys, options, image, source, input channels, eval config',
    )
    .argument('<jobA>', 'training job name')
    .argument('<jobB>', 'training job name')
    .option('--json', 'print JSON')
    .action(
      exits(async (a: string, b: string, flags: SettingsFlagValues & JsonFlag) => {
        const diff = await withContext(flags, (context) => diffJobs(context, a, b));
        const asJson = {
          ok: true,
          ...diff,
          differences: diff.differences.map((d) => ({ ...d, a: d.a ?? null, b: d.b ?? null })),
        };
        print(flags, asJson, () => renderDiff(diff));
      }),
    );
}
