import { ProblemsError } from '../../lib/errors';
import { SETTINGS_PARAMETER_NAME } from '../../lib/layout';
import { mergeSettings, requireSettings, validateSettings } from '../../lib/settings';
import { parseSettingsParameter } from '../../lib/settings/settings';

const parameter = {
  bucket: 'from-parameter',
  roleArn: 'arn:aws:iam::123456789012:role/param',
  repositoryUri: '123456789012.dkr.ecr.us-west-2.amazonaws.com/rlvr-experiments',
  region: 'us-west-2',
  subnets: ['subnet-0abc'],
  securityGroups: ['sg-0abc'],
};

describe('settings resolution', () => {
  it('takes flags over environment over the published parameter, and says where each came from', () => {
    const resolved = mergeSettings(
      { bucket: 'from-flag' },
      {
        RLVR_BUCKET: 'from-env',
        RLVR_ROLE_ARN: 'arn:aws:iam::123456789012:role/env',
        RLVR_SUBNETS: 'subnet-1a, subnet-2b',
      },
      parameter,
    );
    expect(resolved.values.bucket).toBe('from-flag');
    expect(resolved.sources.bucket).toBe('flag --bucket');
    expect(resolved.values.roleArn).toBe('arn:aws:iam::123456789012:role/env');
    expect(resolved.sources.roleArn).toBe('env RLVR_ROLE_ARN');
    expect(resolved.values.subnets).toEqual(['subnet-1a', 'subnet-2b']);
    expect(resolved.values.repositoryUri).toBe(parameter.repositoryUri);
    expect(resolved.sources.repositoryUri).toBe(`parameter ${SETTINGS_PARAMETER_NAME}`);
    expect(resolved.values.prefix).toBe('rlvr-experiments/');
    expect(resolved.missing).toEqual([]);
  });

  it('names every missing setting and how to provide it', () => {
    const resolved = mergeSettings({}, {}, undefined);
    expect(resolved.missing).toEqual(['bucket', 'roleArn', 'repositoryUri', 'region']);
    try {
      requireSettings(resolved);
      throw new Error('expected an error');
    } catch (err) {
      expect(err).toBeInstanceOf(ProblemsError);
      const message = (err as Error).message;
      expect(message).toMatch(
        /bucket: not set\n\s+Pass --bucket, set RLVR_BUCKET, or deploy the infrastructure stack/,
      );
      expect(message).toMatch(/region: not set\n\s+Pass --region, set AWS_REGION/);
    }
  });

  it('rejects malformed values, naming their source', () => {
    const problems = validateSettings(
      mergeSettings(
        { roleArn: 'not-an-arn', subnets: Array.from({ length: 17 }, (_, i) => `subnet-${i}a`).join(',') },
        { RLVR_BUCKET: 'Bad_Bucket', AWS_REGION: 'us-west-2' },
        undefined,
      ),
    );
    expect(problems.map((p) => [p.where, p.message])).toEqual([
      [
        'setting bucket (from env RLVR_BUCKET)',
        '"Bad_Bucket" is not valid: an S3 bucket name (3–63 lowercase letters, digits, "." and "-")',
      ],
      ['setting roleArn (from flag --role-arn)', '"not-an-arn" is not valid: an IAM role ARN'],
      ['setting subnets (from flag --subnets)', expect.stringMatching(/is not valid: at most 16 values$/)],
    ]);
  });

  it('validates the published parameter with the same schema', () => {
    expect(parseSettingsParameter(JSON.stringify(parameter)).bucket).toBe('from-parameter');
    expect(() => parseSettingsParameter('{not json')).toThrow(/is not JSON/);
    expect(() => parseSettingsParameter(JSON.stringify({ bucket: 'x', extra: 1 }))).toThrow(
      /does not hold valid settings \(bucket: an S3 bucket name .*; extra: not a setting\)/,
    );
    expect(() => parseSettingsParameter('[]')).toThrow(/not a JSON object/);
    expect(() =>
      parseSettingsParameter(JSON.stringify({ subnets: ['subnet-1a', 'subnet-zz'], securityGroups: 'sg-1' })),
    ).toThrow(/subnets: subnet ids like subnet-0123abcd; securityGroups: expected a list of strings/);
  });
});
