/**
 * Typed errors. A `user` error is bad input (config, flags, settings, pre-flight) and exits 2;
 * an `internal` error is a run-time failure and exits 1. Only the CLI entry turns them into exit codes.
 */
export type ErrorSource = 'user' | 'internal';

export class RlvrError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly source: ErrorSource,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RlvrError';
  }

  get exitCode(): number {
    return this.source === 'user' ? 2 : 1;
  }
}

/** Bad input: says what is wrong and what to do. Exit 2. */
export class UserError extends RlvrError {
  constructor(message: string, code = 'BadInput', options?: { cause?: unknown }) {
    super(message, code, 'user', options);
    this.name = 'UserError';
  }
}

/** A failure at run time (AWS, network, disk). Exit 1. */
export class RuntimeFailure extends RlvrError {
  constructor(message: string, code = 'RuntimeFailure', options?: { cause?: unknown }) {
    super(message, code, 'internal', options);
    this.name = 'RuntimeFailure';
  }
}

/** Where a problem is: a file position for configs, a flag or setting name otherwise. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

export interface Problem {
  /** file:line:column when the problem is in a file. */
  readonly location?: SourceLocation;
  /** Dotted key path (`roles[0].config.optimizer.lr`), flag (`--train-gpus`) or setting name. */
  readonly where: string;
  readonly message: string;
  /** What would be right / what to do. */
  readonly hint?: string;
  /** The config rule that found it (`RLVR119`), when one did. */
  readonly rule?: string;
}

export function formatLocation(location: SourceLocation): string {
  return `${location.file}:${location.line}:${location.column}`;
}

export function formatProblem(problem: Problem): string {
  const at = problem.location ? `${formatLocation(problem.location)}: ` : '';
  const hint = problem.hint ? `\n    ${problem.hint}` : '';
  return `${at}${problem.where}: ${problem.message}${hint}`;
}

/** Every problem found in the input, reported at once. Exit 2. */
export class ProblemsError extends UserError {
  constructor(
    readonly title: string,
    readonly problems: readonly Problem[],
  ) {
    super(`${title}\n${problems.map((p) => `  ${formatProblem(p)}`).join('\n')}`, 'InvalidInput');
    this.name = 'ProblemsError';
  }
}

/**
 * The refusals of an output path the user typed (`--out`: not a regular file, a file where a folder
 * should be, the file system's own codes) as bad input naming the flag (exit 2); anything else as it is.
 */
export function outPathError(flag: string, out: string, e: unknown): unknown {
  const err = e as NodeJS.ErrnoException;
  if (err?.name === 'NotARegularFileError') return new UserError(`${flag} ${err.message}.`, 'BadFlag');
  if (err?.name === 'NotAFolderError')
    return new UserError(
      `${flag} ${out}: a part of it that should be a folder is a file (${err.message}).`,
      'BadFlag',
    );
  const why: Record<string, string> = {
    ENOTDIR: 'a part of it that should be a folder is a file',
    EISDIR: 'it is a folder: give a file name in it',
    ELOOP: 'it goes through a loop of symlinks',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    EROFS: 'the file system is read-only',
    ENAMETOOLONG: 'the name is too long',
    ENOSPC: 'no space left on the device',
  };
  return err?.code && why[err.code] ? new UserError(`${flag} ${out}: ${why[err.code]}.`, 'BadFlag') : e;
}
