import * as path from 'node:path';
import {
  roleGpuNeeds,
  type EvalConfig,
  type LoadedConfig,
  type TrainingConfig,
  type YamlFile,
} from '../config';
import type { Problem } from '../errors';
import type { StagedSource } from '../source';
import {
  buildJobContract,
  commandScript,
  valueAtDotted,
  WEIGHTS_ONLY_RESUME_NOTE,
  type JobContract,
  type TrainerProfile,
  type YamlMap,
} from '../trainers';
import type { InputPlan } from './inputs';
import { SHARED_FILE_SYSTEM_HOW } from './shared-file-system';

/** launcher-schema's `instance_count` maximum. */
const INSTANCE_COUNT_MAX = 64;
import { RUNTIME_ENV } from '../layout';
import { describeSource, problemAt, type ResolvedJobOptions, type Sourced } from '../job-options';

/*
 * Checks that need both the trainer's config and how the job runs (its GPUs, its shipped source).
 */

/**
 * The roles' GPUs against the GPUs the job trains on: more than there are and the trainer waits
 * forever for Ray resources, paid; fewer and GPUs sit idle, paid.
 */
export function checkRoleGpus(
  config: LoadedConfig<TrainingConfig>,
  options: ResolvedJobOptions,
  /**
   * What the same submit would refuse on `hosts` instances (a trainer whose hosts share a folder needs
   * the shared file system): the hint suggests more instances only when they would be accepted.
   */
  refusedOnHosts: (hosts: number) => readonly Problem[] = () => [],
): { problems: Problem[]; warnings: Problem[] } {
  const needs = roleGpuNeeds(config.value);
  if (needs.some((n) => n.gpus === undefined)) return { problems: [], warnings: [] };
  const total = needs.reduce((sum, n) => sum + n.gpus!, 0);
  const perHost = options.trainGpus.value.length;
  const hosts = options.instanceCount.value;
  const available = perHost * hosts;
  const detail = needs.map((n) => `${n.role} ${n.gpus}`).join(', ');
  const split = `train_gpus ${options.trainGpus.value.join(',') || 'none'} (${describeSource(options.trainGpus.source)}) × ${hosts} instance${hosts > 1 ? 's' : ''}`;
  if (perHost > 0 && total > available) {
    const hostsNeeded = Math.ceil(total / perHost);
    return {
      problems: [
        config.file.problem(
          ['roles'],
          `the roles need ${total} GPUs (${detail}) but the job trains on ${available}: ${split}`,
          moreGpusHint(total, hostsNeeded, refusedOnHosts),
        ),
      ],
      warnings: [],
    };
  }
  if (total < available) {
    return {
      problems: [],
      warnings: [
        config.file.problem(
          ['roles'],
          `the roles use ${total} of the ${available} training GPUs (${detail}); ${available - total} would sit idle, paid`,
          'Give the spare GPUs to a role (e.g. rollout data_parallel_size), to evaluation (--eval-gpus), or use a smaller instance.',
        ),
      ],
    };
  }
  return { problems: [], warnings: [] };
}

/** What a multi-host refusal asks for, without its other way out (fewer instances: the GPUs are short). */
function hostsHint(problem: Problem): string {
  const hint = problem.hint?.replace(/^Run on one instance \(instance_count: 1\), or /, '');
  if (!hint) return `give the job a shared file system: ${SHARED_FILE_SYSTEM_HOW}.`;
  return hint.charAt(0).toLowerCase() + hint.slice(1);
}

/** How to give the roles `total` GPUs: more instances only if the submit would accept that many. */
function moreGpusHint(
  total: number,
  hostsNeeded: number,
  refusedOnHosts: (hosts: number) => readonly Problem[],
): string {
  const bigger = `an instance type with at least ${total} GPUs for training (launcher.instance_type or --instance-type, with train_gpus to match)`;
  const refused = hostsNeeded > INSTANCE_COUNT_MAX ? [] : refusedOnHosts(hostsNeeded);
  if (hostsNeeded <= INSTANCE_COUNT_MAX && refused.length === 0)
    return `Run on ${hostsNeeded} instances (launcher.instance_count: ${hostsNeeded} or --instance-count ${hostsNeeded}), use ${bigger}, or lower the roles' parallel sizes.`;
  const lower = `Use ${bigger}, or lower the roles' parallel sizes.`;
  if (hostsNeeded > INSTANCE_COUNT_MAX)
    return `${lower} More instances are not an option: ${hostsNeeded} would be needed, and a job runs on at most ${INSTANCE_COUNT_MAX}.`;
  return `${lower} More instances are not an option as the job is set: on ${hostsNeeded} this submit would be refused (${refused.map((p) => p.message).join('; ')}). To run on ${hostsNeeded} instances, ${refused.map(hostsHint).join(' ')}`;
}

/** The trainer command's script must be in the source the job ships. */
export function checkTrainerScript(
  command: Sourced<string>,
  staged: StagedSource,
  file: YamlFile,
): Problem | undefined {
  const script = commandScript(command.value);
  if (!script || script.startsWith('/') || staged.files.some((f) => f.path === script)) return undefined;
  const message = `the trainer command "${command.value}" runs ${script}, which is not in the shipped source (${staged.root})`;
  const hint =
    'Name a trainer the repository has: launcher.trainer (docs/submitting.md lists the profiles) or launcher.trainer_command.';
  if (command.source.kind === 'config') return file.problem(['launcher', 'trainer_command'], message, hint);
  return {
    where:
      command.source.kind === 'flag'
        ? command.source.flag
        : `trainer_command (${describeSource(command.source)})`,
    message,
    hint,
  };
}

