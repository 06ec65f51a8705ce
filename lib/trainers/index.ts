export {
  keyTree,
  mergeKeyTrees,
  type DataSection,
  type DatasetLoader,
  type DottedKey,
  type KeyTree,
  type TrainerProfile,
} from './profile';
export {
  BUILT_IN_PROFILES,
  CURRENT_TITAN_DEGREE_NAMES,
  LOADERS,
  MIXED,
  MIXED_ENTRY_KEYS,
  MIXED_MODES,
  RLVR_EXPERIMENTS_SHARED_KEYS,
  TITAN_CONFIG_KEYS,
  TITAN_DEGREES,
  VLLM_CONFIG_KEYS,
} from './rlvr-experiments';
export {
  commandScript,
  hasKey,
  profileForCommand,
  selectTrainer,
  valueAtDotted,
  type SelectTrainerInput,
  type SelectTrainerResult,
  type TrainerSelection,
} from './select';
