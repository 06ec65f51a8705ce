import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Command } from 'commander';
import { openJobContext, type AwsClients } from '../../lib/aws';
import { CLI_ENV } from '../../lib/layout';
import {
  parseEvalRequest,
  planEval,
  readLearnedDurations,
  requireLocalImage,
  resultsOfJobs,
  runEvalLocally,
  submitEval,
  waitForEvalJob,
  type EvalFlags,
  type EvalPlan,
} from '../../lib/eval';
import { tableCsv, tableJson, tableMarkdown } from '../../lib/eval-records';
import { UserError } from '../../lib/errors';
import { openSubmitSession, writableJobLogPath } from '../../lib/submission';
import { renderEvalPlan, renderEvalSubmitted, evalPlanJson } from '../eval-output';
import { withInterrupt } from '../interrupt';
import { createReporter } from '../reporter';
import { addSettingsOptions, exits, settingsOf, type SettingsFlagValues } from './common';

interface EvalCommandFlags extends SettingsFlagValues, EvalFlags {
  dryRun?: boolean;
  json?: boolean;
  wait?: boolean;
  jobLog?: string;
  dockerHost?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerEval(program: Command): void {
  const evalCommand = addSettingsOptions(program.command('eval'))
    .description(
      'evaluate checkpoints × benchmarks on every GPU of one job (tensor parallel 1, the team standard)',
    )
    .option(
      '--checkpoints <ref>',
      '[label=]<job>[:step20,final|all], s3://folder/, org/Model, or ./local (repeatable)',
      collect,
    )
    .option('--benchmarks <list>', 'task:num_fewshot,… e.g. gsm8k_cot:8,ifeval:0 (repeatable)', collect)
    .option('--suite <name>', 'a named benchmark suite (configs/eval/suites.yaml, or ours: standard, code)')
    .option('--suites-file <yaml>', 'the suites file (default configs/eval/suites.yaml here)')
    .option('--config <yaml>', "an eval config in the team's format with checkpoints and benchmarks")
    .option(
      '--deviate <name=value>',
      'run off the standard, recorded with the results: seed=, max_model_len=, max_gen_toks.<task>=, … (repeatable)',
      collect,
    )
    .option('--harness <name>', 'lm_eval (default) or olmes')
    .option('--log-samples', "keep the harness's per-sample outputs")
    .option('--force', 'run units again even when an earlier eval has their results')
    .option('--instance-type <type>', 'SageMaker instance type (default ml.g6e.48xlarge, 8 GPUs)')
    .option('--instance-count <n>', 'instances (each runs its share; no Ray)')
    .option('--spot', 'managed spot (a restart skips the units already done)')
    .option('--max-runtime <duration>', 'stop after this long (default: twice the expected wall time + 30m)')
    .option('--max-retries <n>', 'SageMaker restarts after an internal error or spot loss')
    .option('--volume-gb <n>', 'volume per instance (default 200)')
    .option('--image <ref>', 'the image (default: the image of the first training job named)')
    .option('--description <text>', 'for the job log')
    .option('--job-log <file>', 'the job log (default docs/job_log.md in the repository)')
    .option('--dry-run', 'print the plan; create nothing')
    .option('--json', 'print JSON')
    .option('--wait', 'follow the job until it ends, then print the results table')
    .option('--local', 'run the job in local Docker')
    .option('--gpus <list>', 'with --local: the GPUs to use, e.g. 0-7')
    .option('--docker-host <uri>', 'with --local: the Docker engine (else DOCKER_HOST)')
    .action(exits((flags: EvalCommandFlags) => runEval(flags)));

  // `eval`'s own options (--dry-run, --checkpoints, …) are not `eval results`' options.
  evalCommand.enablePositionalOptions();
  addSettingsOptions(evalCommand.command('results'))
    .description(
      'checkpoint × benchmark table of eval jobs, training jobs (their eval watchers) and local run folders, merged',
    )
    .argument('<jobs...>', 'eval or training job names, or local run folders')
    .option('--baseline <label>', 'a row (label or checkpoint id): the others show their difference to it')
    .option('--format <format>', 'md, csv or json', 'md')
    .action(exits((jobs: string[], flags: ResultsFlags) => runResults(jobs, flags)));
}

async function runEval(flags: EvalCommandFlags): Promise<number> {
  const request = parseEvalRequest(flags, process.cwd());
  const session = openSubmitSession({
    settings: settingsOf(flags),
    dryRun: Boolean(flags.dryRun || flags.local),
  });
  try {
    const connection = await session.connect();
    const plan = await planEval(request, connection, readLearnedDurations());
    if (flags.dryRun) {
      process.stdout.write(
        flags.json ? `${JSON.stringify(evalPlanJson(plan), null, 2)}\n` : renderEvalPlan(plan),
      );
      return 0;
    }
    if (request.local) return await runLocalEval(plan, flags, connection.aws);
    if (plan.jobPlan.units.length === 0) {
      process.stdout.write(
        `Nothing to run: every unit was done earlier (${plan.skipped.length} skipped; --force runs them again).\n`,
      );
      return 0;
    }
    const jobLogPath = await writableJobLogPath({
      explicit: flags.jobLog,
      env: process.env,
      cwd: process.cwd(),
    });
    process.stderr.write(renderEvalPlan(plan));
    const listener = createReporter({ json: Boolean(flags.json) });
    const result = await withInterrupt((signal) =>
      submitEval(plan, connection.aws!, { jobLogPath, signal, listener }),
    );
    process.stdout.write(renderEvalSubmitted(result, plan, Boolean(flags.json)));
    return flags.wait ? await waitAndTable(result.jobName, flags) : 0;
  } finally {
    session.close();
  }
}

async function runLocalEval(
  plan: EvalPlan,
  flags: EvalCommandFlags,
  aws: AwsClients | undefined,
): Promise<number> {
  requireLocalImage(plan);
  process.stderr.write(renderEvalPlan(plan));
  if (plan.jobPlan.units.length === 0) {
    process.stderr.write(`Nothing to run: every unit was done earlier (--force runs them again).\n`);
    return 0;
  }
  const { result, table } = await withInterrupt((signal) =>
    runEvalLocally(plan, {
      gpuDevices: process.env[CLI_ENV.localGpuDevices] !== 'none',
      dockerHost: flags.dockerHost,
      aws,
      out: flags.json ? process.stderr : process.stdout,
      err: process.stderr,
      signal,
      listener: createReporter({ json: Boolean(flags.json) }),
    }),
  );
  if (flags.json) {
    const results = JSON.parse(tableJson(table));
    process.stdout.write(`${JSON.stringify({ ok: result.exitCode === 0, ...result, results }, null, 2)}\n`);
  } else
    process.stdout.write(
      `\n${tableMarkdown(table)}\n• exit ${result.exitCode}; run folder ${result.runDir}\n`,
    );
  return result.exitCode;
}

async function waitAndTable(jobName: string, flags: EvalCommandFlags): Promise<number> {
  const context = await openJobContext({ settings: settingsOf(flags) });
  try {
    const out = flags.json ? process.stderr : process.stdout;
    const listener = createReporter({ json: Boolean(flags.json), stream: out });
    const { status, table } = await waitForEvalJob(context, jobName, { listener });
    out.write(tableMarkdown(table));
    return status === 'Completed' ? 0 : 1;
  } finally {
    context.close();
  }
}

interface ResultsFlags extends SettingsFlagValues {
  baseline?: string;
  format?: string;
}

/**
 * A name that looks like a path is meant as a local run folder: one that is not there, or is a file,
 * is a slip to name, not a job to look up in S3 (nor an empty table).
 */
function checkRunFolders(names: readonly string[], cwd: string): void {
  for (const name of names) {
    const abs = path.resolve(cwd, name.startsWith('~/') ? path.join(os.homedir(), name.slice(2)) : name);
    const exists = fs.existsSync(abs);
    const pathLike =
      /^(\.{1,2}|~)?\//.test(name) ||
      name === '.' ||
      name === '..' ||
      (!name.startsWith('s3://') && /[/\\]/.test(name));
    if (exists && !fs.statSync(abs).isDirectory())
      throw new UserError(
        `${name} is a file: eval results reads run folders (results/<run>/) and job names`,
        'NotARunFolder',
      );
    if (pathLike && !exists)
      throw new UserError(
        `${name}: no folder at ${abs} (a local run folder; a job is named without a path)`,
        'NoSuchRunFolder',
      );
  }
}

async function runResults(jobs: string[], flags: ResultsFlags): Promise<number> {
  const format = flags.format ?? 'md';
  if (!['md', 'csv', 'json'].includes(format))
    throw new UserError(`--format ${format}: md, csv or json`, 'BadFlag');
  checkRunFolders(jobs, process.cwd());
  const { table, stats } = await resultsOfJobs(jobs, {
    cwd: process.cwd(),
    baseline: flags.baseline,
    openContext: () => openJobContext({ settings: settingsOf(flags) }),
    // A unit record that could not be read is a failed cell in the table and a warning here.
    warn: (warning) => process.stderr.write(`warning: ${warning}\n`),
  });
  process.stdout.write(
    format === 'csv' ? tableCsv(table) : format === 'json' ? tableJson(table) : tableMarkdown(table),
  );
  if (stats)
    process.stderr.write(
      `• read ${stats.files} result file(s), ${stats.fetched} from S3, ${stats.files - stats.fetched} from the local cache\n`,
    );
  return 0;
}
