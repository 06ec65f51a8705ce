import { planJson, renderPlan } from '../../bin/plan-output';
import { planSection, renderSections } from '../../bin/plan-sections/section';
import type { SubmitPlan } from '../../lib/training';
import { GSM8K_EXAMPLE, planInSession, REPO_ROOT } from '../helpers/fixtures';

const IMAGE = `123456789012.dkr.ecr.us-west-2.amazonaws.com/rlvr-experiments@sha256:${'a'.repeat(64)}`;

describe('the plan in sections', () => {
  it('prints a shown section under its heading, and neither for a section not shown', () => {
    const plan = {} as SubmitPlan;
    const sections = [
      planSection({ id: 'a', title: 'A', text: () => '  a\n' }),
      planSection({ id: 'b', text: () => '  b, under A\n' }),
      planSection({ id: 'c', title: 'C', text: () => undefined }),
      planSection({ id: 'd', title: () => 'D (named by the plan)', text: () => '' }),
    ];
    expect(renderSections(sections, plan)).toBe('\nA\n  a\n  b, under A\n\nD (named by the plan)\n');
  });

  it('keeps the JSON keys in the order --json has always printed them, and the text framed', async () => {
    const plan = await planInSession({
      configPath: GSM8K_EXAMPLE,
      options: {},
      settings: {
        bucket: 'sagemaker-us-west-2-123456789012',
        roleArn: 'arn:aws:iam::123456789012:role/rlvr-sagemaker-execution',
        region: 'us-west-2',
      },
      image: IMAGE,
      dryRun: true,
      cwd: REPO_ROOT,
      env: { HOME: '/nonexistent', AWS_EC2_METADATA_DISABLED: 'true' },
    });
    expect(Object.keys(planJson(plan))).toEqual([
      'ok',
      'dryRun',
      'jobName',
      'createTrainingJobRequest',
      'uploads',
      'preflight',
      'placeholders',
      'settings',
      'template',
      'options',
      'image',
      'estimate',
      'cluster',
      'sharedFileSystem',
      'retries',
      'spotWait',
      'trainer',
      'model',
      'otherModels',
      'datasets',
      'orderFiles',
      'source',
      'warnings',
      'forecast',
      'allowed',
      'platformEnv',
    ]);
    const text = renderPlan(plan);
    expect(text.startsWith(`Plan for ${plan.jobName} (dry run: nothing was created)\n\n  config `)).toBe(
      true,
    );
    const headings = text.split('\n').filter((l) => /^[A-Z]/.test(l));
    expect(headings.slice(1, 4)).toEqual(['Settings', 'How the job runs', headings[3]]);
    expect(headings[3]).toMatch(/^Forecast \(/);
    expect(text).toMatch(/\nUploads at submit\n[\s\S]*\nPre-flight\n/);
  });
});
