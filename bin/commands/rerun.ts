import type { Command } from 'commander';
import { parseSetFlag, planRerun, submitRerun } from '../../lib/operate';
import { writableJobLogPath } from '../../lib/submission';
import { withInterrupt } from '../interrupt';
import { createReporter } from '../reporter';
import { renderRerun, renderRerunPlan, rerunPlanJson } from '../rerun-output';
import { json } from '../submit-output';
import {
  addSettingsOptions,
  collect,
  exits,
  withContext,
  type JsonFlag,
  type SettingsFlagValues,
} from './common';

interface RerunFlags extends SettingsFlagValues, JsonFlag {
  set?: string[];
  add?: string[];
  setString?: string[];
  dryRun?: boolean;
  jobLog?: string;
  resultsDir?: string;
}

export function registerRerun(program: Command): void {
  addSettingsOptions(program.command('rerun'))
    .description(
      'submit a job again exactly as it ran (same image, source archive, config, options) under a new name',
    )
    .argument('<job>', 'training job name')
    .option(
      '--set <key=value>',
      'change a key of the config the trainer reads, by dotted path (run.seed=7); repeatable',
      collect,
    )
    .option(
      '--set-string <key=value>',
      'like --set, with the value taken as text whatever it looks like (yes, 007, 2024-01-01); repeatable',
      collect,
    )
    .option(
      '--add <key=value>',
      'add a key the config does not have (--set refuses a new key that looks like a misspelling); repeatable',
      collect,
    )
    .option('--dry-run', 'print the plan (and the request) without creating anything')
    .option('--job-log <file>', 'job log to append to (default: docs/job_log.md of this repository)')
    .option(
      '--results-dir <dir>',
      'where the forecast finds past runs (rlvr download, submit --local)',
      'results',
    )
    .option('--json', 'print JSON')
    .action(
      exits(async (job: string, flags: RerunFlags) => {
        // A malformed --set/--add is bad input reported before any setting is resolved or AWS asked.
        for (const f of flags.set ?? []) parseSetFlag(f);
        for (const f of flags.add ?? []) parseSetFlag(f, { adds: true });
        for (const f of flags.setString ?? []) parseSetFlag(f, { asString: true });
        // The log is checked before anything is read or written, as a submit does.
        const jobLogPath = flags.dryRun
          ? undefined
          : await writableJobLogPath({ explicit: flags.jobLog, env: process.env, cwd: process.cwd() });
        await withContext(flags, async (context) => {
          const plan = await planRerun(context, {
            job,
            sets: flags.set ?? [],
            adds: flags.add ?? [],
            setStrings: flags.setString ?? [],
            resultsDir: flags.resultsDir,
          });
          if (flags.dryRun || !jobLogPath) {
            process.stdout.write(flags.json ? json(rerunPlanJson(plan)) : renderRerunPlan(plan));
            return;
          }
          const listener = createReporter({ json: Boolean(flags.json) });
          const result = await withInterrupt((signal) =>
            submitRerun(context, plan, { jobLogPath, listener, signal }),
          );
          process.stdout.write(renderRerun(result, plan, Boolean(flags.json)));
        });
      }),
    );
}
