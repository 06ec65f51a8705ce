import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../helpers/cli';
import { useEmulator } from '../helpers/emulator-suite';
import { tempDir } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable } from '../helpers/moto';

jest.setTimeout(120_000);

/** Problems S3 shows only at plan time, for checkpoints an eval config names. */
describeWithPeer('moto_server', motoAvailable())('rlvr eval --config: checkpoints looked up in S3', () => {
  const emulator = useEmulator();

  it('a model not in S3 is refused at its entry’s file:line:column, with an upload command that works', async () => {
    const cwd = tempDir('rlvr-eval-cfg-');
    fs.writeFileSync(
      path.join(cwd, 'eval.yaml'),
      [
        'benchmarks:',
        '  - {task: ifeval, num_fewshot: 0}',
        'checkpoints:',
        '  - {name: qwen8b, path: Qwen/Qwen3-8B}',
        '',
      ].join('\n'),
    );
    const r = await runCli(
      [
        'eval',
        '--config',
        'eval.yaml',
        '--dry-run',
        '--image',
        'x.dkr.ecr.us-west-2.amazonaws.com/r@sha256:' + 'a'.repeat(64),
      ],
      {
        cwd,
        env: emulator.cliEnv({ XDG_CACHE_HOME: path.join(cwd, '.cache') }),
      },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/eval\.yaml:4:\d+: checkpoints\[0\]\.path: .*nothing in S3/);
    expect(r.stderr).toContain('rlvr upload model <local folder> --name Qwen3-8B');
    expect(r.stderr).not.toMatch(/rlvr upload <local folder> s3:/);
  });
});
