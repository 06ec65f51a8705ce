/**
 * The program SageMaker runs in the job (bundled into the image from main.ts): it lays out the run
 * folder, starts the trainer (or a Ray cluster across hosts), streams checkpoints and traces to S3,
 * runs the eval watcher and the batch evaluation, and resumes from the latest complete checkpoint.
 * Nothing outside this folder imports it at run time (the bundle starts at main.ts); the face offers
 * only the registration of a kind's program, for a kind defined outside the library's folders.
 */
export { registerContainerProgram, type ContainerProgram, type ProgramOptions } from './programs';
