/**
 * How a job runs, as any job of ours runs: the options (flags > the config's `launcher:` > the template
 * > built-in defaults, each with its source and checks), the built-in defaults and templates, SageMaker's
 * limits on a request, the instance types we know and their prices. Shared facts: the planner, the
 * eval plan, the stack, the container and doctor read them here; nothing here reads any of those.
 */
export {
  describeSource,
  idleGpus,
  MAX_RETRIES,
  MAX_RUNTIME_SECONDS,
  OPTION_FLAGS,
  problemAt,
  resolveJobOptions,
  type JobOptionFlags,
  type JobOptions,
  type ResolvedJobOptions,
  type Sourced,
} from './options';
export { BUILT_IN_DEFAULTS, BUILT_IN_TEMPLATES } from './templates';
export { checkRequestLimits } from './limits';
export { isTrainingInstanceType, hasEfa, hasLocalStorage, gpuCount } from './instance-types';
export {
  compareDriverVersions,
  CUDA_MINIMUM_DRIVER,
  cudaMajorMinor,
  minimumDriverForCuda,
} from './cuda-drivers';
export { PRICES_AS_OF, PRICES_SOURCE, hourlyPrice, costOf, formatUsd } from './prices';
export { templateNameProblems, templateProblems } from './template-check';
