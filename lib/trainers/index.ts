export {
  keyTree,
  mergeKeyTrees,
  type DataSection,
  type DatasetLoader,
  type PasskScriptContract,
  LAUNCHER_RUNTIME,
  type TrainerRuntime,
  type KeyTree,
  type NetworkUse,
  type TrainerProfile,
} from './profile';
export {
  BUILT_IN_PROFILES,
  CITE_FOLDERS,
  EVAL_CONFIG_KEYS,
  LOADERS,
  MIXED,
  MIXED_MODES,
  RLVR_EVAL_SCRIPT,
  SHARED_KEYS,
  TITAN_CONFIG_KEYS,
  TITAN_DEGREES,
  TITAN_DEGREES_CITE,
  VLLM_CONFIG_KEYS,
} from './rlvr-experiments';
export { hasKey, isMap, valueAtDotted, valueAtPath, type YamlMap } from './config-tree';
export { commandScript, selectTrainer, type TrainerSelection } from './select';
export {
  buildJobContract,
  evalBenchmarks,
  WEIGHTS_ONLY_RESUME_NOTE,
  type ContractKeyPath,
  type JobContract,
  type JobForecastRecord,
} from './job-contract';
export { RANK0_EXPORT_CITE } from './rlvr-experiments';
export { OWN_STEP_FIELD, STEP_MARKERS } from './trace-markers';
