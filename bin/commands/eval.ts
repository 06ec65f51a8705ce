import type { Command } from 'commander';
import type { AwsClients } from '../../lib/aws';
import {
  planEval,
  readLearnedDurations,
  requireLocalImage,
  runEvalLocally,
  submitEval,
  waitForEvalJob,
  type EvalPlan,
} from '../../lib/eval';
import { tableMarkdown } from '../../lib/eval-records';
import {
  evalPlanJson,
  nothingToRun,
  renderEvalLocal,
  renderEvalPlan,
  renderEvalSubmitted,
} from '../eval-output';
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
import { addSettingsOptions, collect, exits, print, withContext } from './common';
import { evalRequestOfFlags, type EvalFlags } from './eval-flags';
import { registerEvalResults } from './eval-results';

interface EvalCommandFlags extends BatchCommandFlags, EvalFlags {
  wait?: boolean;
}

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
    .option('--force', 'run units again even when an earlier eval has their results');
  addBatchJobOptions(evalCommand, {
    instanceCount: 'instances (each runs its share; no Ray)',
    spot: 'managed spot (a restart skips the units already done)',
    maxRuntime: 'stop after this long (default: twice the expected wall time + 30m)',
    image: 'the image (default: the image of the first training job named)',
  }).option('--wait', 'follow the job until it ends, then print the results table');
  addLocalRunOptions(evalCommand, '0-7').action(exits((flags: EvalCommandFlags) => runEval(flags)));

  // `eval`'s own options (--dry-run, --checkpoints, …) are not `eval results`' options.
  evalCommand.enablePositionalOptions();
  registerEvalResults(evalCommand);
}

async function runEval(flags: EvalCommandFlags): Promise<number> {
  const request = evalRequestOfFlags(flags, process.cwd());
  return withBatchSession(flags, async (connection) => {
    const plan = await planEval(request, connection, readLearnedDurations());
    if (flags.dryRun) {
      print(flags, evalPlanJson(plan), () => renderEvalPlan(plan));
      return 0;
    }
    if (request.local) return await runLocalEval(plan, flags, connection.aws);
    if (plan.jobPlan.units.length === 0) {
      process.stdout.write(nothingToRun(plan.skipped.length));
      return 0;
    }
    const jobLogPath = await batchJobLogPath(flags);
    process.stderr.write(renderEvalPlan(plan));
    const listener = createReporter({ json: Boolean(flags.json) });
    const result = await withInterrupt((signal) =>
      submitEval(plan, connection.aws!, { jobLogPath, signal, listener }),
    );
    process.stdout.write(renderEvalSubmitted(result, plan, Boolean(flags.json)));
    return flags.wait ? await waitAndTable(result.jobName, flags) : 0;
  });
}

async function runLocalEval(
  plan: EvalPlan,
  flags: EvalCommandFlags,
  aws: AwsClients | undefined,
): Promise<number> {
  requireLocalImage(plan);
  process.stderr.write(renderEvalPlan(plan));
  if (plan.jobPlan.units.length === 0) {
    process.stderr.write(nothingToRun());
    return 0;
  }
  const { result, table } = await withInterrupt((signal) =>
    runEvalLocally(plan, localRunOptions(flags, aws, signal)),
  );
  process.stdout.write(renderEvalLocal(result, table, Boolean(flags.json)));
  return result.exitCode;
}

async function waitAndTable(jobName: string, flags: EvalCommandFlags): Promise<number> {
  return withContext(flags, async (context) => {
    const out = flags.json ? process.stderr : process.stdout;
    const listener = createReporter({ json: Boolean(flags.json), stream: out });
    const { status, table } = await waitForEvalJob(context, jobName, { listener });
    out.write(tableMarkdown(table));
    return status === 'Completed' ? 0 : 1;
  });
}
