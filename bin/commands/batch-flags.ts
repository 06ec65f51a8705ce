/** The flags the batch kinds (`rlvr eval`, `rlvr passk`) share, and what the command makes of them. */
import type { Command } from 'commander';
import type { AwsClients } from '../../lib/aws';
import { CLI_ENV } from '../../lib/layout';
import { openSubmitSession, writableJobLogPath, type SubmitConnection } from '../../lib/submission';
import { createReporter } from '../reporter';
import { settingsOf, type SettingsFlagValues } from './common';

export interface BatchCommandFlags extends SettingsFlagValues {
  dryRun?: boolean;
  json?: boolean;
  jobLog?: string;
  dockerHost?: string;
}

/** What a kind says of its own instances, spot restarts, max runtime and image. */
export interface BatchJobTexts {
  instanceCount: string;
  spot: string;
  maxRuntime: string;
  image: string;
}

/** The job's instances, limits, image and log, then --dry-run and --json. */
export function addBatchJobOptions(command: Command, texts: BatchJobTexts): Command {
  return command
    .option('--instance-type <type>', 'SageMaker instance type (default ml.g6e.48xlarge, 8 GPUs)')
    .option('--instance-count <n>', texts.instanceCount)
    .option('--spot', texts.spot)
    .option('--max-runtime <duration>', texts.maxRuntime)
    .option('--max-retries <n>', 'SageMaker restarts after an internal error or spot loss')
    .option('--volume-gb <n>', 'volume per instance (default 200)')
    .option('--image <ref>', texts.image)
    .option('--description <text>', 'for the job log')
    .option('--job-log <file>', 'the job log (default docs/job_log.md in the repository)')
    .option('--dry-run', 'print the plan; create nothing')
    .option('--json', 'print JSON');
}

/** --local and what it takes; `gpusExample` shows --gpus, e.g. `0-7`. */
export function addLocalRunOptions(command: Command, gpusExample: string): Command {
  return command
    .option('--local', 'run the job in local Docker')
    .option('--gpus <list>', `with --local: the GPUs to use, e.g. ${gpusExample}`)
    .option('--docker-host <uri>', 'with --local: the Docker engine (else DOCKER_HOST)');
}

/** The session the plan and the submit share, closed whatever happens; a local run plans as a dry-run does. */
export async function withBatchSession<T>(
  flags: BatchCommandFlags & { readonly local?: boolean },
  run: (connection: SubmitConnection) => Promise<T>,
): Promise<T> {
  const session = openSubmitSession({
    settings: settingsOf(flags),
    dryRun: Boolean(flags.dryRun || flags.local),
  });
  try {
    return await run(await session.connect());
  } finally {
    session.close();
  }
}

/** The job log the submit appends to, checked writable before anything is created. */
export function batchJobLogPath(flags: BatchCommandFlags): Promise<string> {
  return writableJobLogPath({ explicit: flags.jobLog, env: process.env, cwd: process.cwd() });
}

/** A local run's options: with --json the job's own output goes to stderr, stdout keeps the JSON. */
export function localRunOptions(flags: BatchCommandFlags, aws: AwsClients | undefined, signal: AbortSignal) {
  return {
    gpuDevices: process.env[CLI_ENV.localGpuDevices] !== 'none',
    dockerHost: flags.dockerHost,
    aws,
    out: flags.json ? process.stderr : process.stdout,
    err: process.stderr,
    signal,
    listener: createReporter({ json: Boolean(flags.json) }),
  };
}
