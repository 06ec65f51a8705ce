import { sleep } from '../../lib/util/sleep';

describe('sleep', () => {
  it('waits the time it is given', async () => {
    const started = Date.now();
    await sleep(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('ends at once when its signal aborts, and does not wait when already aborted', async () => {
    const interrupt = new AbortController();
    const started = Date.now();
    setTimeout(() => interrupt.abort(), 20);
    await sleep(60_000, interrupt.signal);
    expect(Date.now() - started).toBeLessThan(5_000);
    const again = Date.now();
    await sleep(60_000, interrupt.signal);
    expect(Date.now() - again).toBeLessThan(1_000);
  });
});
