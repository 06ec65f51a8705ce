/**
 * The layout rule in eslint.config.js: container paths, S3 prefixes and RLVR_ names are spelled in
 * lib/layout only. Planted literals must fail the lint; lib/layout, tests and comments must not.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { ESLint, type Linter } from 'eslint';

const repoRoot = path.resolve(__dirname, '..', '..');
// The project's own config, handed over as an object: ESLint loads a config file with a dynamic
// import(), which jest's CommonJS sandbox refuses without --experimental-vm-modules.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = require(path.join(repoRoot, 'eslint.config.js')) as Linter.Config[];
const newESLint = () => new ESLint({ cwd: repoRoot, overrideConfigFile: true, overrideConfig: config });
const MESSAGE = 'Spell container paths, S3 prefixes and RLVR_ names in lib/layout (import them).';

async function layoutFindings(code: string, filePath: string): Promise<string[]> {
  const eslint = newESLint();
  const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, filePath) });
  const fatal = result.messages.filter((m) => m.fatal);
  expect(fatal).toEqual([]);
  return result.messages.filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
}

const PLANTED: Record<string, string> = {
  'a container path': "export const checkpoints = '/opt/ml/checkpoints';\n",
  'a prefix in a template literal': 'export const jobs = (x: string) => `${x}rlvr-experiments/jobs/`;\n',
  'an RLVR_ name': "export const name = 'RLVR_FOO';\n",
  'an RLVR_ name read from the environment': 'export const value = process.env.RLVR_FOO;\n',
  'an RLVR_ name as an object key': "export const env = { RLVR_FOO: 'x' };\n",
};

describe('the layout lint rule', () => {
  it.each(Object.entries(PLANTED))('reports %s in lib/', async (_what, code) => {
    expect(await layoutFindings(code, 'lib/training/planted.ts')).toEqual([MESSAGE]);
  });

  it('reports them in bin/ too', async () => {
    expect(await layoutFindings(PLANTED['a container path'], 'bin/commands/planted.ts')).toEqual([MESSAGE]);
  });

  it.each(['lib/layout/index.ts', 'test/x.test.ts'])('does not report them in %s', async (filePath) => {
    for (const code of Object.values(PLANTED)) {
      expect(await layoutFindings(code, filePath)).toEqual([]);
    }
  });

  it('does not report comments, or names that only resemble them', async () => {
    const code = [
      '// Checkpoints go to /opt/ml/checkpoints, under rlvr-experiments/checkpoints/ (RLVR_CHECKPOINT_DIR).',
      '/** $RLVR_RUN_DIR is /opt/ml/checkpoints. */',
      'export const bucket = (account: string) => `rlvr-experiments-${account}`;',
      "export { normalisePrefix } from '../layout';",
      '',
    ].join('\n');
    expect(await layoutFindings(code, 'lib/training/planted.ts')).toEqual([]);
  });

  it('passes on the files that use lib/layout', async () => {
    const eslint = newESLint();
    const results = await eslint.lintFiles([
      'lib/infra/rlvr-stack.ts',
      'lib/settings/settings.ts',
      'lib/local/run.ts',
      'bin/commands/common.ts',
    ]);
    const findings = results.flatMap((r) =>
      r.messages
        .filter((m) => m.ruleId === 'no-restricted-syntax')
        .map((m) => `${path.relative(repoRoot, r.filePath)}:${m.line}`),
    );
    expect(findings).toEqual([]);
  });

  it('fails the eslint command (as `npm run lint` runs it) on a planted literal', () => {
    const eslintBin = path.join(repoRoot, 'node_modules', 'eslint', 'bin', 'eslint.js');
    const run = (filePath: string) =>
      spawnSync(process.execPath, [eslintBin, '--stdin', '--stdin-filename', filePath], {
        cwd: repoRoot,
        input: PLANTED['a container path'],
        encoding: 'utf8',
      });
    const planted = run('lib/training/planted.ts');
    expect(planted.status).toBe(1);
    expect(planted.stdout).toContain(MESSAGE.replace(/\.$/, ''));
    expect(run('lib/layout/planted.ts').status).toBe(0);
  });
});

describe('the library never prints nor handles signals', () => {
  const PRINTS = 'export const say = (line: string) => process.stderr.write(line);\n';
  const HANDLES = "process.on('SIGINT', () => undefined);\n";

  it('reports process.stdout/stderr and process.on in lib/, not in bin/ or the container main', async () => {
    for (const code of [PRINTS, HANDLES]) {
      const found = await layoutFindings(code, 'lib/local/planted.ts');
      expect(found).toHaveLength(1);
      expect(found[0]).toMatch(/never writes to the process's output|Signal handlers belong to the CLI/);
      expect(await layoutFindings(code, 'bin/commands/planted.ts')).toEqual([]);
      expect(await layoutFindings(code, 'lib/container/main.ts')).toEqual([]);
    }
  });
});
