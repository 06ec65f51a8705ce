import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from '../helpers/fixtures';

describe('apache-arrow loads only when a dataset copy is read', () => {
  it('loading lib/training (every job command does) does not load it', () => {
    const script =
      "require('tsx/cjs'); require('./lib/training'); " +
      "process.stdout.write(String(Object.keys(require.cache).some((k) => k.includes('apache-arrow'))));";
    const r = spawnSync(process.execPath, ['-e', script], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('false');
  });
});
