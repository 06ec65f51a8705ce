import { UserError } from '../../lib/errors';
import { openSubmitSession, planSubmit, type SubmitInput } from '../../lib/jobs';
import { exampleConfigs, REPO_ROOT } from '../helpers/fixtures';

const NO_AWS_ENV = { HOME: '/nonexistent', AWS_EC2_METADATA_DISABLED: 'true' };

function input(extra: Partial<SubmitInput> = {}): SubmitInput {
  return {
    configPath: exampleConfigs()[0],
    options: {},
    settings: { region: 'us-west-2', bucket: 'rlvr-test-bucket' },
    dryRun: true,
    cwd: REPO_ROOT,
    env: NO_AWS_ENV,
    ...extra,
  };
}

describe('the submit session: opened and closed by the caller, never held by a plan', () => {
  it('a dry-run without credentials gets no clients and a note the plan reports', async () => {
    const session = await openSubmitSession(input());
    try {
      expect(session.aws).toBeUndefined();
      expect(session.note).toBe('no AWS credentials found');
      expect(await session.publishedTemplate('p4de-train-eval')).toBeUndefined();
      const plan = await planSubmit(input(), session);
      expect(plan.preflight).toEqual({ ran: false, reason: 'no AWS credentials found', checks: [] });
      expect(Object.keys(plan)).not.toContain('aws');
    } finally {
      session.close();
    }
  });

  it('a submit (not a dry-run) without a region is bad input before anything opens', async () => {
    const err = await openSubmitSession(input({ dryRun: false, settings: {}, env: NO_AWS_ENV })).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toMatch(/No AWS region/);
  });
});
