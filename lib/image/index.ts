/**
 * Images: the build context (context.ts), the Docker engine by task (engine.ts, the only module that
 * talks to the engine), the registry (registry.ts) and the pipeline that ties them together (pipeline.ts).
 * The face exports what other folders use; the rest is imported by tests from the named files.
 */
export { describeArgSource, EFA_LABEL, planImageBuild } from './build-plan';
export { assembleContext, defaultDockerDir } from './context';
export { cachedCredentials } from './credentials';
export { cudaDriverPlanLine } from './cuda-compat';
export { connectEngine, type ContainerSpec, type Engine } from './engine';
export { LM_EVAL_TASKS_LABEL, offlineDataGaps } from './offline-data';
export {
  createImagePipeline,
  ensureImage,
  imageLabels,
  planImage,
  type ImagePipeline,
  type ImagePlan,
  type ImageResult,
} from './pipeline';
export { ecrCredentials, parseRepositoryUri, remoteDigest } from './registry';
export { imageReferenceProblem } from './reference';
