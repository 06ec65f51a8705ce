import { baseModelChatTemplate } from './base-model-chat-template';
import { checkpointEnableForced } from './checkpoint-enable-forced';
import { checkpointInterval } from './checkpoint-interval';
import { configSchema, evalConfigSchema } from './config-schema';
import { duplicateRoleName } from './duplicate-role-name';
import { evalLikelyTypo } from './eval-likely-typo';
import { evalMaxModelLen } from './eval-max-model-len';
import { evalPyyamlFloat } from './eval-pyyaml-float';
import { evalSeed } from './eval-seed';
import { evalTemperature } from './eval-temperature';
import { evalTensorParallel } from './eval-tensor-parallel';
import { greedyRollouts } from './greedy-rollouts';
import { launcherAllow } from './launcher';
import { likelyTypo } from './likely-typo';
import { missingRole } from './missing-role';
import { mixedWithoutDatasets } from './mixed-without-datasets';
import { mixingMode } from './mixing-mode';
import { nextQuestionStop } from './next-question-stop';
import { noCheckpoints } from './no-checkpoints';
import { nothingEndsTraining } from './nothing-ends-training';
import { numEpochsIgnored } from './num-epochs-ignored';
import { olderParallelismName } from './older-parallelism-name';
import { olmesSection } from './olmes-section';
import { pyyamlFloat } from './pyyaml-float';
import { requiredKey } from './required-key';
import { requiredSection } from './required-section';
import type { EvalRule, Rule, TrainingRule } from './rule';
import { samplingSeed } from './sampling-seed';
import { trainerRoleKind } from './trainer-role-kind';
import { unknownDataset } from './unknown-dataset';
import { unknownLoss } from './unknown-loss';
import { watchSource } from './watch-source';
import { zeroLearningRate } from './zero-learning-rate';
import { runtimeForecast } from './runtime-forecast';
import { platformEnvOverride } from './platform-env-override';

/*
 * The config rules, in the order they run (their ids count in that order). Each guards against an
 * incident the team has had or a certain failure of the trainer (a key it reads without a default); warnings
 * are shown in the plan and do not stop a submit.
 */

/** Training-config rules (RLVR1xx). */
export const TRAINING_RULES: readonly TrainingRule[] = [
  pyyamlFloat,
  likelyTypo,
  requiredSection,
  requiredKey,
  duplicateRoleName,
  missingRole,
  trainerRoleKind,
  zeroLearningRate,
  olderParallelismName,
  unknownLoss,
  unknownDataset,
  mixedWithoutDatasets,
  mixingMode,
  nothingEndsTraining,
  numEpochsIgnored,
  noCheckpoints,
  checkpointEnableForced,
  checkpointInterval,
  baseModelChatTemplate,
  samplingSeed,
  greedyRollouts,
  nextQuestionStop,
  launcherAllow,
  runtimeForecast,
  platformEnvOverride,
];

/** Eval-config rules (RLVR2xx). */
export const EVAL_RULES: readonly EvalRule[] = [
  evalPyyamlFloat,
  evalLikelyTypo,
  evalTensorParallel,
  olmesSection,
  watchSource,
  evalSeed,
  evalTemperature,
  evalMaxModelLen,
];

/** Every rule, training then eval, each list after the findings of reading the file. */
export const ALL_RULES: readonly Rule<never>[] = [
  configSchema,
  ...TRAINING_RULES,
  evalConfigSchema,
  ...EVAL_RULES,
];

/** The ids of what reading a file finds, before the rules run. */
export const SCHEMA_RULES = { training: configSchema, eval: evalConfigSchema } as const;
export { withRule } from './config-schema';
export { runtimeForecast } from './runtime-forecast';
export { platformEnvOverride } from './platform-env-override';

export type { AllowedFinding, EvalRule, Rule, RuleCode, RuleProblem, Severity, TrainingRule } from './rule';
export { ruleOf, RULE_IDS, type RuleId } from './rule';
