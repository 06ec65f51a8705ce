import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { runEntrypoint } from '../../lib/container/entrypoint';
import { entrypointEnv, fakeMlRoot } from '../helpers/ml-root';

jest.setTimeout(30_000);

/** A restarted job (its run.json and a checkpoint copied back) whose trainer's profile says resume: none. */
function restartedRoot(): string {
  const root = fakeMlRoot({ config: 'run:\n  name: r\ntraining:\n  checkpoint_interval: 1\n' });
  const ckpt = path.join(root, 'checkpoints', 'checkpoints', 'r_step10');
  fs.mkdirSync(ckpt, { recursive: true });
  fs.writeFileSync(path.join(ckpt, 'config.json'), '{}');
  fs.writeFileSync(
    path.join(root, 'checkpoints', 'run.json'),
    JSON.stringify({ attempts: [{ startedAt: '2026-11-23T01:02:03Z', status: 'Stopped' }] }),
  );
  fs.mkdirSync(path.join(root, 'code'), { recursive: true });
  fs.writeFileSync(path.join(root, 'code', 'train.sh'), 'touch "$RLVR_RUN_DIR/trainer-started"\n');
  return root;
}

describe('a restart of a trainer that cannot resume', () => {
  it('fails loudly, keeps the earlier checkpoints and never starts the trainer', async () => {
    const root = restartedRoot();
    const code = await runEntrypoint({
      root,
      env: entrypointEnv(root),
      out: new PassThrough(),
      pollMs: 50,
      stableMs: 0,
    });
    expect(code).toBe(1);
    expect(fs.readFileSync(path.join(root, 'output', 'failure'), 'utf8')).toMatch(
      /^restart: custom cannot resume \(its profile says resume: none\), so this restart would train again from the base model; failing instead\. The earlier attempts' files stay in the run folder \(checkpoints\/r_step10\)/,
    );
    expect(fs.existsSync(path.join(root, 'checkpoints', 'trainer-started'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'checkpoints', 'checkpoints', 'r_step10', 'config.json'))).toBe(
      true,
    );
  });
});
