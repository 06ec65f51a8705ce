import type { Command } from 'commander';
import { openJobContext } from '../../lib/aws';
import { UserError } from '../../lib/errors';
import { CLI_ENV } from '../../lib/layout';
import {
  parsePasskRequest,
  passkProfile,
  passkResultsOf,
  planPasskCampaign,
  runPasskLocally,
  submitPassk,
  type PasskFlags,
} from '../../lib/passk';
import { passAtKCsv, passkCsv, passkJson, passkMarkdown } from '../../lib/passk-records';
import { openSubmitSession, writableJobLogPath } from '../../lib/submission';
import { passkPlanJson, renderPasskPlan, renderPasskSubmitted } from '../passk-output';
import { withInterrupt } from '../interrupt';
import { createReporter } from '../reporter';
import { addSettingsOptions, exits, settingsOf, type SettingsFlagValues } from './common';

interface PasskCommandFlags extends SettingsFlagValues, PasskFlags {
  dryRun?: boolean;
  json?: boolean;
  jobLog?: string;
  dockerHost?: string;
}

export function registerPassk(program: Command): void {
  const passk = addSettingsOptions(program.command('passk'))
    .description(
      "run the repository's pass@k script as one job: a shard per GPU of every host, results streamed to S3",
    )
    .option(
      '--model <ref>',
      '<job>[:step20|final], s3://folder/, org/Model, or ./local (as rlvr eval takes a checkpoint)',
    )
    .option('--dataset <name>', "the script's dataset: gsm8k, math, mbpp, …")
    .option('--split <name>', 'the split (default train)')
    .option('--level <list>', 'MATH levels, e.g. 3,4,5')
    .option('--n <count>', 'completions per prompt (default 128)')
    .option('--max-tokens <n>', 'max tokens per completion (default 1024)')
    .option('--temperature <t>', 'sampling temperature (default 1.0)')
    .option('--top-p <p>', 'top-p (default 0.95)')
    .option('--top-k <k>', 'top-k (default 50)')
    .option('--max-model-len <n>', 'vLLM max model length (default 2048)')
    .option('--batch-size <n>', 'prompts per vLLM call (default 16)')
    .option('--max-prompts <n>', 'only the first n prompts')
    .option('--verifier-workers <n>', 'verifier workers per shard (default 8, as their launchers pass)')
    .option('--continue <job|folder>', "keep an earlier run of the same campaign's finished prompts")
    .option('--trainer-src <dir>', "the trainer's repository (default: here)")
    .option(
      '--dataset-dir <dir>',
      'with --local: a save_to_disk folder of the dataset, instead of the copy in S3',
    )
    .option('--results-dir <dir>', 'where earlier campaigns are, for their measured speed (default results/)')
    .option('--instance-type <type>', 'SageMaker instance type (default ml.g6e.48xlarge, 8 GPUs)')
    .option('--instance-count <n>', 'instances (a shard per GPU of each)')
    .option('--spot', 'managed spot (a restart resumes every shard from its results)')
    .option(
      '--max-runtime <duration>',
      'stop after this long (default: twice the expected time + 30m, else 24h)',
    )
    .option('--max-retries <n>', 'SageMaker restarts after an internal error or spot loss')
    .option('--volume-gb <n>', 'volume per instance (default 200)')
    .option('--image <ref>', "the image (default: the image of the model's job)")
    .option('--description <text>', 'for the job log')
    .option('--job-log <file>', 'the job log (default docs/job_log.md in the repository)')
    .option('--dry-run', 'print the plan; create nothing')
    .option('--json', 'print JSON')
    .option('--local', 'run the job in local Docker')
    .option('--gpus <list>', 'with --local: the GPUs to use, e.g. 0-3')
    .option('--docker-host <uri>', 'with --local: the Docker engine (else DOCKER_HOST)')
    .action(exits((flags: PasskCommandFlags) => runPassk(flags)));
  passk.enablePositionalOptions();
  addSettingsOptions(passk.command('results'))
    .description(
      'merge the shards of pass@k campaigns: per prompt n, c and pass rate; unbiased pass@k beside the first-k figure',
    )
    .argument(
      '<sources...>',
      "passk job names, or run folders (also a bare folder of the script's shard_<i>/)",
    )
    .option('--format <format>', 'md, csv (per prompt), pass-at-k-csv or json', 'md')
    .option('--prompts', 'with md: the per-prompt table too')
    .action(exits((sources: string[], flags: ResultsFlags) => runResults(sources, flags)));
}

