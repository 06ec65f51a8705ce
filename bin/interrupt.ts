/**
 * Ctrl-C (or SIGTERM) for the library: the CLI installs the handlers and hands an AbortSignal down;
 * the library installs none. The handlers go when the operation ends.
 */
export async function withInterrupt<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const interrupt = new AbortController();
  const onSignal = () => interrupt.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await run(interrupt.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
