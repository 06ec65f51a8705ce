/**
 * Images: the build context (context.ts), the Docker engine by task (engine.ts, the only module that
 * talks to the engine), the registry (registry.ts) and the pipeline that ties them together (pipeline.ts).
 */
export * from './build-plan';
export * from './buildkit-trace';
export * from './context';
export * from './credentials';
export * from './cuda-compat';
export * from './engine';
export * from './engine-streams';
export * from './offline-data';
export * from './pipeline';
export * from './registry';
export { imageReferenceProblem } from './reference';
