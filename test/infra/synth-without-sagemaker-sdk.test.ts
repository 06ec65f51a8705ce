import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { BUILT_IN_TEMPLATES } from '../../lib/job-options/templates';
import { TEMPLATE_PARAMETER_PREFIX } from '../../lib/layout';
import { tempDir } from '../helpers/fixtures';

const ROOT = path.join(__dirname, '..', '..');

/**
 * Runs `script` in a fresh node (jest's module registry would hide what is loaded) with the
 * TypeScript sources loadable, and returns what it prints as JSON. `loaded()` says whether the
 * SageMaker SDK is in node's module cache.
 */
function inFreshNode<T>(script: string): T {
  const prelude = `require('tsx/cjs');
const loaded = () => Object.keys(require.cache).some((k) => k.includes('client-sagemaker'));`;
  const out = execFileSync(process.execPath, ['-e', `${prelude}\n${script}`], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, CDK_DEFAULT_ACCOUNT: '', CDK_DEFAULT_REGION: '' },
  });
  return JSON.parse(out.trim().split('\n').pop()!) as T;
}

describe('cdk synth', () => {
  it('does not load the SageMaker SDK (building the app, checking the job templates, synthesizing)', () => {
    const outdir = tempDir('rlvr-cdk-');
    const result = inFreshNode<{
      afterBuild: boolean;
      afterSynth: boolean;
      templates: number;
      detector: boolean;
    }>(`
const { buildApp } = require('./lib/infra');
const { app, stack } = buildApp({ outdir: ${JSON.stringify(outdir)}, context: { 'rlvr:vpc': true, 'rlvr:s3PrefixListId': 'pl-68a54001', 'rlvr:checkpointExpiryDays': 7 } });
const afterBuild = loaded();
const assembly = app.synth();
const afterSynth = loaded();
const templates = Object.values(assembly.getStackByName(stack.stackName).template.Resources)
  .filter((r) => r.Type === 'AWS::SSM::Parameter' && String(r.Properties.Name).startsWith(${JSON.stringify(TEMPLATE_PARAMETER_PREFIX)})).length;
require('@aws-sdk/client-sagemaker');
console.log(JSON.stringify({ afterBuild, afterSynth, templates, detector: loaded() }));
`);
    // The job templates were checked and published, and the check would have seen the SDK load.
    expect(result.templates).toBe(Object.keys(BUILT_IN_TEMPLATES).length);
    expect(result.detector).toBe(true);
    expect(result.afterBuild).toBe(false);
    expect(result.afterSynth).toBe(false);
  }, 120_000);
});
