/**
 * The CLI says once, on stderr, when it runs on a Node outside package.json's engines, and says nothing
 * on a supported one. The rule is checked on version numbers; the CLI itself runs on the Node running
 * this test and, where it differs, on the machine's own `node`.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as semver from 'semver';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const support = require('../../bin/node-support.js') as {
  nodeWarning(version: string, range: string): string | undefined;
  supportedRange(): string;
};

const ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(ROOT, 'bin/rlvr.js');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
};

describe('the supported Node versions', () => {
  it("are package.json's engines range, and the current LTS lines are in it", () => {
    expect(support.supportedRange()).toBe(pkg.engines.node);
    for (const v of ['22.13.0', '22.23.5', '24.0.0', '24.21.0', '26.12.1'])
      expect(support.nodeWarning(v, pkg.engines.node)).toBeUndefined();
  });

  it('warn on Node 20 (its end of life and the SDK) and on a line outside the range', () => {
    expect(support.nodeWarning('20.20.2', pkg.engines.node)).toMatch(
      /^rlvr: Node 20\.20\.2 is not supported \(supported: .*\): Node 20's end of life was April 2026.*need Node 22\. The command goes on; install a supported Node/,
    );
    expect(support.nodeWarning('18.20.0', pkg.engines.node)).toMatch(/end of life/);
    expect(support.nodeWarning('22.12.0', pkg.engines.node)).toMatch(/not tested on this release line/);
    expect(support.nodeWarning('23.11.0', pkg.engines.node)).toMatch(/not tested on this release line/);
  });
});

/** The Node binaries on this machine: the one running the test, and `node` on the system path. */
function nodes(): string[] {
  const found = new Set([process.execPath]);
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node'])
    if (fs.existsSync(candidate)) found.add(fs.realpathSync(candidate));
  return [...found];
}

describe.each(nodes())('rlvr on %s', (node) => {
  const version = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
  const supported = semver.satisfies(version, pkg.engines.node);
  const env = { ...process.env, RLVR_NODE_WARNED: '' };

  it(`${supported ? 'says nothing' : 'warns exactly once'} (Node ${version})`, () => {
    const run = spawnSync(node, [CLI, '--help'], { encoding: 'utf8', env });
    expect(run.status).toBe(0);
    const warnings = run.stderr.split('\n').filter((l) => l.startsWith('rlvr: Node '));
    expect(warnings).toEqual(supported ? [] : [support.nodeWarning(version, pkg.engines.node)]);
    expect(run.stderr).not.toMatch(/NodeVersionSupportWarning/);
    expect(run.stdout).toMatch(/^Usage: rlvr/);
  });

  it("stays quiet in the command's child processes", () => {
    const run = spawnSync(node, [CLI, '--help'], {
      encoding: 'utf8',
      env: { ...env, RLVR_NODE_WARNED: '1' },
    });
    expect(run.status).toBe(0);
    expect(run.stderr).not.toMatch(/rlvr: Node /);
  });
});
