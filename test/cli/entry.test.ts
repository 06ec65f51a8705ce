import * as path from 'node:path';
import { bareEnv, runCommand } from '../helpers/cli';
import { REPO_ROOT } from '../helpers/fixtures';

/*
 * bin/rlvr.ts loads only the module of the command being run. Both ways bin/rlvr.js starts it must
 * find every module: the built JavaScript (dist/, what `npm ci` builds) and the TypeScript sources
 * through tsx's require hook (what runs right after an edit).
 */
const COMMANDS = [
  'submit',
  'jobs',
  'status',
  'logs',
  'stop',
  'doctor',
  'download',
  'sync-traces',
  'upload',
  'image',
];

describe.each([
  ['the TypeScript sources (tsx)', ['-r', 'tsx/cjs', path.join(REPO_ROOT, 'bin', 'rlvr.ts')]],
  ['the build (dist/)', [path.join(REPO_ROOT, 'dist', 'bin', 'rlvr.js')]],
])('the CLI from %s', (_name, entry) => {
  it.each(COMMANDS)('`%s --help` loads its command', async (command) => {
    const { code, stdout, stderr } = await runCommand(process.execPath, [...entry, command, '--help'], {
      env: bareEnv(),
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^Usage: rlvr ${command} `));
  });

  it('`--help` lists every command, and a misspelt one gets a suggestion (exit 2)', async () => {
    const help = await runCommand(process.execPath, [...entry, '--help'], { env: bareEnv() });
    expect(help.code).toBe(0);
    for (const command of COMMANDS) expect(help.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    const typo = await runCommand(process.execPath, [...entry, 'downlaod'], { env: bareEnv() });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown command 'downlaod'\n\(Did you mean download\?\)/);
  });
});
