import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from './fixtures';
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the reporter is CommonJS
const { skipSummary } = require('./peer-skips') as { skipSummary: (lines: string[]) => string | undefined };

const FIXTURE = path.join('test', 'fixtures', 'peer-skip', 'missing-peer.fixture.ts');

function jest(env: NodeJS.ProcessEnv) {
  return spawnSync(
    process.execPath,
    [
      path.join(REPO_ROOT, 'node_modules/jest/bin/jest.js'),
      '--testMatch',
      `**/${path.basename(FIXTURE)}`,
      FIXTURE,
    ],
    { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 },
  );
}

describe('a missing test peer', () => {
  it('outside CI: its tests are skipped (not passed), and the run ends saying how many suites each peer skipped', () => {
    const r = jest({ CI: '' });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/Tests:\s+2 skipped, 1 passed, 3 total/);
    expect(r.stderr).toContain(
      '2 suites skipped because a test peer is missing: no-such-peer (1), other-missing-peer (1).',
    );
  });

  it('under CI=true: the run fails naming the peer', () => {
    const r = jest({ CI: 'true' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('no-such-peer is required under CI=true but is not installed');
  });

  it('says nothing when no peer was missing, and counts a suite once however many tests it skipped', () => {
    expect(skipSummary([''])).toBeUndefined();
    const line = (peer: string, what: string) => JSON.stringify({ peer, what });
    expect(skipSummary([line('dockerd', 'a.ts'), line('dockerd', 'a.ts'), line('dockerd', 'b.ts')])).toMatch(
      /^2 suites skipped because a test peer is missing: dockerd \(2\)\./,
    );
  });
});
