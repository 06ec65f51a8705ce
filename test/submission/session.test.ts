import { ProblemsError, UserError } from '../../lib/errors';
import { planSubmit, submitPlanned, type SubmitInput } from '../../lib/training';
import { openSubmitSession } from '../../lib/submission';
import { exampleConfigs, gsm8kWith, REPO_ROOT, tempDir, writeConfig } from '../helpers/fixtures';

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
  it('a dry-run without credentials connects with no clients and a note the plan reports', async () => {
    const session = openSubmitSession(input());
    try {
      const connection = await session.connect();
      expect(connection.aws).toBeUndefined();
      expect(connection.note).toBe('no AWS credentials found');
      expect(await connection.publishedTemplate('p4de-train-eval')).toBeUndefined();
      expect(await session.connect()).toBe(connection); // once
      const plan = await planSubmit(input(), session);
      expect(plan.preflight).toEqual({ ran: false, reason: 'no AWS credentials found', checks: [] });
      expect(Object.keys(plan)).not.toContain('aws');
      // A dry-run's plan and session never submit.
      await expect(submitPlanned(plan, session)).rejects.toThrow(/dry-run plan or session cannot submit/);
    } finally {
      session.close();
    }
  });

  it('a broken config is reported before any setting is read (a submit without a region)', async () => {
    const dir = tempDir('rlvr-session-');
    const broken = writeConfig(dir, 'broken.yaml', gsm8kWith(['name: grpo', 'name: ppo']));
    const submit = { ...input({ dryRun: false, settings: {}, configPath: broken }), cwd: dir };
    const session = openSubmitSession(submit);
    try {
      const err = await planSubmit(submit, session).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProblemsError);
      // With the config right, the missing region is what stops the submit.
      const noRegion = await session.connect().catch((e: unknown) => e);
      expect(noRegion).toBeInstanceOf(UserError);
      expect((noRegion as Error).message).toMatch(/No AWS region/);
    } finally {
      session.close();
    }
  });
});
