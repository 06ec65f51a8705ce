export {
  stageSource,
  packSource,
  DEFAULT_MAX_SOURCE_BYTES,
  type StagedSource,
  type StagedFile,
  type PackedSource,
  type StageOptions,
} from './stage';
export { WITHHOLD_FILE, withholdRules, type WithheldFile } from './withhold';
export { refusedSourceFolder, systemFolderReason } from './location';
export { captureGitState, gitRoot, type GitState } from './git';
export { compareBytes, reproducibleTar, type TarEntry } from './tar';
