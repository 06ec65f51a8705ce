/**
 * The program SageMaker runs in the job (bundled into the image from main.ts): it lays out the run
 * folder, starts the trainer (or a Ray cluster across hosts), streams checkpoints and traces to S3,
 * runs the eval watcher and the batch evaluation, and resumes from the latest complete checkpoint.
 * Nothing outside this folder imports it at run time; the face names the entry for tests and tools.
 */
export { EVAL_COMMAND_ENV, runEntrypoint, type EntrypointOptions } from './entrypoint';
export { registerContainerProgram, type ContainerProgram, type ProgramOptions } from './programs';
