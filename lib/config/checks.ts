import * as path from 'node:path';
import type { Problem } from '../errors';
import {
  hasKey,
  isMap,
  EVAL_CONFIG_KEYS,
  MIXED,
  MIXED_MODES,
  TITAN_DEGREES,
  TITAN_DEGREES_CITE,
  valueAtDotted,
  type TrainerProfile,
  type TrainerSelection,
  type YamlMap as Yaml,
} from '../trainers';
import type { EvalConfig } from './eval-schema';
import type { TrainingConfig } from './training-schema';
import { loaderUses } from './loader-uses';
import { findLikelyTypos, findTyposAgainst } from './typos';
import type { KeyPath, YamlFile } from './yaml-file';
import { didYouMean } from './zod-problems';
import { formatTrainerFloat, isPyyamlFloatTrap } from './yaml-write';

/** Numbers the trainer's YAML reader (PyYAML, YAML 1.1) would read as strings. */
export function checkPyyamlFloats(file: YamlFile): Problem[] {
  return file
    .scalarsWhere(isPyyamlFloatTrap)
    .map(({ path, source }) =>
      file.problem(
        path,
        `${source} is a number here, but the trainer's YAML reader (PyYAML, YAML 1.1) reads it as the string "${source}"`,
        `Write ${formatTrainerFloat(Number(source))} (a "." before the exponent and a signed exponent).`,
      ),
    );
}

/**
 * Checks across keys that a schema cannot express. Each error guards against an incident of BRIEF §1 or
 * a certain failure of the trainer (a key it reads without a default); warnings are shown in the plan
 * and do not stop a submit. Rules with an id can be acknowledged by the config
 * (`launcher.acknowledge: [id]`): the error then becomes a warning that names it.
 */
export interface CheckResult {
  readonly errors: Problem[];
  readonly warnings: Problem[];
}

/** The incident rules a config may knowingly break. */
export const RULE_IDS = {
  baseChatTemplate: 'base-chat-template',
  samplingSeed: 'sampling-seed',
  gsm8kStop: 'gsm8k-stop',
  noCheckpoints: 'no-checkpoints',
} as const;
export type RuleId = (typeof RULE_IDS)[keyof typeof RULE_IDS];

/** What each rule a config can acknowledge guards against (`rlvr lint --rules`). */
export const RULE_DOCS: Readonly<Record<RuleId, string>> = {
  'base-chat-template':
    "a Base model with the chat template (skip_chat_template false, by the trainer's own default): it never learned the template",
  'sampling-seed': 'rollouts sampled with a fixed seed: every completion of a prompt comes out the same',
  'gsm8k-stop': "GSM8K prompts without the prompt format's next-question marker in sampling.stop",
  'no-checkpoints':
    'a trainer or config that saves no checkpoint: the job would end "Completed" with none in S3',
};

export interface TrainingCheckOptions {
  readonly selection: TrainerSelection;
  /** Every profile in play: a key any of them reads is never called a typo. */
  readonly profiles: readonly TrainerProfile[];
  /** Likely typos are errors instead of warnings. */
  readonly strict?: boolean;
}

/** GPUs each role takes: titan = product of its degrees; vLLM = tensor × pipeline × data parallel. */
export function roleGpuNeeds(config: TrainingConfig): { role: string; gpus: number | undefined }[] {
  return config.roles.map((role) => {
    if (role.kind === 'vllm') {
      const c = role.config;
      return {
        role: role.name,
        gpus: (c.tensor_parallel_size ?? 1) * (c.pipeline_parallel_size ?? 1) * (c.data_parallel_size ?? 1),
      };
    }
    const p = (role.config?.parallelism ?? {}) as Record<string, number | undefined>;
    let gpus: number | undefined = 1;
    for (const names of Object.values(TITAN_DEGREES)) {
      const d = names.map((n) => p[n]).find((v) => v !== undefined) ?? 1;
      gpus = d === -1 || gpus === undefined ? undefined : gpus * d;
    }
    return { role: role.name, gpus };
  });
}

const toPath = (dotted: string): KeyPath => dotted.split('.');

