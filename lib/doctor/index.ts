/**
 * `rlvr doctor`: what submit, image builds and local runs need (this machine, then AWS), and what a
 * trainer repository's jobs would meet; every problem says what to do.
 */
export { runDoctor } from './run-doctor';
export { trainerRepositoryChecks } from './trainer';
