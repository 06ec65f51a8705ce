import type { Command } from 'commander';
import { passkProfile, planPasskCampaign, runPasskLocally, submitPassk } from '../../lib/passk';
import { passkPlanJson, renderPasskLocal, renderPasskPlan, renderPasskSubmitted } from '../passk-output';
import { withInterrupt } from '../interrupt';
import { createReporter } from '../reporter';
import {
  addBatchJobOptions,
  addLocalRunOptions,
  batchJobLogPath,
  localRunOptions,
  withBatchSession,
  type BatchCommandFlags,
} from './batch-flags';
import { addSettingsOptions, exits, print } from './common';
import { passkRequestOfFlags, type PasskFlags } from './passk-flags';
import { registerPasskResults } from './passk-results';

type PasskCommandFlags = BatchCommandFlags & PasskFlags;

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
    .option(
      '--results-dir <dir>',
      'where earlier campaigns are, for their measured speed (default results/)',
    );
  addBatchJobOptions(passk, {
    instanceCount: 'instances (a shard per GPU of each)',
    spot: 'managed spot (a restart resumes every shard from its results)',
    maxRuntime: 'stop after this long (default: twice the expected time + 30m, else 24h)',
    image: "the image (default: the image of the model's job)",
  });
  addLocalRunOptions(passk, '0-3').action(exits((flags: PasskCommandFlags) => runPassk(flags)));
  passk.enablePositionalOptions();
  registerPasskResults(passk);
}

async function runPassk(flags: PasskCommandFlags): Promise<number> {
  const request = passkRequestOfFlags(flags, passkProfile().script, process.cwd());
  return withBatchSession(flags, async (connection) => {
    const plan = await planPasskCampaign(request, connection);
    if (flags.dryRun) {
      print(flags, passkPlanJson(plan), () => renderPasskPlan(plan));
      return 0;
    }
    process.stderr.write(renderPasskPlan(plan));
    if (request.local) {
      const result = await withInterrupt((signal) =>
        runPasskLocally(plan, localRunOptions(flags, connection.aws, signal)),
      );
      process.stdout.write(renderPasskLocal(result, Boolean(flags.json)));
      return result.exitCode;
    }
    const jobLogPath = await batchJobLogPath(flags);
    const result = await withInterrupt((signal) =>
      submitPassk(plan, connection.aws!, {
        jobLogPath,
        signal,
        listener: createReporter({ json: Boolean(flags.json) }),
      }),
    );
    process.stdout.write(renderPasskSubmitted(result, plan, Boolean(flags.json)));
    return 0;
  });
}
