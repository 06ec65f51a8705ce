import type { Problem } from '../errors';
import type { EvalConfig } from './eval-schema';
import type { TrainingConfig } from './training-schema';
import type { YamlFile } from './yaml-file';
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
 * Checks across keys that a schema cannot express. Each error guards against an incident of BRIEF §1;
 * warnings are shown in the plan and do not stop a submit.
 */
export interface CheckResult {
  readonly errors: Problem[];
  readonly warnings: Problem[];
}

/** Stop sequences a GSM8K run must have, or completions run on and corrupt answer extraction. */
export const GSM8K_REQUIRED_STOPS = ['Question:'];

export function datasetNames(config: TrainingConfig): string[] {
  if (config.data.datasets) return config.data.datasets.map((d) => d.name);
  return [config.data.dataset];
}

export function checkTrainingConfig(config: TrainingConfig, file: YamlFile): CheckResult {
  const errors: Problem[] = [...checkPyyamlFloats(file)];
  const warnings: Problem[] = [];

  // Roles: one trainer (titan) and one rollout (vllm) engine, names unique.
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
  const trainerIndex = config.roles.findIndex((r) => r.name === 'trainer');
  if (trainerIndex < 0) {
    errors.push(
      file.problem(
        ['roles'],
        'no role is named "trainer"',
        'Add a role `{name: trainer, kind: titan, config: …}`.',
      ),
    );
  } else if (config.roles[trainerIndex].kind !== 'titan') {
    errors.push(file.problem(['roles', trainerIndex, 'kind'], 'the trainer role must be of kind "titan"'));
  }
  if (!config.roles.some((r) => r.kind === 'vllm')) {
    errors.push(
      file.problem(
        ['roles'],
        'no vllm role: GRPO needs a rollout engine',
        'Add `{name: rollout, kind: vllm, …}`.',
      ),
    );
  }

  // Checkpoints: "Completed" jobs that saved none are the first incident.
  const trainer = trainerIndex >= 0 ? config.roles[trainerIndex] : undefined;
  if (trainer?.kind === 'titan') {
    const ckpt = trainer.config.checkpoint;
    if (ckpt?.enable === false) {
      errors.push(
        file.problem(
          ['roles', trainerIndex, 'config', 'checkpoint', 'enable'],
          'checkpointing is disabled: the job would finish "Completed" with no checkpoint in S3',
          'Set enable: true (checkpoints stream to S3 as they are written).',
        ),
      );
    }
    if (ckpt?.interval !== undefined && ckpt.interval !== config.training.checkpoint_interval) {
      warnings.push(
        file.problem(
          ['roles', trainerIndex, 'config', 'checkpoint', 'interval'],
          `differs from training.checkpoint_interval (${config.training.checkpoint_interval})`,
        ),
      );
    }
  }
  if (config.training.checkpoint_interval > config.training.max_steps) {
    warnings.push(
      file.problem(
        ['training', 'checkpoint_interval'],
        `is larger than max_steps (${config.training.max_steps}): only the final checkpoint will be saved`,
      ),
    );
  }

  // Base models must not get a chat template (they produce garbage).
  if (
    /-base$/i.test(config.model.path.replace(/\/+$/, '')) &&
    config.data_iter?.skip_chat_template !== true
  ) {
    errors.push(
      file.problem(
        config.data_iter ? ['data_iter', 'skip_chat_template'] : ['model', 'path'],
        `"${config.model.path}" is a Base model but data_iter.skip_chat_template is not true`,
        'Base models must not be fed a chat template: set data_iter.skip_chat_template: true.',
      ),
    );
  }

  // A fixed sampling seed made every rollout identical.
  if (config.sampling.seed !== undefined) {
    errors.push(
      file.problem(
        ['sampling', 'seed'],
        'a fixed sampling seed makes all n rollouts of a prompt identical (zero GRPO advantage)',
        'Remove sampling.seed; use data.seed for a reproducible data order.',
        { key: true },
      ),
    );
  }
  if (config.sampling.temperature === 0 && config.sampling.n > 1) {
    warnings.push(
      file.problem(
        ['sampling', 'temperature'],
        `0 with n=${config.sampling.n}: all rollouts of a prompt are identical`,
      ),
    );
  }

  // GSM8K completions need "Question:" as a stop or they run on into the next few-shot question.
  if (datasetNames(config).some((n) => /gsm8k/i.test(n))) {
    const stops = config.sampling.stop ?? [];
    const missing = GSM8K_REQUIRED_STOPS.filter((s) => !stops.includes(s));
    if (missing.length > 0) {
      errors.push(
        file.problem(
          config.sampling.stop ? ['sampling', 'stop'] : ['sampling'],
          `GSM8K data but sampling.stop lacks ${missing.map((s) => JSON.stringify(s)).join(', ')}`,
          'Use stop: ["[Question]", "Question:", "Q:", "\\n\\n\\n", "\\n\\n"] so completions do not run on.',
        ),
      );
    }
  }

  // Data: single dataset or `mixed` with a list; an entry orders by difficulty or by an order file.
  if (config.data.dataset === 'mixed' && !config.data.datasets) {
    errors.push(
      file.problem(
        ['data'],
        'dataset "mixed" needs a datasets list',
        'Add data.datasets: [{name, split, weight}].',
      ),
    );
  }
  if (config.data.dataset !== 'mixed' && config.data.datasets) {
    errors.push(
      file.problem(
        ['data', 'datasets'],
        'a datasets list needs data.dataset: mixed',
        'Set data.dataset: mixed.',
      ),
    );
  }
  config.data.datasets?.forEach((entry, i) => {
    if (entry.order !== undefined && entry.difficulty !== undefined) {
      errors.push(
        file.problem(
          ['data', 'datasets', i, 'order'],
          'set either order or difficulty, not both',
          undefined,
          {
            key: true,
          },
        ),
      );
    }
  });

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

export function checkEvalConfig(config: EvalConfig, file: YamlFile): CheckResult {
  const errors: Problem[] = [...checkPyyamlFloats(file)];
  const warnings: Problem[] = [];
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
