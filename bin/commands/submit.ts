import type { Command } from 'commander';
import {
  parseSweepFlag,
  planSubmit,
  planSweep,
  submitPlanned,
  submitSweep,
  type SubmitInput,
} from '../../lib/training';
import { waitForJob } from '../../lib/operate';
import { openJobContext } from '../../lib/aws';
import { openSubmitSession, type SubmitSession } from '../../lib/submission';
import { prepareLocalRun, runPreparedLocal } from '../../lib/local';
import type { ProgressListener } from '../../lib/progress';
import { withInterrupt } from '../interrupt';
import { planJson, renderPlan } from '../plan-output';
import { createReporter } from '../reporter';
import {
  json,
  renderLocalRun,
  renderSubmitted,
  renderSweepPlan,
  renderSweepSubmitted,
  renderWaited,
} from '../submit-output';
import { addSettingsOptions, exits, settingsOf } from './common';
import { addImageOptions, parseBuildArgs } from './image-flags';
import { localGpus, localInstances, localRestart, maxJobs, submitInput } from './submit-flags';
import { addSubmitOptions, type SubmitFlags } from './submit-options';

/** Opens the session the plan and the submit share, and closes it whatever happens. */
async function withSession<T>(input: SubmitInput, run: (session: SubmitSession) => Promise<T>): Promise<T> {
  const session = openSubmitSession(input);
  try {
    return await run(session);
  } finally {
    session.close();
  }
}

export function registerSubmit(program: Command): void {
  addSubmitOptions(addImageOptions(addSettingsOptions(program.command('submit'))))
    .description('validate a training config and submit it as a SageMaker training job')
    .argument('<config>', 'training config (YAML)')
    .action(
      exits(async (configPath: string, flags: SubmitFlags) => {
        const reporter = createReporter({ json: Boolean(flags.json) });
        const input = submitInput(configPath, flags, reporter);
        // --instances and --restart without --local are usage errors, before any work.
        localInstances(flags);
        localRestart(flags);
        if (flags.local) return runLocalCommand(input, flags, reporter);
        if (flags.sweep?.length) return runSweepCommand(input, flags);
        const jobName = await runSubmitCommand(input, flags);
        return jobName && flags.wait ? runWaitCommand(jobName, flags) : 0;
      }),
    );
}

/** One job: its plan (--dry-run) or its submit. Returns the submitted job's name. */
async function runSubmitCommand(input: SubmitInput, flags: SubmitFlags): Promise<string | undefined> {
  return withSession(input, async (session) => {
    const plan = await planSubmit(input, session);
    if (flags.dryRun) {
      process.stdout.write(flags.json ? json(planJson(plan)) : renderPlan(plan));
      return undefined;
    }
    // Ctrl-C cleans up what the submit made (the library says what it removed, or the job it left).
    const result = await withInterrupt((signal) => submitPlanned(plan, session, input.listener, signal));
    process.stdout.write(renderSubmitted(result, Boolean(flags.json)));
    return result.jobName;
  });
}

/** Plans every combination, then prints the plans (dry-run) or submits them one by one. */
async function runSweepCommand(input: SubmitInput, flags: SubmitFlags): Promise<void> {
  const axes = flags.sweep!.map(parseSweepFlag);
  const limit = { maxJobs: maxJobs(flags) };
  await withSession(input, async (session) => {
    const sweep = await planSweep(input.configPath, input, axes, session, limit);
    if (flags.dryRun) {
      process.stdout.write(renderSweepPlan(sweep, Boolean(flags.json)));
      return;
    }
    // A failure or Ctrl-C after some jobs were created names them and how to stop them (exit 1).
    const results = await withInterrupt((signal) => submitSweep(sweep, session, input.listener, signal));
    process.stdout.write(renderSweepSubmitted(sweep, results, Boolean(flags.json)));
  });
}

/** `--local`: the same job in local Docker; the exit code is the job's. */
async function runLocalCommand(
  input: SubmitInput,
  flags: SubmitFlags,
  reporter: ProgressListener,
): Promise<number> {
  const gpus = localGpus(flags);
  const instances = localInstances(flags);
  const restartIn = localRestart(flags);
  // --instances plans the job for that many hosts, so the multi-host checks apply as on SageMaker.
  const localInput = {
    ...input,
    dryRun: true,
    ...(instances !== undefined ? { options: { ...input.options, instance_count: instances } } : {}),
  };
  const build = { dockerDir: flags.dockerDir, buildArgs: parseBuildArgs(flags.buildArg) };
  const common = { build, dockerHost: flags.dockerHost, onEvent: reporter };
  const result = await withSession(localInput, async (session) => {
    const prepared = await prepareLocalRun(localInput, session, common);
    // Ctrl-C stops the running job as SageMaker would; before it runs, it simply ends the command.
    return withInterrupt((signal) =>
      runPreparedLocal(prepared, session, {
        ...common,
        gpus,
        ...(restartIn !== undefined ? { restartIn } : {}),
        // With --json, stdout carries only the result.
        out: flags.json ? process.stderr : process.stdout,
        err: process.stderr,
        signal,
      }),
    );
  });
  (flags.json ? process.stdout : process.stderr).write(renderLocalRun(result, Boolean(flags.json)));
  return result.exitCode;
}

/** `--wait`: status transitions and logs until the job ends; 0 only for Completed with checkpoints. */
async function runWaitCommand(jobName: string, flags: SubmitFlags): Promise<number> {
  const context = await openJobContext({ settings: settingsOf(flags) });
  try {
    const out = flags.json ? process.stderr : process.stdout;
    const onEvent = createReporter({ json: Boolean(flags.json), stream: out });
    const result = await waitForJob(context, jobName, { pollMs: Number(flags.poll ?? 15) * 1000, onEvent });
    const rendered = renderWaited(result);
    out.write(rendered.text);
    if (flags.json) process.stdout.write(rendered.json);
    return result.ok ? 0 : 1;
  } finally {
    context.close();
  }
}
