export {
  stageSource,
  packSource,
  DEFAULT_MAX_SOURCE_BYTES,
  type StagedSource,
  type StagedFile,
  type PackedSource,
  type StageOptions,
} from './stage';
export { captureGitState, gitRoot, type GitState } from './git';
