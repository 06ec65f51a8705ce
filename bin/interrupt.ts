/**
 * Ctrl-C (or SIGTERM) for the library: the CLI installs the handlers and hands an AbortSignal down;
 * the library installs none. The first signal aborts and takes the handlers away, so a second one ends
 * the process as it would without them; the handlers also go when the operation ends.
 */
export async function withInterrupt<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const interrupt = new AbortController();
  const remove = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  function onSignal(): void {
    remove();
    interrupt.abort();
  }
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await run(interrupt.signal);
  } finally {
    remove();
  }
}
