import type { Command } from 'commander';
import { RULE_DOCS } from '../../lib/config';
import { lintConfigFile, type LintReport } from '../../lib/jobs';
import { formatProblem } from '../../lib/errors';

interface LintFlags {
  readonly strict?: boolean;
  readonly json?: boolean;
  readonly rules?: boolean;
}

/** `rlvr lint CONFIG…`: a submit's config checks alone, on training and eval configs; exit 2 on any error. */
export function registerLint(program: Command): void {
  program
    .command('lint')
    .description('check training and eval configs as a submit would (no AWS, no image); exit 2 on errors')
    .argument('[configs...]', 'training or eval config files')
    .option('--strict', "likely typos of the trainer's keys are errors, not warnings")
    .option('--rules', 'list the rules a config can acknowledge (launcher.acknowledge) and what each guards')
    .option('--json', 'print the findings as JSON')
    .action(async (configs: string[], flags: LintFlags) => {
      if (flags.rules) {
        const rules = Object.entries(RULE_DOCS).map(([id, doc]) => ({ id, doc }));
        if (flags.json) process.stdout.write(`${JSON.stringify({ rules }, null, 2)}\n`);
        else for (const r of rules) process.stdout.write(`${r.id.padEnd(20)}${r.doc}\n`);
        return;
      }
      if (configs.length === 0) {
        process.stderr.write('error: name at least one config (or pass --rules)\n');
        process.exitCode = 2;
        return;
      }
      const reports: LintReport[] = [];
      for (const c of configs) reports.push(await lintConfigFile(c, c, { strict: flags.strict }));
      if (flags.json)
        process.stdout.write(
          `${JSON.stringify({ ok: reports.every((r) => !r.errors.length), reports }, null, 2)}\n`,
        );
      else for (const r of reports) process.stdout.write(render(r));
      if (reports.some((r) => r.errors.length > 0)) process.exitCode = 2;
    });
}

function render(r: LintReport): string {
  const verdict = r.errors.length ? `${r.errors.length} error(s)` : 'ok';
  const trainer = r.trainer ? `, trainer ${r.trainer.id} (${r.trainer.reason})` : '';
  let out = `${r.file}: ${r.kind} config, ${verdict}${r.warnings.length ? `, ${r.warnings.length} warning(s)` : ''}${trainer}\n`;
  for (const p of r.errors) out += `  error: ${formatProblem(p)}\n`;
  for (const p of r.warnings) out += `  warning: ${formatProblem(p)}\n`;
  return out;
}
