import type { Command } from 'commander';
import { parseGpuList } from '../../lib/config';
import { UserError } from '../../lib/errors';
import { createImagePipeline, type ImagePipeline } from '../../lib/image';
import { OPTION_FLAGS, type JobOptionFlags, type SubmitInput } from '../../lib/jobs';
import { SWEEP_MAX_JOBS } from '../../lib/jobs/sweep';
import type { ProgressListener } from '../../lib/progress';
import { settingsOf, type SettingsFlagValues } from './common';
import { parseBuildArgs, type ImageFlagValues } from './image';

/** The flags the CLI reads itself; the job options' flags are read by name (OPTION_FLAGS). */
export interface SubmitFlags extends SettingsFlagValues, ImageFlagValues {
  build?: boolean;
  push?: boolean;
  local?: boolean;
  gpus?: string;
  dryRun?: boolean;
  json?: boolean;
  description?: string;
  template?: string;
  evalConfig?: string;
  trainerSrc?: string;
  image?: string;
  jobLog?: string;
  tag?: string[];
  sweep?: string[];
  maxJobs?: string;
  wait?: boolean;
  poll?: string;
  strict?: boolean;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The flags of `rlvr submit` (besides the settings and image flags it shares). */
export function addSubmitOptions(command: Command): Command {
  return command
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
      '--max-jobs <n>',
      `with --sweep: the most jobs it may create (default ${SWEEP_MAX_JOBS}); more is refused before any`,
    )
    .option(
      '--wait',
      'follow the job (status and logs) until it ends; exit 0 only if it Completed with checkpoints',
    )
    .option('--poll <seconds>', 'seconds between polls with --wait', '15');
}

/** commander's attribute for a flag: --no-ray → ray, --instance-type → instanceType. */
function attribute(flag: string): string {
  return flag.replace(/^--(no-)?/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The job options as flags give them: every flag OPTION_FLAGS names, read under its attribute. */
function optionFlags(flags: SubmitFlags): JobOptionFlags {
  const values = flags as unknown as Record<string, unknown>;
  const options: Record<string, unknown> = {};
  for (const [name, flag] of Object.entries(OPTION_FLAGS))
    if (flag.startsWith('--')) options[name] = values[attribute(flag)];
  options.tags = flags.tag?.length ? parseTags(flags.tag) : undefined;
  return options as JobOptionFlags;
}

/** `--tag key=value`, each with a key and an `=` (an explicitly empty value, `key=`, is one). */
export function parseTags(values: readonly string[]): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const t of values) {
    const i = t.indexOf('=');
    if (i <= 0 || t.slice(0, i).trim() === '')
      throw new UserError(
        `--tag ${t}: expected the form --tag key=value, e.g. --tag team=annotations`,
        'BadFlag',
      );
    tags[t.slice(0, i)] = t.slice(i + 1);
  }
  return tags;
}

/** `--max-jobs N`: how many jobs a sweep may create (undefined: the default). */
export function maxJobs(flags: SubmitFlags): number | undefined {
  if (flags.maxJobs === undefined) return undefined;
  const n = Number(flags.maxJobs);
  if (!Number.isInteger(n) || n < 1)
    throw new UserError(
      `--max-jobs ${flags.maxJobs}: a positive whole number, e.g. --max-jobs 100`,
      'BadFlag',
    );
  return n;
}

/** The image pipeline the submit is handed: build/push as the flags say. */
function imagePipeline(flags: SubmitFlags, onEvent: ProgressListener): ImagePipeline {
  const options = {
    build: Boolean(flags.build),
    push: Boolean(flags.push),
    dockerDir: flags.dockerDir,
    buildArgs: parseBuildArgs(flags.buildArg),
    dockerHost: flags.dockerHost,
    listener: onEvent,
  };
  return createImagePipeline(options);
}

export function submitInput(configPath: string, flags: SubmitFlags, onEvent: ProgressListener): SubmitInput {
  return {
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
    listener: onEvent,
    pipeline: imagePipeline(flags, onEvent),
  };
}

/** `--local` runs one job here: the flags that contradict that are bad input. */
export function localGpus(flags: SubmitFlags): number[] | undefined {
  const gpus = flags.gpus === undefined ? undefined : parseGpuList(flags.gpus);
  if (flags.gpus !== undefined && !gpus)
    throw new UserError(`--gpus ${flags.gpus}: expected GPU indices such as 0,1,2,3 or 0-3`, 'BadFlag');
  if (flags.sweep?.length) throw new UserError('--local runs one job: leave out --sweep', 'BadFlag');
  if (flags.dryRun) {
    throw new UserError('--local runs the job here; for its plan, use --dry-run without --local', 'BadFlag');
  }
  return gpus;
}
