/*
 * What the container runs for each job kind: a program registered under the kind (training's trainer and
 * eval watcher, an evaluation's batch, a campaign's shards, any registered kind's own). The entrypoint
 * finds the job's kind from its environment and runs that kind's program; it compares no mode itself.
 */
import type { JobKind } from '../job-kinds';
import type { ContainerJob } from './setup';

/** The parts of the entrypoint's options a program may use (kept narrow: tests pass fakes for these). */
export interface ProgramOptions {
  readonly signal?: AbortSignal;
}

/** A kind's program: runs the job in this container and returns its exit code. */
export type ContainerProgram<O extends ProgramOptions = ProgramOptions> = (
  job: ContainerJob,
  options: O,
) => Promise<number>;

const PROGRAMS = new Map<JobKind, ContainerProgram<never>>();

/** Registers the program the container runs for jobs of `kind`. */
export function registerContainerProgram<O extends ProgramOptions>(
  kind: JobKind,
  program: ContainerProgram<O>,
): void {
  const known = PROGRAMS.get(kind);
  if (known && known !== program) throw new Error(`a container program for "${kind.id}" is registered twice`);
  PROGRAMS.set(kind, program as ContainerProgram<never>);
}

/** The program registered for `kind`, if any. */
export function containerProgram<O extends ProgramOptions>(kind: JobKind): ContainerProgram<O> | undefined {
  return PROGRAMS.get(kind) as ContainerProgram<O> | undefined;
}

/** The kinds a program is registered for, by id. */
export function programKinds(): string[] {
  return [...PROGRAMS.keys()].map((k) => k.id);
}
