export { stageSource, packSource, type StagedSource, type PackedSource } from './stage';
export { refusedSourceFolder, systemFolderReason } from './location';
export { captureGitState, gitRoot, type GitState } from './git';
export { compareBytes, reproducibleTar, type TarEntry } from './tar';
