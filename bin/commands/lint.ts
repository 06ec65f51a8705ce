import type { Command } from 'commander';
import { ALL_RULES, EVAL_RULES, ruleOf, SCHEMA_RULES, type AllowedFinding } from '../../lib/config';
import { lintConfigFile, type LintCurricula, type LintReport } from '../../lib/training';
import { formatLocation, formatProblem, UserError, type Problem } from '../../lib/errors';
import { requireLayout } from '../../lib/aws';
import { defaultCacheDir } from '../../lib/curriculum';
import { addSettingsOptions, exits, print, withContext, type SettingsFlagValues } from './common';

interface LintFlags extends SettingsFlagValues {
  readonly curricula?: boolean;
  readonly strict?: boolean;
  readonly json?: boolean;
  readonly rules?: boolean;
}

/** `rlvr lint CONFIG…`: a submit's config checks alone, on training and eval configs; exit 2 on any error. */
export function registerLint(program: Command): void {
  addSettingsOptions(program.command('lint'))
    .description('check training and eval configs as a submit would (no AWS, no image); exit 2 on errors')
    .argument('[configs...]', 'training or eval config files')
    .option('--strict', "likely typos of the trainer's keys are errors, not warnings")
    .option(
      '--rules',
      'list the rules by id, what each guards, and which a config can allow (launcher.allow); takes no config',
    )
    .option('--curricula', "also check each order file's ids against its dataset copy in S3 (needs AWS)")
    .option('--json', 'print the findings as JSON')
    .action(
      exits(async (configs: string[], flags: LintFlags) => {
        if (flags.rules) {
          // Listing the rules would otherwise pass over the configs named, as if they had been checked.
          if (configs.length > 0)
            throw new UserError(
              `--rules lists the rules and takes no config (given ${configs.join(', ')}): run rlvr lint --rules, then rlvr lint ${configs.join(' ')}`,
              'BadFlag',
            );
          print(flags, { rules: rulesJson() }, rulesText);
          return 0;
        }
        if (configs.length === 0)
          throw new UserError('name at least one config (or pass --rules)', 'BadFlag');
        const lint = async (curricula?: LintCurricula) => {
          const reports: LintReport[] = [];
          for (const c of configs)
            reports.push(await lintConfigFile(c, c, { strict: flags.strict, curricula }));
          return reports;
        };
        const reports = flags.curricula
          ? await withContext(flags, (context) =>
              lint({ s3: context.aws.s3, layout: requireLayout(context), cacheDir: defaultCacheDir() }),
            )
          : await lint();
        const ok = reports.every((r) => !r.errors.length);
        print(flags, { ok, reports }, () => reports.map(render).join(''));
        return ok ? 0 : 2;
      }),
    );
}

function rulesJson() {
  return ALL_RULES.map((r) => ({
    id: r.id,
    name: r.name,
    config: r.id === SCHEMA_RULES.eval.id || EVAL_RULES.some((e) => e.id === r.id) ? 'eval' : 'training',
    severity: r.severity,
    ...(r.strictSeverity ? { strictSeverity: r.strictSeverity } : {}),
    allowable: r.allowable,
    ...(r.acknowledge ? { acknowledge: r.acknowledge } : {}),
    doc: r.doc,
  }));
}

/** One line a rule: id, severity, whether `launcher.allow` may silence it, name, doc; then the older ids. */
function rulesText(): string {
  let out = '';
  for (const r of ALL_RULES) {
    const severity = r.strictSeverity ? `${r.severity}*` : r.severity;
    out += `${r.id}  ${severity.padEnd(9)}${(r.allowable ? 'allow' : '').padEnd(7)}${r.name.padEnd(26)}${r.doc}\n`;
  }
  out +=
    '\n* an error with --strict. allow: launcher.allow may silence it, with a reason ({RLVR120: "why"}).\n';
  out +=
    '\nlauncher.acknowledge, the older form of launcher.allow (no reason; still accepted with a warning, the error stays as a warning that names it):\n';
  for (const r of ALL_RULES) if (r.acknowledge) out += `${r.acknowledge.padEnd(20)}= ${r.id} ${r.name}\n`;
  return out;
}

function label(kind: string, p: Problem): string {
  const rule = ruleOf(p);
  return `  ${kind}${rule ? ` ${rule}` : ''}: ${formatProblem(p)}\n`;
}

function allowedLine(a: AllowedFinding): string {
  const at = a.location ? `${formatLocation(a.location)}: ` : '';
  return `  allowed ${a.rule}: ${at}${a.where}: ${a.message}\n    reason: ${a.reason}\n`;
}

function render(r: LintReport): string {
  const verdict = r.errors.length ? `${r.errors.length} error(s)` : 'ok';
  const warnings = r.warnings.length ? `, ${r.warnings.length} warning(s)` : '';
  const allowed = r.allowed.length ? `, ${r.allowed.length} allowed` : '';
  const trainer = r.trainer ? `, trainer ${r.trainer.id} (${r.trainer.reason})` : '';
  let out = `${r.file}: ${r.kind} config, ${verdict}${warnings}${allowed}${trainer}\n`;
  for (const p of r.errors) out += label('error', p);
  for (const p of r.warnings) out += label('warning', p);
  for (const a of r.allowed) out += allowedLine(a);
  for (const c of r.curricula ?? []) out += `  ${c.ok ? 'ok' : 'FAILED'} ${c.detail} (${c.target})\n`;
  return out;
}
