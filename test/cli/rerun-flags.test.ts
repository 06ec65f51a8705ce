import { bareEnv, runCli } from '../helpers/cli';

describe('rlvr rerun on a machine without AWS', () => {
  it('a malformed --set or --add is bad input, reported before settings or AWS are asked', async () => {
    for (const [flag, message] of [
      ['--set', /^error: --set =3: expected key=value, e\.g\. --set run\.seed=7$/m],
      ['--add', /^error: --add =3: expected key=value, e\.g\. --add run\.seed=7$/m],
    ] as const) {
      const { code, stdout, stderr } = await runCli(
        ['rerun', 'annotations-adhoc-20260101-000000', flag, '=3'],
        {
          env: bareEnv(),
        },
      );
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toMatch(message);
      expect(stderr).not.toMatch(/region|at .*\.ts:\d+/);
    }
  });
});
