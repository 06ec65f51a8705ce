import { roleGpuNeeds, type LoadedConfig, type TrainingConfig, type YamlFile } from '../config';
import type { Problem } from '../errors';
import type { StagedSource } from '../source';
import { commandScript } from '../trainers';
import { describeSource, type ResolvedJobOptions, type Sourced } from './options';

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
          `Run on ${hostsNeeded} instances (launcher.instance_count: ${hostsNeeded} or --instance-count ${hostsNeeded}), give training more GPUs, or lower the roles' parallel sizes.`,
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
    'Name a trainer the repository has: launcher.trainer (see the README for the profiles) or launcher.trainer_command.';
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