export function checkTrainingConfig(
  config: TrainingConfig,
  file: YamlFile,
  options: TrainingCheckOptions,
): CheckResult {
  const { profile } = options.selection;
  const errors: Problem[] = [...checkPyyamlFloats(file)];
  const warnings: Problem[] = [];
  const acknowledged = new Set(config.launcher?.acknowledge ?? []);
  const trainerName = path.basename(profile.script);
  /** An incident rule: an error unless the config acknowledges it. */
  const incident = (id: RuleId, problem: Problem) => {
    if (acknowledged.has(id))
      warnings.push({ ...problem, message: `${problem.message} (acknowledged: ${id})` });
    else
      errors.push({
        ...problem,
        hint: `${problem.hint ?? ''}${problem.hint ? ' ' : ''}If this is deliberate, add "${id}" to launcher.acknowledge.`,
      });
  };
  const raw = config as unknown as Yaml;

  // The launcher's own section: acknowledgements name real rules.
  const ids: string[] = Object.values(RULE_IDS);
  (config.launcher?.acknowledge ?? []).forEach((id, i) => {
    if (!ids.includes(id)) {
      const guess = didYouMean(id, ids);
      errors.push(
        file.problem(
          ['launcher', 'acknowledge', i],
          `no rule named "${id}"${guess ? ` — did you mean "${guess}"?` : ''}`,
          `Rules that can be acknowledged: ${ids.join(', ')}.`,
        ),
      );
    }
  });

  // Likely typos of known keys: the trainer would silently not read them.
  (options.strict ? errors : warnings).push(...findLikelyTypos(config, file, options.profiles));

  // What the trainer reads without a default: missing means it fails after start-up, GPUs billed.
  for (const section of profile.requiredSections) {
    if (!hasKey(raw, section)) {
      errors.push(
        file.problem(
          [],
          `${trainerName} needs a "${section}" section`,
          `Add ${section}: … (the trainer reads it at start-up), or pick another trainer with launcher.trainer.`,
        ),
      );
    }
  }
  const missingBefore = errors.length;
  for (const [key, where] of Object.entries(profile.requiredKeys)) {
    const parent = key.split('.').slice(0, -1).join('.');
    if (parent && !hasKey(raw, parent)) continue; // the missing section is reported above
    if (!hasKey(raw, key)) {
      const siblings = parent ? valueAtDotted(raw, parent) : raw;
      const leaf = key.split('.').pop()!;
      const typo = isMap(siblings) ? didYouMean(leaf, Object.keys(siblings)) : undefined;
      errors.push(
        file.problem(
          typo ? [...toPath(parent), typo] : toPath(parent),
          `${trainerName} reads ${key} without a default (${where}), and it is missing${typo ? ` — is "${typo}" a misspelling of it?` : ''}`,
          typo ? `Rename "${typo}" to "${leaf}".` : `Add ${key}.`,
          { key: Boolean(typo) },
        ),
      );
    }
  }

  if (errors.length > missingBefore && profile.missingKeysHint) {
    const last = errors[errors.length - 1];
    errors[errors.length - 1] = { ...last, hint: `${last.hint ?? ''} ${profile.missingKeysHint}`.trim() };
  }

  // Roles: names unique; the trainer looks up its roles by name.
  const seen = new Map<string, number>();
  config.roles.forEach((role, i) => {
    if (seen.has(role.name)) {
      errors.push(
        file.problem(
          ['roles', i, 'name'],
          `role name "${role.name}" is used twice (also roles[${seen.get(role.name)}])`,
        ),
      );
    }
    seen.set(role.name, i);
  });
  const missingRoles = profile.requiredRoles.filter((r) => !seen.has(r));
  if (missingRoles.length > 0) {
    errors.push(
      file.problem(
        ['roles'],
        `${trainerName} looks up the role${missingRoles.length > 1 ? 's' : ''} ${missingRoles.map((r) => `"${r}"`).join(', ')}, which the config does not have`,
        `Add ${missingRoles.map((r) => `{name: ${r}, kind: ${r === 'trainer' ? 'titan' : 'vllm'}, config: …}`).join(', ')}.`,
      ),
    );
  }
  const trainerIndex = config.roles.findIndex((r) => r.name === 'trainer');
  if (trainerIndex >= 0 && config.roles[trainerIndex].kind !== 'titan') {
    errors.push(file.problem(['roles', trainerIndex, 'kind'], 'the trainer role must be of kind "titan"'));
  }
  config.roles.forEach((role, i) => {
    if (role.kind !== 'titan') return;
    if (role.config?.optimizer?.lr === 0 && role.config.trainable !== false) {
      warnings.push(
        file.problem(['roles', i, 'config', 'optimizer', 'lr'], 'is 0: the weights never change'),
      );
    }
    const p = role.config?.parallelism ?? {};
    const old = Object.values(TITAN_DEGREES)
      .map(([current, older]) => ({ current, older }))
      .filter(({ older, current }) => older in p && !(current in p));
    for (const { older, current } of old) {
      warnings.push(
        file.problem(
          ['roles', i, 'config', 'parallelism', older],
          `"${older}" is the older name: their config parser multiplies ${current} (${TITAN_DEGREES_CITE}) and would count 1 here`,
          `Write ${current}.`,
          { key: true },
        ),
      );
    }
  });

  // Loss: the names this trainer implements.
  if (profile.losses && config.loss?.name !== undefined && !profile.losses.includes(config.loss.name)) {
    errors.push(
      file.problem(
        ['loss', 'name'],
        `${trainerName} has no loss "${config.loss.name}"`,
        `Use one of ${profile.losses.join(', ')}.`,
      ),
    );
  }

  // Data: loader names the trainer knows (when its profile knows them), mixed lists well formed.
  const loaderNames = profile.loaders ? Object.keys(profile.loaders) : undefined;
  const unknownLoader = (name: string, at: KeyPath, accepted: readonly string[], where: string) => {
    const guess = didYouMean(name, accepted);
    errors.push(
      file.problem(
        at,
        `${trainerName} has no dataset "${name}" ${where}${guess ? ` — did you mean "${guess}"?` : ''}`,
        `Use one of ${accepted.join(', ')}.`,
      ),
    );
  };
  for (const ds of profile.dataSections) {
    const section = config[ds.section as 'data' | 'sft_data'];
    if (!section) continue;
    const accepted = ds.datasets ?? (loaderNames && [...loaderNames, MIXED]);
    if (accepted && !accepted.includes(section.dataset)) {
      unknownLoader(section.dataset, [ds.section, 'dataset'], accepted, `in ${ds.section}`);
    }
    if (section.dataset !== MIXED) continue;
    if (!section.datasets) {
      errors.push(
        file.problem(
          [ds.section],
          'dataset "mixed" needs a datasets list',
          `Add ${ds.section}.datasets: [{name, split, weight}].`,
        ),
      );
    }
    if (section.mode !== undefined && !MIXED_MODES.includes(section.mode)) {
      errors.push(
        file.problem(
          [ds.section, 'mode'],
          `"${section.mode}" is not a mixing mode`,
          `Use ${MIXED_MODES.join(' or ')}.`,
        ),
      );
    }
    for (const use of loaderUses(config, [ds.section as 'data' | 'sft_data'])) {
      if (loaderNames && !loaderNames.includes(use.name))
        unknownLoader(use.name, use.nameAt, loaderNames, 'to mix');
    }
  }

  // The end of training: a job that never ends runs until max_runtime, paid.
  const maxSteps = config.training.max_steps;
  const epochs = config.training.num_epochs;
  const ends = profile.ends;
  if (ends && !maxSteps && !(ends.numEpochs && epochs) && !ends.maxStepsDefault) {
    errors.push(
      file.problem(
        hasKey(raw, 'training.max_steps')
          ? ['training', 'max_steps']
          : hasKey(raw, 'training.num_epochs')
            ? ['training', 'num_epochs']
            : ['training'],
        `nothing ends training: ${trainerName} stops at training.max_steps${ends.numEpochs ? ' or training.num_epochs' : ''}, and ${ends.numEpochs ? 'neither is set' : 'it is not set'}`,
        'Set training.max_steps (the job would otherwise run, paid, until max_runtime).',
      ),
    );
  }
  if (ends && epochs && !ends.numEpochs) {
    warnings.push(
      file.problem(
        ['training', 'num_epochs'],
        `${trainerName} does not read num_epochs: training ends at max_steps${maxSteps ? ` (${maxSteps})` : ''}`,
      ),
    );
  }

  // Checkpoints: "Completed" jobs that saved none are the first incident.
  if (!profile.checkpoints.writes) {
    incident(
      RULE_IDS.noCheckpoints,
      file.problem(
        config.launcher?.trainer
          ? ['launcher', 'trainer']
          : config.launcher?.trainer_command
            ? ['launcher', 'trainer_command']
            : [],
        `${trainerName} saves no checkpoints: the job would finish "Completed" with none in S3`,
        'Use a trainer that exports checkpoints (e.g. launcher.trainer: grpo-sft).',
      ),
    );
  }
  const trainer = trainerIndex >= 0 ? config.roles[trainerIndex] : undefined;
  if (trainer?.kind === 'titan' && trainer.config?.checkpoint?.enable === false) {
    const at: KeyPath = ['roles', trainerIndex, 'config', 'checkpoint', 'enable'];
    if (profile.checkpoints.titanEnableForced) {
      warnings.push(
        file.problem(
          at,
          `is false, but ${trainerName} forces it on (${profile.checkpoints.titanEnableForced})`,
        ),
      );
    } else {
      incident(
        RULE_IDS.noCheckpoints,
        file.problem(
          at,
          'checkpointing is disabled: the job would finish "Completed" with no checkpoint in S3',
          'Set enable: true (checkpoints stream to S3 as they are written).',
        ),
      );
    }
  }
  const intervalKey = profile.checkpoints.intervalKey;
  if (profile.checkpoints.writes && intervalKey) {
    const interval = valueAtDotted(raw, intervalKey) ?? profile.checkpoints.intervalDefault;
    if (hasKey(raw, intervalKey) && !interval) {
      warnings.push(
        file.problem(
          toPath(intervalKey),
          `is ${String(valueAtDotted(raw, intervalKey))}: ${trainerName} saves only the final checkpoint`,
        ),
      );
    } else if (
      typeof interval === 'number' &&
      typeof maxSteps === 'number' &&
      maxSteps > 0 &&
      interval > maxSteps
    ) {
      warnings.push(
        file.problem(
          toPath(intervalKey),
          `is larger than max_steps (${maxSteps}): only the final checkpoint will be saved`,
        ),
      );
    }
  }

  // Base models must not get a chat template (they produce garbage).
  const policyModels = [
    config.model.path,
    ...(trainer?.kind === 'titan' && trainer.config?.model?.hf_assets_path
      ? [trainer.config.model.hf_assets_path]
      : []),
  ];
  const baseModel = policyModels.find((m) => /-base$/i.test(m.replace(/\/+$/, '')));
  if (baseModel) {
    for (const ds of profile.dataSections) {
      if (!config[ds.section as 'data' | 'sft_data']) continue;
      const iterator = config[ds.iterator as 'data_iter' | 'sft_data_iter'];
      const skip = iterator?.skip_chat_template ?? ds.skipChatTemplateDefault;
      if (skip !== true) {
        incident(
          RULE_IDS.baseChatTemplate,
          file.problem(
            iterator && 'skip_chat_template' in iterator
              ? [ds.iterator, 'skip_chat_template']
              : iterator
                ? [ds.iterator]
                : ['model', 'path'],
            `"${baseModel}" is a Base model but ${ds.iterator}.skip_chat_template is not true${iterator?.skip_chat_template === undefined ? ` (${trainerName} defaults it to false)` : ''}`,
            `Base models must not be fed a chat template: set ${ds.iterator}.skip_chat_template: true.`,
          ),
        );
      }
    }
  }

  // Rollout rules, for trainers that sample completions.
  if (profile.samples && config.sampling) {
    const sampling = config.sampling as Yaml & NonNullable<TrainingConfig['sampling']>;
    if (sampling.seed !== undefined) {
      incident(
        RULE_IDS.samplingSeed,
        file.problem(
          ['sampling', 'seed'],
          'a fixed sampling seed makes all n rollouts of a prompt identical (zero GRPO advantage)',
          'Remove sampling.seed; use run.seed or data.seed for a reproducible data order.',
          { key: true },
        ),
      );
    }
    if (sampling.temperature === 0 && (sampling.n ?? 1) > 1) {
      warnings.push(
        file.problem(
          ['sampling', 'temperature'],
          `0 with n=${sampling.n}: all rollouts of a prompt are identical`,
        ),
      );
    }
    // The next question's marker must stop a completion, or it runs on and corrupts answer extraction.
    const stops = sampling.stop ?? [];
    const markers = new Set<string>();
    for (const ref of loaderUses(config, ['data'])) {
      const loader = profile.loaders?.[ref.name];
      if (loader?.nextQuestionStop) markers.add(loader.nextQuestionStop);
      // A loader the profile does not describe: lm_eval's GSM8K format, "Question: … Answer:".
      else if (!loader && /gsm8k/i.test(ref.name)) markers.add('Question:');
    }
    const missing = [...markers].filter((m) => !stops.includes(m));
    if (missing.length > 0) {
      incident(
        RULE_IDS.gsm8kStop,
        file.problem(
          sampling.stop ? ['sampling', 'stop'] : ['sampling'],
          `GSM8K data but sampling.stop lacks ${missing.map((s) => JSON.stringify(s)).join(', ')}: completions run on into the next question`,
          'Use stop: ["[Question]", "Question:", "Q:", "\\n\\n\\n", "\\n\\n"] (their GSM8K loader prompts "Q: … A:"; lm_eval\'s format is "Question: … Answer:").',
        ),
      );
    }
  }

  return { errors, warnings };
}

