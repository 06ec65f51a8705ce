import type { Command } from 'commander';
import { openJobContext } from '../../lib/aws';
import { UserError } from '../../lib/errors';
import {
  buildCurriculum,
  buildSft,
  describeOrder,
  MISSING_PLACEMENTS,
  parseOrderKey,
  type MissingPlacement,
  type OrderKind,
} from '../../lib/passk';
import { addSettingsOptions, exits, settingsOf, type SettingsFlagValues } from './common';

interface BuildFlags extends SettingsFlagValues {
  from?: string[];
  name?: string;
  order: string;
  key: string;
  min?: string;
  max?: string;
  dryRun?: boolean;
  replace?: boolean;
  out?: string;
  missing?: string;
  json?: boolean;
}

interface SftFlags {
  from?: string[];
  out?: string;
  minPassRate?: string;
  maxPassRate?: string;
  seed?: string;
  datasets?: string;
  json?: boolean;
}

function rate(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d*\.?\d+$/.test(text) || n > 1)
    throw new UserError(`${flag} ${text}: a pass rate from 0 to 1`, 'BadFlag');
  return n;
}

export function registerCurriculum(program: Command): void {
  const curriculum = program.command('curriculum').description('curricula built from pass@k campaigns');
  curriculum.enablePositionalOptions();
  addSettingsOptions(curriculum.command('build'))
    .description(
      "an order file from campaigns' pass rates, uploaded to the bucket's curricula/, and the config lines that use it",
    )
    .option('--from <sources...>', 'passk jobs or run folders (their rates are pooled)')
    .option('--name <name>', 'its name under curricula/, e.g. pass-at-64/gsm8k_curriculum')
    .option('--order <kind>', 'easy-first, hard-first, or band (min ≤ key < max, easy first)', 'easy-first')
    .option(
      '--key <key>',
      "what prompts are sorted by: rate (the pooled pass rate) or pass@K (unbiased pass@K of the pooled counts, to 6 decimals as their generate_curriculum.py's CSV held it; ties in row order)",
      'rate',
    )
    .option('--min <value>', 'keep prompts whose key (--key) is ≥ this (band default 0)')
    .option('--max <value>', 'keep prompts whose key (--key) is < this (band default 0.5)')
    .option(
      '--missing <where>',
      'prompts without a result (a missing shard, a cut line, a dataset prompt not measured): first, last or drop; without it such a campaign is refused',
    )
    .option('--replace', 'overwrite an order file of that name with other content')
    .option('--out <file>', 'write it here instead of uploading it')
    .option('--dry-run', 'build and show it; write nothing')
    .option('--json', 'print JSON')
    .action(exits((flags: BuildFlags) => runBuild(flags)));
  curriculum
    .command('sft')
    .description(
      'an SFT set from the correct completions of prompts in a pass-rate band, as their build_sft_from_pass_at_k.py makes it',
    )
    .option('--from <folders...>', 'run folders of passk campaigns (a job: rlvr download it first)')
    .option('--out <file>', 'the JSONL file to write (required)')
    .option('--min-pass-rate <rate>', 'keep prompts with a pass rate ≥ this', '0')
    .option('--max-pass-rate <rate>', 'keep prompts with a pass rate < this', '0.5')
    .option('--seed <n>', 'the random seed of the choice and the shuffle', '42')
    .option(
      '--datasets <a,b>',
      'one set from campaigns of these datasets, one per dataset, drawn in this order with one generator and shuffled once: gsm8k,math is their --subset both',
    )
    .option('--json', 'print JSON')
    .action(exits((flags: SftFlags) => runSft(flags)));
}

/** The campaigns to read (a flag, not a required option: a forgotten value is named first). */
function sources(from: string[] | undefined, what: string): string[] {
  if (!from?.length) throw new UserError(`--from <${what}...>: the pass@k campaigns to read`, 'BadFlag');
  return from;
}

