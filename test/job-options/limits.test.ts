import type { CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import { checkRequestLimits, LIMITS } from '../../lib/job-options/limits';
import { MAX_KEEP_ALIVE_SECONDS, MAX_RUNTIME_SECONDS } from '../../lib/job-options/options';

/*
 * checkRequestLimits, one group of CreateTrainingJob's limits at a time (request.test.ts checks a whole
 * planned request against them).
 */

const channel = (name: string) => ({
  ChannelName: name,
  DataSource: { S3DataSource: { S3DataType: 'S3Prefix' as const, S3Uri: `s3://b/${name}/` } },
});

function request(change: Partial<CreateTrainingJobRequest> = {}): CreateTrainingJobRequest {
  return {
    TrainingJobName: 'rlvr-gsm8k-20260101-000000',
    RoleArn: 'arn:aws:iam::123456789012:role/r',
    AlgorithmSpecification: {
      TrainingImage: '123456789012.dkr.ecr.us-east-1.amazonaws.com/rlvr:abc',
      TrainingInputMode: 'File',
      MetricDefinitions: [{ Name: 'reward', Regex: 'reward=([0-9.]+)' }],
    },
    HyperParameters: { a: '1' },
    Environment: { RLVR_CONFIG: '/opt/ml/input/data/config/config.yaml' },
    Tags: [{ Key: 'project', Value: 'rlvr' }],
    InputDataConfig: [channel('model'), channel('config')],
    OutputDataConfig: { S3OutputPath: 's3://b/out/' },
    ResourceConfig: { InstanceType: 'ml.p4d.24xlarge', InstanceCount: 1, VolumeSizeInGB: 100 },
    StoppingCondition: { MaxRuntimeInSeconds: 3600 },
    ...change,
  };
}

const wheres = (r: CreateTrainingJobRequest) => checkRequestLimits(r).map((p) => p.where);

describe('CreateTrainingJob limits', () => {
  it('a request within every limit has no problem', () => {
    expect(checkRequestLimits(request())).toEqual([]);
    expect(
      checkRequestLimits(
        request({
          EnableManagedSpotTraining: true,
          StoppingCondition: { MaxRuntimeInSeconds: 3600, MaxWaitTimeInSeconds: 7200 },
          ResourceConfig: {
            InstanceType: 'ml.p4d.24xlarge',
            InstanceCount: 1,
            KeepAlivePeriodInSeconds: 600,
          },
          VpcConfig: { SecurityGroupIds: ['sg-1'], Subnets: ['subnet-1', 'subnet-2'] },
        }),
      ),
    ).toEqual([]);
  });

  it('job name and image', () => {
    const problems = checkRequestLimits(
      request({
        TrainingJobName: '-bad_name',
        AlgorithmSpecification: {
          TrainingImage: 'x'.repeat(LIMITS.trainingImage + 1),
          TrainingInputMode: 'File',
        },
      }),
    );
    expect(problems.map((p) => p.where)).toEqual(['job name', 'image']);
    expect(problems[0].hint).toBe('Shorten or fix the job-name prefix.');
  });

  it('hyperparameters and environment: counts, key and value lengths, variable names', () => {
    const many = Object.fromEntries(
      Array.from({ length: LIMITS.hyperParameters + 1 }, (_, i) => [`k${i}`, '1']),
    );
    expect(wheres(request({ HyperParameters: many }))).toEqual(['HyperParameters']);
    expect(
      wheres(request({ HyperParameters: { ['k'.repeat(LIMITS.hyperParameterKey + 1)]: 'x'.repeat(2501) } })),
    ).toEqual([
      `HyperParameters.${'k'.repeat(LIMITS.hyperParameterKey + 1)}`,
      `HyperParameters.${'k'.repeat(LIMITS.hyperParameterKey + 1)}`,
    ]);
    const env = checkRequestLimits(
      request({ Environment: { '1BAD': 'x', LONG: 'y'.repeat(LIMITS.environmentValue + 1) } }),
    );
    expect(env.map((p) => p.where)).toEqual(['Environment.1BAD', 'Environment.LONG']);
    expect(env[1].hint).toMatch(/Shorten it/);
  });

  it('tags: count, key form, value length, duplicates', () => {
    const tags = [
      { Key: 'aws:reserved', Value: 'x' },
      { Key: 'ok', Value: 'v'.repeat(LIMITS.tagValue + 1) },
      { Key: 'ok', Value: 'v' },
    ];
    expect(wheres(request({ Tags: tags }))).toEqual(['Tags.aws:reserved', 'Tags.ok', 'Tags.ok']);
    const tooMany = Array.from({ length: LIMITS.tags + 1 }, (_, i) => ({ Key: `t${i}`, Value: '' }));
    expect(checkRequestLimits(request({ Tags: tooMany }))).toEqual([
      {
        where: 'Tags',
        message: `${LIMITS.tags + 1} tags (limit ${LIMITS.tags})`,
        hint: 'Remove some launcher.tags.',
      },
    ]);
  });

  it('channels: 1–20, valid and distinct names', () => {
    expect(wheres(request({ InputDataConfig: [] }))).toEqual(['InputDataConfig']);
    expect(
      wheres(
        request({ InputDataConfig: Array.from({ length: LIMITS.channels + 1 }, (_, i) => channel(`c${i}`)) }),
      ),
    ).toEqual(['InputDataConfig']);
    expect(wheres(request({ InputDataConfig: [channel('a b'), channel('x'), channel('x')] }))).toEqual([
      'channel a b',
      'channel x',
    ]);
  });

  it('metric definitions: count, regex and name lengths', () => {
    const spec = (MetricDefinitions: { Name: string; Regex: string }[]) =>
      request({
        AlgorithmSpecification: { TrainingImage: 'img', TrainingInputMode: 'File', MetricDefinitions },
      });
    expect(
      wheres(
        spec(Array.from({ length: LIMITS.metricDefinitions + 1 }, (_, i) => ({ Name: `m${i}`, Regex: 'r' }))),
      ),
    ).toEqual(['MetricDefinitions']);
    expect(wheres(spec([{ Name: 'm', Regex: 'r'.repeat(LIMITS.metricRegex + 1) }]))).toEqual(['metric m']);
  });

  it('runtime, spot wait and keep-alive', () => {
    expect(wheres(request({ StoppingCondition: { MaxRuntimeInSeconds: MAX_RUNTIME_SECONDS + 1 } }))).toEqual([
      'MaxRuntimeInSeconds',
    ]);
    expect(
      wheres(
        request({
          EnableManagedSpotTraining: true,
          StoppingCondition: { MaxRuntimeInSeconds: 3600, MaxWaitTimeInSeconds: 60 },
        }),
      ),
    ).toEqual(['MaxWaitTimeInSeconds']);
    expect(
      checkRequestLimits(
        request({ StoppingCondition: { MaxRuntimeInSeconds: 3600, MaxWaitTimeInSeconds: 7200 } }),
      ),
    ).toEqual([{ where: 'MaxWaitTimeInSeconds', message: 'applies only to spot training', hint: undefined }]);
    expect(
      wheres(
        request({
          ResourceConfig: {
            InstanceType: 'ml.g5.xlarge',
            InstanceCount: 1,
            KeepAlivePeriodInSeconds: MAX_KEEP_ALIVE_SECONDS + 1,
          },
        }),
      ),
    ).toEqual(['KeepAlivePeriodInSeconds']);
  });

  it('VPC: 1–5 security groups and 1–16 subnets, each naming its setting', () => {
    const problems = checkRequestLimits(request({ VpcConfig: { SecurityGroupIds: [], Subnets: [] } }));
    expect(problems.map((p) => [p.where, p.hint])).toEqual([
      ['VpcConfig.SecurityGroupIds', 'Set RLVR_SECURITY_GROUPS with the subnets.'],
      ['VpcConfig.Subnets', 'Set RLVR_SUBNETS with the security groups.'],
    ]);
  });

  it('reports every group in request order', () => {
    expect(
      wheres(
        request({
          TrainingJobName: '',
          HyperParameters: { ['k'.repeat(300)]: '1' },
          Environment: { 'a-b': '1' },
          Tags: [{ Key: '', Value: '' }],
          InputDataConfig: [],
          StoppingCondition: { MaxRuntimeInSeconds: 0 },
          VpcConfig: { SecurityGroupIds: ['sg'], Subnets: [] },
        }),
      ),
    ).toEqual([
      'job name',
      `HyperParameters.${'k'.repeat(300)}`,
      'Environment.a-b',
      'Tags.',
      'InputDataConfig',
      'MaxRuntimeInSeconds',
      'VpcConfig.Subnets',
    ]);
  });
});
