import { runCli } from '../helpers/cli';
import { useEmulator } from '../helpers/emulator-suite';
import { describeWithPeer, motoAvailable } from '../helpers/moto';

/** `rlvr diff` of two names that are both unknown: both are named, not only the one that failed first. */
describeWithPeer('moto_server', motoAvailable())('rlvr diff of unknown jobs (moto)', () => {
  const emulator = useEmulator();

  it('names both unknown jobs, exit 2', async () => {
    const r = await runCli(
      ['diff', 'annotations-adhoc-20000101-000001', 'annotations-adhoc-20000101-000002'],
      {
        env: emulator.cliEnv(),
      },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('No training job named annotations-adhoc-20000101-000001');
    expect(r.stderr).toContain('No training job named annotations-adhoc-20000101-000002');
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
  });
});