async function runPassk(flags: PasskCommandFlags): Promise<number> {
  const request = parsePasskRequest(flags, passkProfile().script, process.cwd());
  const session = openSubmitSession({
    settings: settingsOf(flags),
    dryRun: Boolean(flags.dryRun || flags.local),
  });
  try {
    const connection = await session.connect();
    const plan = await planPasskCampaign(request, connection);
    if (flags.dryRun) {
      process.stdout.write(
        flags.json ? `${JSON.stringify(passkPlanJson(plan), null, 2)}\n` : renderPasskPlan(plan),
      );
      return 0;
    }
    process.stderr.write(renderPasskPlan(plan));
    if (request.local) {
      const result = await withInterrupt((signal) =>
        runPasskLocally(plan, {
          gpuDevices: process.env[CLI_ENV.localGpuDevices] !== 'none',
          dockerHost: flags.dockerHost,
          aws: connection.aws,
          out: flags.json ? process.stderr : process.stdout,
          err: process.stderr,
          signal,
          listener: createReporter({ json: Boolean(flags.json) }),
        }),
      );
      const summary = { ok: result.exitCode === 0, ...result };
      process.stdout.write(
        flags.json
          ? `${JSON.stringify(summary, null, 2)}\n`
          : `• exit ${result.exitCode}; run folder ${result.runDir}\n  merged: rlvr passk results ${result.runDir}${result.interrupted ? `\n  continue it: the same command with --continue ${result.runDir}` : ''}\n`,
      );
      return result.exitCode;
    }
    const jobLogPath = await writableJobLogPath({
      explicit: flags.jobLog,
      env: process.env,
      cwd: process.cwd(),
    });
    const result = await withInterrupt((signal) =>
      submitPassk(plan, connection.aws!, {
        jobLogPath,
        signal,
        listener: createReporter({ json: Boolean(flags.json) }),
      }),
    );
    process.stdout.write(renderPasskSubmitted(result, plan, Boolean(flags.json)));
    return 0;
  } finally {
    session.close();
  }
}

interface ResultsFlags extends SettingsFlagValues {
  format?: string;
  prompts?: boolean;
}

async function runResults(sources: string[], flags: ResultsFlags): Promise<number> {
  const format = flags.format ?? 'md';
  if (!['md', 'csv', 'pass-at-k-csv', 'json'].includes(format))
    throw new UserError(`--format ${format}: md, csv, pass-at-k-csv or json`, 'BadFlag');
  const results = await passkResultsOf(sources, {
    cwd: process.cwd(),
    openContext: () => openJobContext({ settings: settingsOf(flags) }),
  });
  process.stdout.write(
    format === 'csv'
      ? passkCsv(results)
      : format === 'pass-at-k-csv'
        ? passAtKCsv(results)
        : format === 'json'
          ? passkJson(results)
          : passkMarkdown(results, { prompts: Boolean(flags.prompts) }),
  );
  for (const r of results) {
    if (r.missingShards.length)
      process.stderr.write(`warning: ${r.source}: shard(s) ${r.missingShards.join(', ')} have no results\n`);
    if (r.badLines.length)
      process.stderr.write(
        `warning: ${r.source}: ${r.badLines.length} line(s) that are not a result were skipped\n`,
      );
  }
  return 0;
}
