import type { Command } from 'commander';
import { SWEEP_MAX_JOBS } from '../../lib/training';
import { collect, type SettingsFlagValues } from './common';
import type { ImageFlagValues } from './image-flags';

/** The flags the CLI reads itself; the job options' flags are read by name (OPTION_FLAGS). */
export interface SubmitFlags extends SettingsFlagValues, ImageFlagValues {
  build?: boolean;
  push?: boolean;
  local?: boolean;
  gpus?: string;
  instances?: string;
  restart?: string;
  dryRun?: boolean;
  json?: boolean;
  description?: string;
  template?: string;
  evalConfig?: string;
  trainerSrc?: string;
  image?: string;
  jobLog?: string;
  resultsDir?: string;
  tag?: string[];
  sweep?: string[];
  maxJobs?: string;
  wait?: boolean;
  poll?: string;
  strict?: boolean;
  allowMissingOrderIds?: boolean;
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
    .option(
      '--instances <n>',
      "with --local: run the job as n containers, one per host (1–8; default: the job's instance count)",
    )
    .option(
      '--restart <run-folder>',
      'with --local: run the job again in an earlier local run folder, as SageMaker restarts an interrupted job',
    )
    .option('--job-log <file>', 'job log to append to (default: docs/job_log.md of the config repository)')
    .option(
      '--results-dir <dir>',
      'where the forecast finds past runs (rlvr download, submit --local)',
      'results',
    )
    .option('--instance-type <type>', 'e.g. ml.p4de.24xlarge')
    .option('--instance-count <n>', 'instances')
    .option('--volume-gb <n>', 'EBS volume per instance, GB')
    .option('--train-gpus <list>', 'GPUs for training, e.g. 0,1,2,3,4,5 or 0-5')
    .option('--eval-gpus <list>', 'GPUs for the eval watcher, e.g. 6,7')
    .option('--max-runtime <duration>', 'e.g. 24h, 90m, 86400')
    .option('--spot', 'managed spot training (resumes from checkpoints)')
    .option('--no-spot', 'on-demand training')
    .option('--max-wait <duration>', 'spot: longest wait plus runtime (≥ max runtime)')
    .option(
      '--max-retries <n>',
      "SageMaker's retries of a job failed by an internal error (1–30; RetryStrategy.MaximumRetryAttempts)",
    )
    .option('--keep-alive <duration>', 'warm pool keep-alive (≤ 1h)')
    .option(
      '--eval-wait <duration>',
      'once training ends, how long the eval watcher may finish (default 30m)',
    )
    .option(
      '--cluster-join-timeout <duration>',
      'multi-node: how long every host has to join the Ray cluster (default 10m)',
    )
    .option(
      '--trainer-command <cmd>',
      "trainer command; {config} is the config path (default: the trainer profile's)",
    )
    .option('--strict', "likely typos of the trainer's keys are errors, not warnings")
    .option(
      '--allow-missing-order-ids',
      'order-file ids missing from their dataset are a warning, recorded in the job log and run.json',
    )
    .option('--model-input-mode <mode>', 'FastFile or File')
    .option('--network-isolation', 'run with network isolation (default)')
    .option('--no-network-isolation', 'allow the container network access')
    .option(
      '--shared-fs-network-isolation',
      'a job mounting the shared file system runs with network isolation (default)',
    )
    .option(
      '--no-shared-fs-network-isolation',
      'a job mounting the shared file system runs without network isolation (others keep theirs)',
    )
    .option('--ray', 'start a Ray head on the train GPUs before the trainer (default)')
    .option('--no-ray', 'do not start Ray')
    .option(
      '--hold-platform-env',
      "keep the platform's NCCL/Gloo interface (and EFA transport) in every Python process against the trainer's own assignments",
    )
    .option('--no-hold-platform-env', "let the trainer's modules set those variables (default)")
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