/** Eval settings of BRIEF §6. Tensor parallelism > 1 gave wildly wrong scores: refused. */
export const EVAL_STANDARDS = {
  tensorParallelSize: 1,
  seed: 42,
  temperature: 0,
  maxModelLen: 4096,
  gpuMemoryUtilization: 0.8,
};

/** Every task an eval config names (top-level, task groups, OLMES). */
export function evalTasks(config: EvalConfig): string[] {
  const groups = (config.watch?.task_groups ?? []).flatMap((g) => g.benchmarks.map((b) => b.task));
  return [...(config.benchmarks ?? []).map((b) => b.task), ...groups, ...(config.olmes?.tasks ?? [])];
}

export function checkEvalConfig(config: EvalConfig, file: YamlFile): CheckResult {
  const errors: Problem[] = [...checkPyyamlFloats(file)];
  const warnings: Problem[] = [...findTyposAgainst(config, EVAL_CONFIG_KEYS, file)];
  const tp = config.vllm?.tensor_parallel_size;
  if (tp !== undefined && tp !== EVAL_STANDARDS.tensorParallelSize) {
    errors.push(
      file.problem(
        ['vllm', 'tensor_parallel_size'],
        `is ${tp}: evaluation with tensor parallelism > 1 gives wrong scores`,
        'Set tensor_parallel_size: 1 (give the watcher more GPUs through watch.task_groups instead).',
      ),
    );
  }
  const olmesTp = config.olmes?.model_args?.tensor_parallel_size;
  if (olmesTp !== undefined && olmesTp !== 1) {
    errors.push(
      file.problem(
        ['olmes', 'model_args', 'tensor_parallel_size'],
        `is ${String(olmesTp)}: evaluation with tensor parallelism > 1 gives wrong scores`,
        'Set it to 1.',
      ),
    );
  }
  if (config.harness === 'olmes' && !config.olmes) {
    errors.push(
      file.problem(['harness'], 'harness is olmes but there is no olmes section', 'Add olmes: {tasks: […]}.'),
    );
  }
  if (config.watch?.local_dir && config.watch.s3_prefix) {
    errors.push(
      file.problem(['watch', 's3_prefix'], 'set either watch.local_dir or watch.s3_prefix, not both'),
    );
  }
  if (config.seed !== undefined && config.seed !== EVAL_STANDARDS.seed) {
    warnings.push(file.problem(['seed'], `is ${config.seed}; the team's standard is ${EVAL_STANDARDS.seed}`));
  }
  if (config.temperature !== undefined && config.temperature !== EVAL_STANDARDS.temperature) {
    warnings.push(
      file.problem(['temperature'], `is ${config.temperature}; evaluation is greedy (0) by standard`),
    );
  }
  if (config.vllm?.max_model_len !== undefined && config.vllm.max_model_len !== EVAL_STANDARDS.maxModelLen) {
    warnings.push(
      file.problem(
        ['vllm', 'max_model_len'],
        `is ${config.vllm.max_model_len}; standard is ${EVAL_STANDARDS.maxModelLen}`,
      ),
    );
  }
  return { errors, warnings };
}
