import { formatProblem, ProblemsError, RlvrError } from '../lib/errors';

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

/** Prints an error the way the user needs it and returns the exit code: 2 bad input, 1 run-time failure. */
export function reportError(err: unknown, options: { debug: boolean; json: boolean }): number {
  const known = err instanceof RlvrError;
  const exitCode = known ? err.exitCode : 1;
  if (options.json) {
    const payload = {
      ok: false,
      error: {
        code: known ? err.code : 'InternalError',
        message: known && err instanceof ProblemsError ? err.title : (err as Error).message,
        problems:
          err instanceof ProblemsError
            ? err.problems.map((p) => ({ ...p, text: formatProblem(p) }))
            : undefined,
      },
    };
    process.stdout.write(`${JSON.stringify(payload, null, 2)}\n`);
  }
  const message = known ? err.message : `internal error: ${(err as Error)?.message ?? String(err)}`;
  process.stderr.write(`error: ${message}\n`);
  if (options.debug && err instanceof Error && err.stack) {
    process.stderr.write(`${err.stack}\n`);
    if (err.cause instanceof Error && err.cause.stack)
      process.stderr.write(`caused by: ${err.cause.stack}\n`);
  } else if (!known) {
    process.stderr.write('Run again with --debug for the stack trace.\n');
  }
  return exitCode;
}
