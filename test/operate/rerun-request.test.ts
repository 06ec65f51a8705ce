import type { CreateTrainingJobRequest } from '@aws-sdk/client-sagemaker';
import { S3Layout } from '../../lib/layout';
import { flattenKeys, runFacts } from '../../lib/operate/diff';
import { rerunRequest } from '../../lib/operate/rerun';

const layout = new S3Layout('bucket');
const original: CreateTrainingJobRequest = {
  TrainingJobName: 'annotations-adhoc-20260101-000000',
  RoleArn: 'arn:aws:iam::1:role/r',
  AlgorithmSpecification: { TrainingImage: 'r/x@sha256:ab', TrainingInputMode: 'File' },
  InputDataConfig: [
    {
      ChannelName: 'config',
      DataSource: {
        S3DataSource: {
          S3DataType: 'S3Prefix',
          S3Uri: 's3://bucket/rlvr-experiments/jobs/annotations-adhoc-20260101-000000/',
        },
      },
    },
    {
      ChannelName: 'code',
      DataSource: {
        S3DataSource: { S3DataType: 'S3Prefix', S3Uri: 's3://bucket/rlvr-experiments/source/ab.tar.gz' },
      },
    },
  ],
  OutputDataConfig: { S3OutputPath: 's3://bucket/rlvr-experiments/output' },
  CheckpointConfig: {
    S3Uri: 's3://bucket/rlvr-experiments/checkpoints/annotations-adhoc-20260101-000000/',
    LocalPath: '/opt/ml/checkpoints',
  },
  ResourceConfig: { InstanceType: 'ml.p4d.24xlarge', InstanceCount: 1, VolumeSizeInGB: 100 },
  StoppingCondition: { MaxRuntimeInSeconds: 3600 },
  Environment: { RLVR_SUBMIT_ID: 'old', RLVR_TRAIN_GPUS: '0,1', RLVR_SOURCE_SHA256: 'ab' },
  Tags: [
    { Key: 'rlvr:config', Value: 'configs/a.yaml' },
    { Key: 'rlvr:rerun-of', Value: 'an-older-job' },
  ],
};

describe('the request of a rerun', () => {
  it('changes the name, the URIs holding it, the submit id and the rerun tag, and nothing else', () => {
    const job = 'annotations-adhoc-20260102-000000';
    const r = rerunRequest(original, {
      jobName: job,
      layout,
      submitId: 'new',
      rerunOf: original.TrainingJobName!,
    });
    expect(r).toEqual({
      ...original,
      TrainingJobName: job,
      InputDataConfig: [
        {
          ...original.InputDataConfig![0],
          DataSource: {
            S3DataSource: { S3DataType: 'S3Prefix', S3Uri: `s3://bucket/rlvr-experiments/jobs/${job}/` },
          },
        },
        original.InputDataConfig![1],
      ],
      CheckpointConfig: {
        S3Uri: `s3://bucket/rlvr-experiments/checkpoints/${job}/`,
        LocalPath: '/opt/ml/checkpoints',
      },
      Environment: { ...original.Environment, RLVR_SUBMIT_ID: 'new' },
      // A rerun of a rerun names the job it reran, once.
      Tags: [
        { Key: 'rlvr:config', Value: 'configs/a.yaml' },
        { Key: 'rlvr:rerun-of', Value: original.TrainingJobName },
      ],
    });
    // The original is not touched.
    expect(original.Environment!.RLVR_SUBMIT_ID).toBe('old');
  });

  it('tags and environment the rerun changes are set, not appended: applying it twice changes nothing more', () => {
    const sweepMember: CreateTrainingJobRequest = {
      ...original,
      Environment: { ...original.Environment, RLVR_RUN_NAME: 'gsm8k' },
      Tags: [
        { Key: 'rlvr:user', Value: 'alice' },
        { Key: 'rlvr:overrides', Value: 'optimizer.lr=1e-6' },
        { Key: 'rlvr:run-name', Value: 'gsm8k' },
      ],
    };
    const change = {
      jobName: 'b',
      layout,
      submitId: 'x',
      rerunOf: 'a',
      tags: { 'rlvr:user': 'bob', 'rlvr:overrides': 'optimizer.lr=1e-6 run.name=gsm8k-seed7' },
      environment: { RLVR_RUN_NAME: 'gsm8k-seed7' },
    };
    const once = rerunRequest(sweepMember, change);
    expect(once.Tags).toEqual([
      { Key: 'rlvr:user', Value: 'bob' },
      { Key: 'rlvr:overrides', Value: 'optimizer.lr=1e-6 run.name=gsm8k-seed7' },
      { Key: 'rlvr:run-name', Value: 'gsm8k' },
      { Key: 'rlvr:rerun-of', Value: 'a' },
    ]);
    expect(once.Environment!.RLVR_RUN_NAME).toBe('gsm8k-seed7');
    expect(rerunRequest(once, change)).toEqual(once);
  });

  it('diff compares what a job ran with, not what differs for every job by construction', () => {
    const other = rerunRequest(original, { jobName: 'b', layout, submitId: 'x', rerunOf: 'a' });
    expect(runFacts(other)).toEqual(runFacts(original));
    const facts = runFacts(original);
    expect(facts.options['environment RLVR_TRAIN_GPUS']).toBe('0,1');
    expect(facts.options['environment RLVR_SUBMIT_ID']).toBeUndefined();
    expect(facts.source).toEqual({ 'source sha256': 'ab' });
    expect(facts.channels).toEqual({});
    expect(flattenKeys({ run: { seed: 1 }, roles: [{ name: 'a' }], empty: {} })).toEqual({
      'run.seed': 1,
      'roles.0.name': 'a',
      empty: {},
    });
  });
});
