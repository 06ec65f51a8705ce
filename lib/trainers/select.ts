import { hasKey, isMap, valueAtDotted, type YamlMap as Yaml } from './config-tree';
import { LAUNCHER_RUNTIME, type TrainerProfile } from './profile';
import { RLVR_EVAL_SCRIPT } from './rlvr-experiments';

/** Which trainer runs a config, and why (the plan states both). */
export interface TrainerSelection {
  readonly profile: TrainerProfile;
  /** How it was chosen: named, found from the trainer command, or recognised from the config's keys. */
  readonly how: 'launcher.trainer' | 'trainer-command' | 'recognised' | 'no-profile';
  readonly reason: string;
}

function roleNames(config: Yaml): string[] {
  return Array.isArray(config.roles) ? config.roles.filter(isMap).map((r) => String(r.name ?? '')) : [];
}

/** The script a trainer command runs: the first `*.py` word (`python entrypoints/x.py {config}`). */
export function commandScript(command: string): string | undefined {
  return command
    .split(/\s+/)
    .find((w) => w.endsWith('.py'))
    ?.replace(/^\.\//, '');
}

/**
 * A stand-in profile for a command no profile describes: only the launcher's own checks apply (no
 * required keys, no rollout rules), and the plan says so.
 */
export function profileForCommand(command: string): TrainerProfile {
  const script = commandScript(command) ?? command.split(/\s+/)[0];
  return {
    id: 'custom',
    script,
    command,
    summary: 'a trainer without a profile',
    requiredSections: [],
    requiredKeys: {},
    requiredRoles: [],
    samples: false,
    dataSections: [
      { section: 'data', iterator: 'data_iter', skipChatTemplateDefault: false },
      { section: 'sft_data', iterator: 'sft_data_iter', skipChatTemplateDefault: false },
    ],
    checkpoints: { writes: true, intervalKey: 'training.checkpoint_interval', final: false },
    resume: 'none',
    // It writes where the launcher says; the repository's eval script (if any) is theirs.
    runtime: { ...LAUNCHER_RUNTIME, evalScript: RLVR_EVAL_SCRIPT },
    keys: {},
    cite: 'no profile',
  };
}

/** Recognises one of the team's trainers from the keys only its configs carry. */
function recogniseBuiltIn(config: Yaml): { id: string; reason: string } | undefined {
  const roles = roleNames(config);
  const has = (k: string) => hasKey(config, k);
  const vllmRoles = Array.isArray(config.roles)
    ? config.roles.filter((r) => isMap(r) && r.kind === 'vllm').length
    : 0;
  if (!has('data') && has('sft_data') && vllmRoles === 0) {
    return { id: 'sft-only', reason: 'sft_data and no rollout role: supervised fine-tuning only' };
  }
  if (has('training.alpha_gkd') || (roles.includes('teacher') && roles.includes('reference'))) {
    return {
      id: 'grpo-gkd',
      reason: has('training.alpha_gkd')
        ? 'training.alpha_gkd: GRPO plus distillation'
        : 'a teacher and a reference role: GRPO plus distillation',
    };
  }
  if (has('training.batch_size') || has('training.minibatch_size')) {
    const n = valueAtDotted(config, 'sampling.n');
    const dataset = valueAtDotted(config, 'data.dataset');
    if (n === 1 && dataset === 'gsm8k' && !has('training.discard_perfect_completions')) {
      return {
        id: 'gkd',
        reason:
          'training.batch_size (distillation schedule) with sampling.n: 1 on GSM8K: synchronous GKD (train_opsd reads the same keys: set launcher.trainer: opsd if you meant it)',
      };
    }
    return {
      id: 'opsd',
      reason:
        'training.batch_size (distillation schedule): on-policy self-distillation (train_gkd reads the same keys: set launcher.trainer: gkd if you meant it)',
    };
  }
  if (has('training.prompts_per_optim_step') || has('loss')) {
    return {
      id: 'grpo-sft',
      reason:
        'the prompts_per_* schedule and a loss section: the GRPO trainer (train_grpo_sft handles grpo, drgrpo, dapo and the SFT term)',
    };
  }
  return undefined;
}

export interface SelectTrainerInput {
  readonly config: unknown;
  /** `launcher.trainer`. */
  readonly trainer?: string;
  /** A trainer command given by a flag or the config's launcher section. */
  readonly command?: string;
  /** Built-in profiles with the repository's own on top. */
  readonly profiles: readonly TrainerProfile[];
}

export type SelectTrainerResult =
  | { readonly selection: TrainerSelection }
  | {
      readonly problem: {
        readonly message: string;
        readonly hint: string;
        readonly at: 'trainer' | 'config';
      };
    };

/** launcher.trainer > the trainer command's script > the config's keys. */
export function selectTrainer(input: SelectTrainerInput): SelectTrainerResult {
  const { profiles } = input;
  const ids = profiles.map((p) => p.id).join(', ');
  if (input.trainer !== undefined) {
    const profile = profiles.find((p) => p.id === input.trainer);
    if (!profile) {
      return {
        problem: {
          message: `no trainer profile named "${input.trainer}"`,
          hint: `Known trainers: ${ids}.`,
          at: 'trainer',
        },
      };
    }
    return {
      selection: {
        profile: input.command ? { ...profile, command: input.command } : profile,
        how: 'launcher.trainer',
        reason: `launcher.trainer: ${profile.id}`,
      },
    };
  }
  if (input.command !== undefined) {
    const script = commandScript(input.command);
    const profile = script ? profiles.find((p) => p.script === script) : undefined;
    if (profile) {
      return {
        selection: {
          profile: { ...profile, command: input.command },
          how: 'trainer-command',
          reason: `the trainer command runs ${script}`,
        },
      };
    }
    return {
      selection: {
        profile: profileForCommand(input.command),
        how: 'no-profile',
        reason: `no profile describes ${script ?? input.command}: only the launcher's own checks apply (set launcher.trainer or add a profile to the repository's trainer profile file)`,
      },
    };
  }
  const config = isMap(input.config) ? input.config : {};
  for (const profile of profiles) {
    if (!profile.fromFile) continue;
    const marker = profile.recognisedBy?.find((k) => hasKey(config, k));
    if (marker)
      return {
        selection: { profile, how: 'recognised', reason: `${marker} (profile in ${profile.fromFile})` },
      };
  }
  const recognised = recogniseBuiltIn(config);
  const profile = recognised && profiles.find((p) => p.id === recognised.id);
  if (recognised && profile) return { selection: { profile, how: 'recognised', reason: recognised.reason } };
  return {
    problem: {
      message: 'cannot tell which trainer runs this config',
      hint: `Set launcher.trainer (one of ${ids}) or launcher.trainer_command ("python entrypoints/<trainer>.py {config}").`,
      at: 'config',
    },
  };
}
