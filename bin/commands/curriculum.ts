import type { Command } from 'commander';
import { openJobContext } from '../../lib/aws';
import { UserError } from '../../lib/errors';
import {
  buildCurriculum,
  buildSft,
  MISSING_PLACEMENTS,
  parseOrderKey,
  type OrderKind,
} from '../../lib/passk';
import { curriculumJson, renderCurriculum, renderSft, sftJson, sftWarnings } from '../curriculum-output';
import { addSettingsOptions, exits, oneOf, print, settingsOf, type SettingsFlagValues } from './common';

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

const ORDERS: readonly OrderKind[] = ['easy-first', 'hard-first', 'band'];

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
  const name = flags.name;
  if (!name) throw new UserError('--name <name>: the order file’s name under curricula/', 'BadFlag');
  const order = oneOf('--order', flags.order, ORDERS);
  const key = parseOrderKey(flags.key);
  const min = rate(flags.min, '--min');
  const max = rate(flags.max, '--max');
  const missing =
    flags.missing === undefined ? undefined : oneOf('--missing', flags.missing, MISSING_PLACEMENTS);
  const built = await buildCurriculum({
    from: sources(flags.from, 'jobs or folders'),
    name,
    order,
    key,
    ...(min !== undefined ? { min } : {}),
    ...(max !== undefined ? { max } : {}),
    ...(missing ? { missing } : {}),
    dryRun: Boolean(flags.dryRun),
    replace: Boolean(flags.replace),
    ...(flags.out ? { out: flags.out } : {}),
    cwd: process.cwd(),
    openContext: () => openJobContext({ settings: settingsOf(flags) }),
  });
  print(flags, curriculumJson(built, order), () => renderCurriculum(built, order, name));
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
  for (const line of sftWarnings(set)) process.stderr.write(line);
  print(flags, sftJson(set), () => renderSft(set));
  return 0;
}
