import type { Command } from 'commander';
import { formatProblem } from '../../lib/errors';
import {
  formatUsd,
  jobStatus,
  openJobContext,
  parseSweepFlag,
  planSubmit,
  planSweep,
  PRICES_AS_OF,
  PRICES_SOURCE,
  PROVISIONAL_NAMES,
  submit,
  submitSweep,
  watchJob,
  type ImageResolver,
  type JobOptionFlags,
  type SubmitInput,
} from '../../lib/jobs';
import { renderWatchEvent } from './watch-output';
import { progressListener } from '../output';
import { planJson, renderPlan } from '../plan-output';
import { addSettingsOptions, settingsOf, table, type SettingsFlagValues } from './common';
import { ensureImage, resolveJobImage } from '../../lib/image';
import { runLocal, type LocalRunEvent } from '../../lib/local/run';
import { parseGpuList } from '../../lib/config';
import { UserError } from '../../lib/errors';
import { addImageOptions, imageReporter, parseBuildArgs, type ImageFlagValues } from './image';

interface SubmitFlags extends SettingsFlagValues, ImageFlagValues {
  build?: boolean;
  push?: boolean;
  local?: boolean;
  gpus?: string;
  dryRun?: boolean;
  json?: boolean;
  debug?: boolean;
  description?: string;
  template?: string;
  evalConfig?: string;
  trainerSrc?: string;
  image?: string;
  jobLog?: string;
  instanceType?: string;
  instanceCount?: string;
  volumeGb?: string;
  trainGpus?: string;
  evalGpus?: string;
  maxRuntime?: string;
  spot?: boolean;
  maxWait?: string;
  keepAlive?: string;
  evalWait?: string;
  trainerCommand?: string;
  modelInputMode?: string;
  networkIsolation?: boolean;
  ray?: boolean;
  tag?: string[];
  sweep?: string[];
  wait?: boolean;
  poll?: string;
  strict?: boolean;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function optionFlags(flags: SubmitFlags): JobOptionFlags {
  const tags = flags.tag?.length
    ? Object.fromEntries(
        flags.tag.map((t) => {
          const i = t.indexOf('=');
          return i < 0 ? [t, ''] : [t.slice(0, i), t.slice(i + 1)];
        }),
      )
    : undefined;
  return {
    instance_type: flags.instanceType,
    instance_count: flags.instanceCount,
    volume_gb: flags.volumeGb,
    train_gpus: flags.trainGpus,
    eval_gpus: flags.evalGpus,
    max_runtime: flags.maxRuntime,
    spot: flags.spot,
    max_wait: flags.maxWait,
    keep_alive: flags.keepAlive,
    eval_wait: flags.evalWait,
    trainer_command: flags.trainerCommand,
    model_input_mode: flags.modelInputMode,
    network_isolation: flags.networkIsolation,
    use_ray: flags.ray,
    tags,
  };
}

export function registerSubmit(program: Command): void {
  addImageOptions(addSettingsOptions(program.command('submit')))
    .description('validate a training config and submit it as a SageMaker training job')
    .argument('<config>', 'training config (YAML)')
    .option('--dry-run', 'validate and print the full plan; create nothing (works without AWS)')
    .option('--json', 'print one JSON object on stdout')
    .option('--description <text>', 'what this job is for (job log, plan)')
    .option('--template <name>', 'job template (p4de-train-eval, p4de-train, p5-train-eval, g5-smoke, …)')
    .option('--eval-config <file>', 'eval watcher config, run beside training on the eval GPUs')
    .option('--trainer-src <dir>', "trainer's source folder (default: the git repository holding the config)")
    .option('--image <uri>', 'training image, used as it is (repo@sha256:… or repo:tag)')
    .option('--build', "build the image for the trainer's dependencies if the engine lacks it")
    .option(
      '--push',
      'build if needed and push the image unless the repository has it; the job pins its digest',
    )
    .option('--local', 'run the same job in local Docker; the run folder is results/<config>_<time>/')
    .option('--gpus <list>', 'with --local: host GPUs for the container, e.g. 0,1,2,3 (inside: 0..n-1)')
    .option('--job-log <file>', 'job log to append to (default: docs/job_log.md of the config repository)')
    .option('--instance-type <type>', 'e.g. ml.p4de.24xlarge')
    .option('--instance-count <n>', 'instances')
    .option('--volume-gb <n>', 'EBS volume per instance, GB')
    .option('--train-gpus <list>', 'GPUs for training, e.g. 0,1,2,3,4,5 or 0-5')
    .option('--eval-gpus <list>', 'GPUs for the eval watcher, e.g. 6,7')
    .option('--max-runtime <duration>', 'e.g. 24h, 90m, 86400')
    .option('--spot', 'managed spot training (resumes from checkpoints)')
    .option('--no-spot', 'on-demand training')
    .option('--max-wait <duration>', 'spot: longest wait plus runtime (≥ max runtime)')
    .option('--keep-alive <duration>', 'warm pool keep-alive (≤ 1h)')
    .option(
      '--eval-wait <duration>',
      'once training ends, how long the eval watcher may finish (default 30m)',
    )
    .option(
      '--trainer-command <cmd>',
      "trainer command; {config} is the config path (default: the trainer profile's)",
    )
    .option('--strict', "likely typos of the trainer's keys are errors, not warnings")
    .option('--model-input-mode <mode>', 'FastFile or File')
    .option('--network-isolation', 'run with network isolation (default)')
    .option('--no-network-isolation', 'allow the container network access')
    .option('--ray', 'start a Ray head on the train GPUs before the trainer (default)')
    .option('--no-ray', 'do not start Ray')
    .option('--tag <key=value>', 'extra job tag (repeatable)', collect)
    .option(
      '--sweep <key=v1,v2,…>',
      'one job per combination, e.g. optimizer.lr=5e-5,1e-5 (repeatable)',
      collect,
    )
    .option(
      '--wait',
      'follow the job (status and logs) until it ends; exit 0 only if it Completed with checkpoints',
    )
    .option('--poll <seconds>', 'seconds between polls with --wait', '15')
    .action(async (configPath: string, flags: SubmitFlags) => {
      const input = {
        configPath,
        evalConfigPath: flags.evalConfig,
        options: optionFlags(flags),
        strict: Boolean(flags.strict),
        template: flags.template,
        description: flags.description,
        trainerSrc: flags.trainerSrc,
        image: flags.image,
        jobLog: flags.jobLog,
        settings: settingsOf(flags),
        dryRun: Boolean(flags.dryRun),
        listener: progressListener({ quiet: Boolean(flags.json) }),
        resolveImage: imageResolver(flags),
      };
      if (flags.local) {
        process.exitCode = await submitLocal(input, flags);
        return;
      }
      if (flags.sweep?.length) {
        await runSweep(configPath, input, flags);
        return;
      }
      if (flags.dryRun) {
        const plan = await planSubmit(input);
        process.stdout.write(flags.json ? `${JSON.stringify(planJson(plan), null, 2)}\n` : renderPlan(plan));
        return;
      }
      const result = await submit(input);
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify(
            {
              ok: true,
              jobName: result.jobName,
              jobArn: result.jobArn,
              checkpointsUri: result.checkpointsUri,
              consoleUrl: result.consoleUrl,
              jobLog: result.jobLogPath,
              createTrainingJobRequest: { ...result.plan.request, TrainingJobName: result.jobName },
            },
            null,
            2,
          )}\n`,
        );
      } else {
        const warnings = result.plan.warnings.map((w) => `  warning: ${formatProblem(w)}\n`).join('');
        process.stdout.write(
          `${warnings}Submitted ${result.jobName}\n` +
            `  checkpoints and traces stream to ${result.checkpointsUri}\n` +
            `  console: ${result.consoleUrl}\n` +
            `  logged in ${result.jobLogPath}\n`,
        );
      }
      if (flags.wait) process.exitCode = await waitForJob(result.jobName, flags);
    });
}

/** `--local`: plan as for SageMaker (no S3 checks), build the image if the engine lacks it, run it. */
async function submitLocal(input: SubmitInput, flags: SubmitFlags): Promise<number> {
  let gpus: number[] | undefined;
  if (flags.gpus !== undefined) {
    gpus = parseGpuList(flags.gpus);
    if (!gpus)
      throw new UserError(`--gpus ${flags.gpus}: expected GPU indices such as 0,1,2,3 or 0-3`, 'BadFlag');
  }
  if (flags.sweep?.length) throw new UserError('--local runs one job: leave out --sweep', 'BadFlag');
  if (flags.dryRun) {
    throw new UserError('--local runs the job here; for its plan, use --dry-run without --local', 'BadFlag');
  }
  const plan = await planSubmit({ ...input, dryRun: true, local: true, resolveImage: undefined });
  try {
    for (const w of plan.warnings) process.stderr.write(`  warning: ${formatProblem(w)}\n`);
    const reporter = imageReporter(Boolean(flags.json));
    let image = flags.image ?? plan.config.value.launcher?.image;
    if (!image) {
      const built = await ensureImage({
        context: {
          dockerDir: flags.dockerDir,
          trainerSrc: plan.source.root,
          buildArgs: parseBuildArgs(flags.buildArg),
        },
        repositoryUri: plan.placeholders.includes('repositoryUri')
          ? LOCAL_REPOSITORY
          : plan.requestSettings.repositoryUri,
        build: true,
        push: false,
        dockerHost: flags.dockerHost,
        listener: reporter,
      });
      image = built.ref;
    }
    // Ctrl-C (or SIGTERM) stops the job as SageMaker would: the library gets an AbortSignal.
    const interrupt = new AbortController();
    const onSignal = () => interrupt.abort();
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    let result: Awaited<ReturnType<typeof runLocal>>;
    try {
      result = await runLocal({
        plan,
        image,
        gpus,
        dockerHost: flags.dockerHost,
        aws: plan.aws,
        // With --json, stdout carries only the result.
        out: flags.json ? process.stderr : process.stdout,
        err: process.stderr,
        signal: interrupt.signal,
        listener: renderLocalRunEvent,
      });
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    if (flags.json) {
      process.stdout.write(`${JSON.stringify({ ok: result.exitCode === 0, ...result, image }, null, 2)}\n`);
    } else {
      process.stderr.write(`• exit ${result.exitCode}; run folder ${result.runDir}\n`);
    }
    return result.exitCode;
  } finally {
    plan.aws?.close();
  }
}

function renderLocalRunEvent(e: LocalRunEvent): void {
  if (e.type === 'started') {
    process.stderr.write(`• local run ${e.name}: ${e.image}\n`);
    for (const b of e.binds) process.stderr.write(`  ${b.what}: ${b.host}\n`);
    process.stderr.write(`  run folder: ${e.runDir}\n`);
    if (!e.gpus) process.stderr.write('  no GPUs: pass --gpus 0,1,… to give the container host GPUs\n');
  } else if (e.type === 'stopping') {
    process.stderr.write(`\n• stopping: SIGTERM to the job, SIGKILL after ${e.graceSeconds} s\n`);
  } else {
    process.stderr.write(`• the job failed: ${e.reason}\n`);
  }
}

/** The repository name local builds get when no repository is configured. */
const LOCAL_REPOSITORY = 'rlvr-local/train';

function imageResolver(flags: SubmitFlags): ImageResolver {
  const options = {
    build: Boolean(flags.build),
    push: Boolean(flags.push),
    dockerDir: flags.dockerDir,
    buildArgs: parseBuildArgs(flags.buildArg),
    dockerHost: flags.dockerHost,
    listener: imageReporter(Boolean(flags.json)),
  };
  return (request) =>
    resolveJobImage(options, {
      trainerSrc: request.trainerSrc,
      repositoryUri: request.repositoryUri,
      ecr: request.aws?.ecr,
      dryRun: request.dryRun,
    });
}

/** Plans every combination, then prints the plans (dry-run) or submits them one by one. */
async function runSweep(configPath: string, input: SubmitInput, flags: SubmitFlags): Promise<void> {
  const sweep = await planSweep(configPath, input, flags.sweep!.map(parseSweepFlag));
  const { sweepId, variants, plans, totalEstimatedCost } = sweep;
  if (flags.dryRun) {
    if (flags.json) {
      const jobs = plans.map((p, i) => ({ overrides: variants[i].label, ...planJson(p) }));
      const json = {
        ok: true,
        dryRun: true,
        sweepId,
        namesProvisional: PROVISIONAL_NAMES,
        jobs,
        totalEstimatedCost,
      };
      process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
    } else {
      const rows = plans.map((p, i) => [
        p.jobName,
        variants[i].label,
        formatUsd(p.estimate?.maxRuntimeCost),
        p.description,
      ]);
      process.stdout.write(
        `Sweep ${sweepId}: ${plans.length} jobs (dry run: nothing was created)\n\n` +
          table(['JOB (PROVISIONAL)', 'OVERRIDES', 'MAX COST', 'DESCRIPTION'], rows) +
          `\n${PROVISIONAL_NAMES}.\nEstimated at most ${formatUsd(totalEstimatedCost)} in all (on-demand price × max runtime; ${PRICES_SOURCE}, ${PRICES_AS_OF}).\n`,
      );
    }
    return;
  }
  const results = await submitSweep(sweep, input.listener);
  if (flags.json) {
    const jobs = results.map((r, i) => ({
      jobName: r.jobName,
      overrides: variants[i].label,
      checkpointsUri: r.checkpointsUri,
    }));
    process.stdout.write(`${JSON.stringify({ ok: true, sweepId, jobs }, null, 2)}\n`);
  } else {
    process.stdout.write(
      `Submitted sweep ${sweepId}: ${results.length} jobs\n` +
        table(
          ['JOB', 'OVERRIDES'],
          results.map((r, i) => [r.jobName, variants[i].label]),
        ) +
        `logged in ${results[0]?.jobLogPath}; watch them with \`rlvr jobs --name-contains ${sweepId.slice(6, 14)}\`\n`,
    );
  }
}

