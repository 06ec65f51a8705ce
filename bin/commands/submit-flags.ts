import { parseGpuList } from '../../lib/config';
import { UserError } from '../../lib/errors';
import { createImagePipeline, type ImagePipeline } from '../../lib/image';
import { type SubmitInput } from '../../lib/training';
import { OPTION_FLAGS, type JobOptionFlags } from '../../lib/job-options';
import type { ProgressListener } from '../../lib/progress';
import { settingsOf } from './common';
import { parseBuildArgs } from './image-flags';
import type { SubmitFlags } from './submit-options';

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
    allowMissingOrderIds: Boolean(flags.allowMissingOrderIds),
    template: flags.template,
    description: flags.description,
    trainerSrc: flags.trainerSrc,
    image: flags.image,
    jobLog: flags.jobLog,
    resultsDir: flags.resultsDir,
    settings: settingsOf(flags),
    dryRun: Boolean(flags.dryRun),
    listener: onEvent,
    pipeline: imagePipeline(flags, onEvent),
  };
}

/** The most containers `--local --instances` runs as one job's hosts. */
export const MAX_LOCAL_INSTANCES = 8;

/**
 * `--instances N` (with --local): how many containers run the job as its hosts; undefined when not
 * given (the job's instance count decides). Without --local it is a usage error.
 */
export function localInstances(flags: SubmitFlags): number | undefined {
  if (flags.instances === undefined) return undefined;
  if (!flags.local) {
    throw new UserError(
      `--instances runs a job as local containers, with --local; for SageMaker use --instance-count ${flags.instances}`,
      'BadFlag',
    );
  }
  const n = /^\d+$/.test(flags.instances) ? Number(flags.instances) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_LOCAL_INSTANCES) {
    throw new UserError(
      `--instances ${flags.instances}: a whole number from 1 to ${MAX_LOCAL_INSTANCES}, e.g. --instances 2`,
      'BadFlag',
    );
  }
  return n;
}

/** `--restart <run folder>` (with --local): rehearse a restart in an earlier local run's folder. */
export function localRestart(flags: SubmitFlags): string | undefined {
  if (flags.restart !== undefined && !flags.local) {
    throw new UserError(
      '--restart rehearses a restart of a local run, with --local; SageMaker restarts its jobs itself (--spot, --max-retries)',
      'BadFlag',
    );
  }
  return flags.restart;
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
