import type { AwsClients } from '../../lib/aws';
import type { JobContext } from '../../lib/aws/session';
import { awsChecks } from '../../lib/doctor/aws-checks';
import { localChecks } from '../../lib/doctor/local-checks';
import { S3Layout } from '../../lib/layout';

/** A JobContext whose AWS answers are stubs: the checks' own logic, fault by fault. */
function context(over: {
  identity?: () => Promise<{ account: string; arn: string }>;
  repositoryExists?: (name: string) => Promise<boolean>;
  quotas?: (text: string) => Promise<Record<string, number>>;
  listObjects?: () => Promise<unknown[]>;
  parameter?: JobContext['parameter'];
  repositoryUri?: string;
  bucket?: string;
}): JobContext {
  const aws = {
    diagnostics: {
      callerIdentity:
        over.identity ?? (async () => ({ account: '123456789012', arn: 'arn:aws:iam::1:user/u' })),
      repositoryExists: over.repositoryExists ?? (async () => true),
      sagemakerQuotas:
        over.quotas ?? (async (text: string) => ({ [text]: 2, 'other for training job usage': 0 })),
    },
    s3: { listObjects: over.listObjects ?? (async () => []) },
    ssm: { getParameter: async () => undefined },
  } as unknown as AwsClients;
  return {
    aws,
    region: 'us-east-1',
    jobNamePrefix: 'rlvr',
    settings: {
      values: over.repositoryUri ? { repositoryUri: over.repositoryUri } : {},
      sources: {},
      missing: [],
    } as unknown as JobContext['settings'],
    parameter: over.parameter ?? 'found',
    layout: over.bucket ? new S3Layout(over.bucket, 'rlvr') : undefined,
    close: () => undefined,
  };
}

const TYPE = 'ml.p4d.24xlarge';
const levels = (checks: { name: string; level: string }[]) =>
  Object.fromEntries(checks.map((c) => [c.name, c.level]));

describe('doctor', () => {
  it('without a Docker engine, warns and says what needs one', async () => {
    const checks = await localChecks({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
    const docker = checks.find((c) => c.name === 'docker engine');
    expect(docker).toMatchObject({
      level: 'warn',
      fix: expect.stringMatching(/start dockerd or set DOCKER_HOST/),
    });
    expect(docker!.detail).toContain('unix:///nonexistent/docker.sock');
    expect(checks.map((c) => c.name)).toEqual(['docker engine', 'local GPUs']);
  });

  it('all reachable: every AWS check passes, in order', async () => {
    const checks = await awsChecks(
      context({ bucket: 'b', repositoryUri: '1.dkr.ecr.us-east-1.amazonaws.com/rlvr-train' }),
      TYPE,
    );
    expect(checks.map((c) => [c.name, c.level])).toEqual([
      ['credentials', 'ok'],
      ['settings parameter', 'ok'],
      ['bucket', 'ok'],
      ['image repository', 'ok'],
      ['quota', 'ok'],
    ]);
    expect(checks[4].detail).toBe(`"${TYPE} for training job usage": 2`);
  });

  it('stops after the credentials when there are none', async () => {
    const checks = await awsChecks(
      context({
        identity: async () => {
          throw Object.assign(new Error('The security token included in the request is expired'), {
            name: 'ExpiredToken',
          });
        },
        bucket: 'b',
      }),
      TYPE,
    );
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatchObject({
      name: 'credentials',
      level: 'fail',
      fix: expect.stringContaining('sso'),
    });
  });

  it('a missing repository and a zero quota fail; an unreadable quota or bucket says so', async () => {
    const failing = await awsChecks(
      context({
        repositoryUri: '1.dkr.ecr.us-east-1.amazonaws.com/rlvr-train',
        repositoryExists: async () => false,
        quotas: async (text) => ({ [text]: 0 }),
        parameter: 'absent',
      }),
      TYPE,
    );
    expect(levels(failing)).toEqual({
      credentials: 'ok',
      'settings parameter': 'warn',
      'image repository': 'fail',
      quota: 'fail',
    });
    expect(failing.find((c) => c.name === 'image repository')!.detail).toBe('no repository rlvr-train');

    const unreadable = await awsChecks(
      context({
        bucket: 'b',
        listObjects: async () => {
          throw Object.assign(new Error('Access Denied'), { name: 'AccessDenied' });
        },
        quotas: async () => {
          throw Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' });
        },
      }),
      TYPE,
    );
    expect(levels(unreadable)).toMatchObject({ bucket: 'fail', quota: 'warn' });
    expect(unreadable.find((c) => c.name === 'quota')!.detail).toMatch(/^could not read quotas: /);

    const absent = await awsChecks(context({ quotas: async () => ({}) }), TYPE);
    expect(absent.find((c) => c.name === 'quota')).toMatchObject({ level: 'warn', fix: expect.any(String) });
  });
});
