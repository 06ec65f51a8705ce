import { mapLimited } from '../../lib/util/pool';

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

/** A task runner that counts what is in flight and what started. */
function tracked() {
  const state = { inFlight: 0, maxInFlight: 0, started: [] as number[] };
  const run = async (item: number, delay = 1) => {
    state.started.push(item);
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    await tick(delay);
    state.inFlight--;
    return item * 10;
  };
  return { state, run };
}

describe('mapLimited', () => {
  it('returns the results in the order of the items, whatever order they finish in', async () => {
    const items = [5, 1, 4, 2, 3];
    const out = await mapLimited(items, 3, async (n, i) => {
      await tick(n * 3);
      return `${i}:${n}`;
    });
    expect(out).toEqual(['0:5', '1:1', '2:4', '3:2', '4:3']);
  });

  it('starts the items in order and never has more than `limit` in flight', async () => {
    const { state, run } = tracked();
    const items = Array.from({ length: 20 }, (_, i) => i);
    await mapLimited(items, 4, (n) => run(n, (n % 3) + 1));
    expect(state.maxInFlight).toBe(4);
    expect(state.started).toEqual(items);
  });

  it('on the first error rejects with it, starts no new item, and lets the ones in flight finish', async () => {
    const { state, run } = tracked();
    const finished: number[] = [];
    const promise = mapLimited(
      Array.from({ length: 10 }, (_, i) => i),
      3,
      async (n) => {
        if (n === 1) {
          await tick(1);
          throw new Error('boom 1');
        }
        if (n === 4) throw new Error('boom 4 (later)');
        await run(n, 20);
        finished.push(n);
        return n;
      },
    );
    await expect(promise).rejects.toThrow('boom 1');
    // 0 and 2 were in flight when 1 failed; 3 and later never started.
    expect(state.started).toEqual([0, 2]);
    expect(finished).toEqual([0, 2]);
    expect(state.inFlight).toBe(0);
    await tick(30);
    expect(state.started).toEqual([0, 2]);
  });

  it('rejects with an error thrown synchronously by the function', async () => {
    await expect(
      mapLimited([1, 2], 2, () => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
  });

  it('gives an empty result for no items without calling the function', async () => {
    const fn = jest.fn(async () => 1);
    await expect(mapLimited([], 4, fn)).resolves.toEqual([]);
    expect(fn).not.toHaveBeenCalled();
  });

  it('runs everything at once when the limit exceeds the item count', async () => {
    const { state, run } = tracked();
    await expect(mapLimited([1, 2, 3], 16, (n) => run(n, 5))).resolves.toEqual([10, 20, 30]);
    expect(state.maxInFlight).toBe(3);
  });

  it('runs one at a time with a limit of 1', async () => {
    const { state, run } = tracked();
    await mapLimited([3, 2, 1], 1, (n) => run(n));
    expect(state.maxInFlight).toBe(1);
    expect(state.started).toEqual([3, 2, 1]);
  });

  it('refuses a limit below 1', async () => {
    await expect(mapLimited([1], 0, async (n) => n)).rejects.toThrow(RangeError);
  });
});
