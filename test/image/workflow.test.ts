import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT } from '../helpers/fixtures';
import { FULL_CONTEXT, synth } from '../infra/synth';

/** The CI image workflow runs the same CLI with the stack's OIDC role, and nothing else holds AWS keys. */
describe('.github/workflows/image.yml', () => {
  const text = fs.readFileSync(path.join(REPO_ROOT, '.github', 'workflows', 'image.yml'), 'utf8');
  const wf = parse(text) as {
    on: Record<string, unknown>;
    permissions: Record<string, string>;
    jobs: Record<string, { steps: { uses?: string; run?: string; with?: Record<string, unknown> }[] }>;
  };
  const steps = Object.values(wf.jobs)[0].steps;

  it('builds on pushes to the default branch with an OIDC token and read-only contents', () => {
    expect(wf.on.push).toMatchObject({ branches: ['main'] });
    expect(wf.permissions).toEqual({ 'id-token': 'write', contents: 'read' });
    expect(text).not.toMatch(/AWS_SECRET_ACCESS_KEY|aws-secret-access-key/i);
  });

  it("assumes the stack's ImageBuildRole, whose trust names this repository and branch", () => {
    const creds = steps.find((s) => s.uses?.startsWith('aws-actions/configure-aws-credentials'))!;
    expect(creds.with?.['role-to-assume']).toBe('${{ vars.RLVR_IMAGE_BUILD_ROLE_ARN }}');
    const { json } = synth(FULL_CONTEXT);
    expect(Object.keys((json as { Outputs: Record<string, unknown> }).Outputs)).toContain(
      'ImageBuildRoleArn',
    );
  });

  it('runs the same CLI (npm run image -- --push) with the content and commit tags, from the trainer dependency files only', () => {
    const run = steps.find((s) => s.run?.includes('npm run'))!.run!;
    expect(run).toMatch(/npm run --silent image -- --push --json/);
    expect(run).toContain('--also-tag "git-${GITHUB_SHA::12}"');
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(pkg.scripts.image).toBe('node bin/rlvr.js image build');
    const trainer = steps.find((s) => s.with?.repository === '${{ vars.TRAINER_REPOSITORY }}')!;
    expect(String(trainer.with?.['sparse-checkout']).trim().split('\n')).toEqual([
      'pyproject.toml',
      'uv.lock',
      'requirements*.txt',
      'constraints*.txt',
    ]);
  });
});
