export {
  loadTrainingConfig,
  loadTrainingConfigText,
  loadEvalConfig,
  type LoadedConfig,
  type TrainingLoadOptions,
} from './load';
export { loadTrainerProfiles, mergeProfiles, TRAINER_PROFILE_FILE } from './trainer-profile-file';
export { findLikelyTypos } from './typos';
export { loaderUses, type LoaderUse } from './loader-uses';
export { trainingConfigSchema, type TrainingConfig, type Role } from './training-schema';
export { evalConfigSchema, type EvalConfig, CODE_BENCHMARK_PATTERN } from './eval-schema';
export {
  jobTemplateSchema,
  launcherSectionSchema,
  type JobTemplate,
  type LauncherSection,
  type JobOptionName,
} from './launcher-schema';
export {
  evalTasks,
  roleGpuNeeds,
  RULE_DOCS,
  RULE_IDS,
  type AllowedFinding,
  type CheckResult,
  type RuleId,
} from './checks';
export {
  ALL_RULES,
  EVAL_RULES,
  SCHEMA_RULES,
  TRAINING_RULES,
  ruleOf,
  runtimeForecast,
  platformEnvOverride,
  withRule,
  type EvalRule,
  type Rule,
  type RuleCode,
  type RuleProblem,
  type Severity,
  type TrainingRule,
} from './rules';
export { YamlFile, formatKeyPath, type KeyPath } from './yaml-file';
export { zodIssuesToProblems, didYouMean, editDistance } from './zod-problems';
export { parseDuration, formatDuration, parseGpuList, formatGpuList } from './units';
export { stringifyForTrainer, formatTrainerFloat, isPyyamlFloatTrap, pyyamlMisreads } from './yaml-write';
export {
  EVAL_STANDARD,
  EVAL_TENSOR_PARALLEL_SIZE,
  isCodeTask,
  maxGenToksFor,
  type EvalSettings,
} from './eval-standard';