async function runBuild(flags: BuildFlags): Promise<number> {
  if (!flags.name) throw new UserError('--name <name>: the order file’s name under curricula/', 'BadFlag');
  if (!['easy-first', 'hard-first', 'band'].includes(flags.order))
    throw new UserError(`--order ${flags.order}: easy-first, hard-first or band`, 'BadFlag');
  const key = parseOrderKey(flags.key);
  const min = rate(flags.min, '--min');
  const max = rate(flags.max, '--max');
  if (flags.missing !== undefined && !MISSING_PLACEMENTS.includes(flags.missing as MissingPlacement))
    throw new UserError(`--missing ${flags.missing}: first, last or drop`, 'BadFlag');
  const built = await buildCurriculum({
    from: sources(flags.from, 'jobs or folders'),
    name: flags.name,
    order: flags.order as OrderKind,
    key,
    ...(min !== undefined ? { min } : {}),
    ...(max !== undefined ? { max } : {}),
    ...(flags.missing ? { missing: flags.missing as MissingPlacement } : {}),
    dryRun: Boolean(flags.dryRun),
    replace: Boolean(flags.replace),
    ...(flags.out ? { out: flags.out } : {}),
    cwd: process.cwd(),
    openContext: () => openJobContext({ settings: settingsOf(flags) }),
  });
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          ok: true,
          ids: built.order.ids.length,
          dataset: built.order.dataset,
          order: flags.order,
          key: built.order.key,
          uri: built.uri ?? null,
          upload: built.upload,
          out: built.out ?? null,
          uploadCommand: built.uploadCommand ?? null,
          sidecar: {
            at: built.sidecar.at,
            written: built.sidecar.written,
            sha256: built.sidecar.record.sha256,
          },
          datasetIds: built.datasetIds,
          missing: built.order.missing ?? null,
          placed: built.order.placed.length,
          gaps: built.order.gaps,
          excluded: {
            noResult: built.order.excluded.noResult.length,
            outsideBand: built.order.excluded.outsideBand,
          },
          conflicts: built.order.conflicts,
          configLines: built.configLines,
        },
        null,
        2,
      )}\n`,
    );
    return 0;
  }
  const out: string[] = [
    `Order file ${built.out ?? built.uri ?? flags.name}  (${flags.order}, by ${built.order.key})`,
  ];
  for (const line of describeOrder(built.order)) out.push(`  ${line}`);
  out.push(
    'datasetIds' in built && 'from' in built.datasetIds
      ? `  ties in the dataset's row order; every id is in ${built.datasetIds.from} (${built.datasetIds.prompts} prompts)`
      : `  ties by id: the dataset copy's ids were not read (${(built.datasetIds as { why: string }).why}); the submit's pre-flight checks them`,
  );
  const said = {
    created: 'uploaded',
    unchanged: 'already there with this content',
    replaced: 'replaced (--replace)',
    'dry-run': 'not written (--dry-run)',
    local: `written to ${built.out}, not uploaded (--out): jobs read order files from S3, so upload it first: ${built.uploadCommand}`,
    'no AWS': 'not uploaded (no AWS)',
  }[built.upload];
  out.push(`  ${said}`);
  out.push(
    `  build record (sources, key, band, gaps, sha256): ${built.sidecar.at}` +
      (built.sidecar.written === 'not written'
        ? ' (not written)'
        : built.sidecar.written === 'kept'
          ? ' (kept: of this content)'
          : ''),
  );
  out.push('', 'In a config:', ...built.configLines.map((l) => `  ${l}`), '');
  process.stdout.write(out.join('\n'));
  return 0;
}

async function runSft(flags: SftFlags): Promise<number> {
  if (!flags.out) throw new UserError('--out <file>: where to write the SFT set (JSONL)', 'BadFlag');
  const seed = Number(flags.seed ?? '42');
  if (!Number.isInteger(seed)) throw new UserError(`--seed ${flags.seed}: a whole number`, 'BadFlag');
  const datasets = flags.datasets?.split(',').map((d) => d.trim());
  if (datasets && (datasets.length === 0 || datasets.some((d) => !/^[A-Za-z0-9_]+$/.test(d))))
    throw new UserError(
      `--datasets ${flags.datasets}: dataset names separated by commas, e.g. gsm8k,math`,
      'BadFlag',
    );
  const set = await buildSft({
    from: sources(flags.from, 'folders'),
    ...(datasets ? { datasets } : {}),
    out: flags.out,
    minPassRate: rate(flags.minPassRate, '--min-pass-rate') ?? 0,
    maxPassRate: rate(flags.maxPassRate, '--max-pass-rate') ?? 0.5,
    seed,
    cwd: process.cwd(),
  });
  const summary = {
    ok: true,
    out: set.out,
    examples: set.lines.length,
    skippedNoCorrect: set.skippedNoCorrect,
    skippedNoPrompt: set.skippedNoPrompt,
    badLines: set.badLines,
    notes: set.notes,
    ...(set.perDataset ? { perDataset: set.perDataset } : {}),
  };
  for (const n of set.notes) process.stderr.write(`note: ${n}\n`);
  for (const b of set.badLines)
    process.stderr.write(`warning: ${b.file}${b.line ? `:${b.line}` : ''}: ${b.why}; skipped\n`);
  process.stdout.write(
    flags.json
      ? `${JSON.stringify(summary, null, 2)}\n`
      : `wrote ${set.out}: ${set.lines.length} example(s)${set.perDataset ? ` (${set.perDataset.map((d) => `${d.dataset} ${d.examples}`).join(', ')})` : ''}; skipped ${set.skippedNoCorrect} with no correct completion, ${set.skippedNoPrompt} with no prompt\n`,
  );
  return 0;
}