/** What the plan says about the trainer at run time, and what it ships to the entrypoint. */
export interface TrainerRuntimePlan {
  readonly contract: JobContract;
  /** Plan lines: run folder, restart behaviour, the eval watcher's rewrites. */
  readonly notes: readonly string[];
  readonly problems: Problem[];
  readonly warnings: Problem[];
}

/**
 * The trainer's run-time contract for this job: where its run folder lands, how a restart
 * continues, where its loaders find their datasets, and what the eval watcher is told.
 */
export function planTrainerRuntime(input: {
  readonly config: LoadedConfig<TrainingConfig>;
  readonly evalConfig?: LoadedConfig<EvalConfig>;
  readonly profile: TrainerProfile;
  readonly options: ResolvedJobOptions;
  readonly inputs: InputPlan;
  readonly expectCheckpoints: boolean;
}): TrainerRuntimePlan {
  const { config, evalConfig, profile, options, inputs } = input;
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  const notes: string[] = [];
  const runtime = profile.runtime;
  const cachedDatasets = inputs.datasets
    .filter((d) => d.kind === 'folder' && d.loader && profile.loaders?.[d.loader]?.source === 's3-cache')
    .map((d) => ({ channel: d.channel, folder: d.folder }));
  const contract = buildJobContract({
    profile,
    config: config.value as unknown as YamlMap,
    configName: path.basename(config.path),
    expectCheckpoints: input.expectCheckpoints,
    cachedDatasets,
    evalConfig: evalConfig?.value as unknown as YamlMap | undefined,
  });

  const rf = runtime.runFolder;
  notes.push(
    rf.kind === 'own'
      ? `${profile.id} makes its own run folder ${contract.configName.replace(/\.ya?ml$/i, '')}_<timestamp>/ under $${rf.rootEnv}, which the job points into the streamed folder (${rf.cite})`
      : `the trainer writes into $${RUNTIME_ENV.runDir} (checkpoints in $${RUNTIME_ENV.checkpointDir}), streamed to S3`,
  );
  for (const d of contract.datasetCaches)
    notes.push(`dataset channel ${d.channel} → ${d.path} (where its loader looks)`);
  const uses = runtime.networkUses ?? [];
  if (uses.length) {
    const by = new Map<string, number>();
    for (const u of uses) by.set(u.handled, (by.get(u.handled) ?? 0) + 1);
    notes.push(
      `network at start: ${uses.length} places in its code reach for it, each handled (${[...by].map(([h, n]) => `${n} ${h}`).join(', ')}); rlvr doctor --trainer-src lists them`,
    );
  }

  const spot = options.spot;
  const retries = options.maxRetries;
  if (contract.resume.kind === 'none' && retries.value !== undefined) {
    warnings.push(
      problemAt(
        retries.source,
        'max_retries',
        `${profile.id} cannot resume: a retry restarts the job, and the restart fails rather than train again from the base model`,
        'Leave out max_retries, or use a trainer that resumes.',
      ),
    );
  }
  if (spot.value) {
    if (contract.resume.kind === 'none') {
      warnings.push(
        problemAt(
          spot.source,
          'spot',
          `${profile.id} cannot resume: after a spot interruption the restarted job fails rather than train again from the base model (its earlier checkpoints are kept)`,
          'Run on demand, or use a trainer that resumes.',
        ),
      );
    } else if (contract.resume.kind === 'weights') {
      notes.push(
        `spot restart: ${WEIGHTS_ONLY_RESUME_NOTE} (the newest complete checkpoint is loaded by ${(contract.resume.loadPaths ?? []).map((p) => p.join('.')).join(', ')}; ${contract.resume.stepKey?.join('.')} set to its step; the reference is not touched)`,
      );
    }
  }

  if (evalConfig && !contract.eval) {
    problems.push(
      evalConfig.file.problem(
        [],
        `${profile.id} states no eval script, so nothing would read this eval config (its GPUs would sit idle)`,
        'Add runtime.eval_script to its profile in rlvr-trainers.yaml, or submit without an eval config.',
      ),
    );
  }
  if (evalConfig && contract.eval) {
    const watch = (evalConfig.value as unknown as YamlMap).watch;
    if (watch && typeof watch === 'object') {
      for (const key of ['local_dir', 'pattern', 's3_prefix']) {
        const v = (watch as YamlMap)[key];
        if (v !== undefined)
          warnings.push(
            evalConfig.file.problem(
              ['watch', key],
              `${String(v)} is replaced: the job's eval watcher evaluates this job's complete checkpoints`,
              'Leave it out of configs meant for rlvr submit, or evaluate another run with a batch eval.',
            ),
          );
      }
    }
    notes.push(
      `eval watcher: ${contract.eval.command.replace('{python} ', '')} with output_dir = the run folder's evals/; once training ends it waits for results of every checkpoint (${contract.eval.resultKeys.join(', ') || 'its tasks'}), then is stopped`,
    );
  }
  return { contract, notes, problems, warnings };
}

/** Whether the job must end with a checkpoint: the trainer writes one at the end, or at an interval set > 0. */
export function expectsCheckpoints(profile: TrainerProfile, config: TrainingConfig): boolean {
  const ck = profile.checkpoints;
  if (!ck.writes) return false;
  if (ck.final) return true;
  const interval = ck.intervalKey
    ? (valueAtDotted(config as unknown as YamlMap, ck.intervalKey) ?? ck.intervalDefault)
    : undefined;
  return Number(interval ?? 0) > 0;
}
