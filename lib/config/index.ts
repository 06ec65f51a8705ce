export {
  loadTrainingConfig,
  loadTrainingConfigText,
  loadEvalConfig,
  type LoadedConfig,
  type TrainingLoadOptions,
} from './load';
export { loadTrainerProfiles, mergeProfiles } from './trainer-profile-file';
export { loaderUses, type LoaderUse } from './loader-uses';
export { type TrainingConfig } from './training-schema';
export { type EvalConfig, CODE_BENCHMARK_PATTERN } from './eval-schema';
export {
  jobTemplateSchema,
  type JobTemplate,
  type LauncherSection,
  type JobOptionName,
} from './launcher-schema';
export { evalTasks, roleGpuNeeds, type AllowedFinding } from './checks';
export {
  ALL_RULES,
  EVAL_RULES,
  SCHEMA_RULES,
  ruleOf,
  runtimeForecast,
  platformEnvOverride,
  withRule,
  type RuleProblem,
} from './rules';
export { YamlFile, formatKeyPath, type KeyPath } from './yaml-file';
export { didYouMean, editDistance } from './zod-problems';
export { parseDuration, formatDuration, parseGpuList, formatGpuList } from './units';
export { stringifyForTrainer, formatTrainerFloat, isPyyamlFloatTrap, pyyamlMisreads } from './yaml-write';
export {
  EVAL_STANDARD,
  EVAL_TENSOR_PARALLEL_SIZE,
  isCodeTask,
  maxGenToksFor,
  type EvalSettings,
} from './eval-standard';
