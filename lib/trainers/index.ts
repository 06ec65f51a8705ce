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
  EVAL_CONFIG_KEYS,
  LOADERS,
  MIXED,
  MIXED_MODES,
  SHARED_KEYS,
  TITAN_CONFIG_KEYS,
  TITAN_DEGREES,
  TITAN_DEGREES_CITE,
  VLLM_CONFIG_KEYS,
} from './rlvr-experiments';
export { hasKey, isMap, valueAtDotted, type YamlMap } from './config-tree';
export {
  commandScript,
  profileForCommand,
  selectTrainer,
  type SelectTrainerInput,
  type SelectTrainerResult,
  type TrainerSelection,
} from './select';