/** `--wait`: status transitions and logs until the job ends; 0 only for Completed with checkpoints. */
async function waitForJob(jobName: string, flags: SubmitFlags): Promise<number> {
  const context = await openJobContext({ settings: settingsOf(flags) });
  try {
    const watch = watchJob(context, jobName, {
      follow: true,
      statusEvents: true,
      pollMs: Number(flags.poll ?? 15) * 1000,
    });
    const out = flags.json ? process.stderr : process.stdout;
    let next = await watch.next();
    while (!next.done) {
      out.write(`${renderWatchEvent(next.value)}\n`);
      next = await watch.next();
    }
    const final = next.value;
    const status = await jobStatus(context, jobName);
    out.write(
      `${jobName} ended: ${final.TrainingJobStatus}${final.FailureReason ? ` (${final.FailureReason})` : ''}\n`,
    );
    out.write(
      `  results: ${status.checkpointsUri} (${status.checkpoints.count} checkpoints${status.checkpoints.final ? ', final present' : ''})\n`,
    );
    if (status.problem) out.write(`  WARNING: ${status.problem}\n`);
    if (flags.json)
      process.stdout.write(
        `${JSON.stringify({ ok: final.TrainingJobStatus === 'Completed' && !status.problem, jobName, status: final.TrainingJobStatus, problem: status.problem ?? null, checkpointsUri: status.checkpointsUri }, null, 2)}\n`,
      );
    return final.TrainingJobStatus === 'Completed' && !status.problem ? 0 : 1;
  } finally {
    context.close();
  }
}
