/**
 * `fn` over `items` with at most `limit` calls in flight, started in the items' order; the results in
 * the items' order. On the first failure no further item starts, the calls in flight finish (so
 * nothing still runs when this returns: callers may close what the calls use), and the first error
 * rejects.
 */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!(limit >= 1)) throw new RangeError(`mapLimited: limit ${limit} is below 1`);
  const results: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  let failure: unknown;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i], i);
      } catch (err) {
        if (!failed) failure = err;
        failed = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed) throw failure;
  return results;
}
