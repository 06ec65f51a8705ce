import * as path from 'node:path';
import type { Problem, SourceLocation } from '../../errors';
import type { TrainerProfile, TrainerSelection, YamlMap } from '../../trainers';
import type { EvalConfig } from '../eval-schema';
import type { TrainingConfig } from '../training-schema';
import type { KeyPath, YamlFile } from '../yaml-file';

/** A rule's id: `RLVR1xx` for training configs, `RLVR2xx` for eval configs, numbered in the order they run. */
export type RuleCode = `RLVR${number}`;

export type Severity = 'error' | 'warning';

/** What a training-config rule reads. */
export interface TrainingRuleContext {
  readonly config: TrainingConfig;
  /** The same value, as a plain YAML map (for dotted keys the schema does not type). */
  readonly raw: YamlMap;
  readonly file: YamlFile;
  /** The trainer that runs the config. */
  readonly profile: TrainerProfile;
  /** Every profile in play: a key any of them reads is never called a typo. */
  readonly profiles: readonly TrainerProfile[];
  /** The trainer script's file name, as messages name it (`train_grpo_sft.py`). */
  readonly trainerName: string;
  /** The index of the role named "trainer" (-1: none). */
  readonly trainerIndex: number;
}

export interface EvalRuleContext {
  readonly config: EvalConfig;
  readonly file: YamlFile;
}

/**
 * The incident rules' ids in `launcher.acknowledge`: the older, reason-less form of `launcher.allow`, still
 * accepted (with a warning) so configs written for it keep working.
 */
export const RULE_IDS = {
  baseChatTemplate: 'base-chat-template',
  samplingSeed: 'sampling-seed',
  gsm8kStop: 'gsm8k-stop',
  noCheckpoints: 'no-checkpoints',
} as const;
export type RuleId = (typeof RULE_IDS)[keyof typeof RULE_IDS];

/** One named check. Its findings are problems; the runner files them as errors, warnings or allowed. */
export interface Rule<C> {
  readonly id: RuleCode;
  /** Short kebab-case name (`base-model-chat-template`). */
  readonly name: string;
  /** One line: what it guards against (`rlvr lint --rules`). */
  readonly doc: string;
  readonly severity: Severity;
  /** Its severity under `--strict`, when that differs. */
  readonly strictSeverity?: Severity;
  /**
   * Whether `launcher.allow` may silence it. Findings that would make the job fail or lose work may not
   * be silenced: they stay errors.
   */
  readonly allowable: boolean;
  /** Its id in `launcher.acknowledge`, the older form of `launcher.allow` (the error stays as a warning that names it). */
  readonly acknowledge?: RuleId;
  /**
   * Its findings are made by the submit's plan, which sees what a config alone does not (past runs):
   * `check` finds nothing, and `rlvr lint` of the config cannot report it.
   */
  readonly madeByPlan?: true;
  readonly check: (context: C) => Finding[];
}

/** What a rule's check returns: a problem, and its severity when it is not the rule's (`strictSeverity` still wins). */
export type Finding = Problem & { readonly severity?: Severity };

export type TrainingRule = Rule<TrainingRuleContext>;
export type EvalRule = Rule<EvalRuleContext>;

/** A finding a rule made, with the rule's id (`rlvr lint` shows it). */
export type RuleProblem = Problem & { readonly rule?: RuleCode };

/** The rule that made a problem, if a rule did. */
export function ruleOf(problem: Problem): RuleCode | undefined {
  return (problem as RuleProblem).rule;
}

/** A finding silenced by `launcher.allow`: not a problem, but shown (the submit plan, `rlvr lint`). */
export interface AllowedFinding {
  readonly rule: RuleCode;
  readonly name: string;
  /** The config's reason, as written. */
  readonly reason: string;
  readonly where: string;
  readonly message: string;
  readonly location?: SourceLocation;
}

export function trainingRuleContext(
  config: TrainingConfig,
  file: YamlFile,
  options: { selection: TrainerSelection; profiles: readonly TrainerProfile[] },
): TrainingRuleContext {
  const { profile } = options.selection;
  return {
    config,
    raw: config as unknown as YamlMap,
    file,
    profile,
    profiles: options.profiles,
    trainerName: path.basename(profile.script),
    trainerIndex: config.roles.findIndex((r) => r.name === 'trainer'),
  };
}

export const toPath = (dotted: string): KeyPath => dotted.split('.');
