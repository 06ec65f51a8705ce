import * as path from 'node:path';
import { type SubmitPlan } from '../../lib/training';
import { newPlanCache } from '../../lib/training/plan';
import { buildCreateTrainingJobRequest } from '../../lib/training/request';
import { checkRequestLimits } from '../../lib/job-options';
import { loadBotocoreModel, validateAgainstModel } from '../helpers/botocore-model';
import { EVAL_DIR, exampleConfigs, planInSession, REPO_ROOT } from '../helpers/fixtures';

const model = loadBotocoreModel('sagemaker');
const settings = {
  bucket: 'sagemaker-us-west-2-123456789012',
  roleArn: 'arn:aws:iam::123456789012:role/rlvr-sagemaker-execution',
  repositoryUri: '123456789012.dkr.ecr.us-west-2.amazonaws.com/rlvr-experiments',
  region: 'us-west-2',
};
const IMAGE = `${settings.repositoryUri}@sha256:${'a'.repeat(64)}`;
const NO_AWS_ENV = { HOME: '/nonexistent', AWS_EC2_METADATA_DISABLED: 'true' };

async function dryRun(
  config: string,
  extra: Partial<Parameters<typeof planInSession>[0]> = {},
): Promise<SubmitPlan> {
  return planInSession({
    configPath: config,
    options: {},
    settings,
    image: IMAGE,
    dryRun: true,
    cwd: REPO_ROOT,
    env: NO_AWS_ENV,
    ...extra,
  });
}

describe('the API model validator', () => {
  it('finds what AWS would reject', async () => {
    const plan = await dryRun(exampleConfigs()[0]);
    const bad = {
      ...plan.request,
      TrainingJobName: 'bad_name',
      RoleArn: undefined,
      ResourceConfig: { ...plan.request.ResourceConfig, InstanceType: 'ml.p9.huge' },
      Environment: { 'BAD-KEY': 'x' },
    };
    const errors = validateAgainstModel(model, 'CreateTrainingJob', bad);
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/TrainingJobName: "bad_name" does not match/),
        expect.stringMatching(/RoleArn: required/),
        expect.stringMatching(/InstanceType: ml.p9.huge not in enum/),
        expect.stringMatching(/Environment\{key BAD-KEY\}/),
      ]),
    );
  });
});

describe('the CreateTrainingJob request', () => {
  it.each(exampleConfigs().map((f) => [path.basename(f), f]))(
    'for %s passes AWS API model constraints and our limit checks',
    async (_name, file) => {
      const plan = await dryRun(file);
      expect(validateAgainstModel(model, 'CreateTrainingJob', plan.request)).toEqual([]);
      expect(checkRequestLimits(plan.request)).toEqual([]);
      expect(plan.preflight).toEqual({ ran: false, reason: 'no AWS credentials found', checks: [] });
    },
  );

  it('also passes with spot, warm pool, VPC and KMS', async () => {
    const spot = await dryRun(exampleConfigs()[0], {
      options: { spot: true, max_wait: '30h' },
      settings: {
        ...settings,
        subnets: 'subnet-0aa,subnet-0bb',
        securityGroups: 'sg-0cc',
        kmsKey: 'arn:aws:kms:us-west-2:123456789012:key/abc',
      },
    });
    expect(validateAgainstModel(model, 'CreateTrainingJob', spot.request)).toEqual([]);
    expect(spot.request.StoppingCondition).toEqual({
      MaxRuntimeInSeconds: 86400,
      MaxWaitTimeInSeconds: 108000,
    });
    expect(spot.request.VpcConfig).toEqual({
      Subnets: ['subnet-0aa', 'subnet-0bb'],
      SecurityGroupIds: ['sg-0cc'],
    });
    expect(spot.request.OutputDataConfig?.KmsKeyId).toMatch(/key\/abc$/);
    const warm = await dryRun(exampleConfigs()[0], { options: { keep_alive: '30m' } });
    expect(warm.request.ResourceConfig?.KeepAlivePeriodInSeconds).toBe(1800);
    expect(validateAgainstModel(model, 'CreateTrainingJob', warm.request)).toEqual([]);
    // How long the eval watcher may finish once training ends: 30 min unless set.
    expect(warm.request.Environment?.RLVR_EVAL_WAIT_S).toBe('1800');
    const quick = await dryRun(exampleConfigs()[0], { options: { eval_wait: '5m' } });
    expect(quick.request.Environment?.RLVR_EVAL_WAIT_S).toBe('300');
  });

  it('also passes with the shared file system channel (EFS, rw, the root) and VpcConfig', async () => {
    const plan = await dryRun(exampleConfigs()[0], {
      settings: { ...settings, subnets: 'subnet-0aa', securityGroups: 'sg-0cc' },
    });
    const request = buildCreateTrainingJobRequest({
      ...plan.requestInput,
      jobName: plan.jobName,
      sharedFileSystem: {
        channel: 'shared',
        fileSystemId: 'fs-0123456789abcdef0',
        directoryPath: '/',
        networkIsolation: true,
      },
    });
    expect(request.InputDataConfig!.at(-1)).toMatchObject({ ChannelName: 'shared', InputMode: 'File' });
    expect(request.InputDataConfig!.at(-1)?.DataSource?.FileSystemDataSource).toEqual({
      FileSystemId: 'fs-0123456789abcdef0',
      FileSystemType: 'EFS',
      DirectoryPath: '/',
      FileSystemAccessMode: 'rw',
    });
    expect(request.VpcConfig).toEqual({ Subnets: ['subnet-0aa'], SecurityGroupIds: ['sg-0cc'] });
    expect(validateAgainstModel(model, 'CreateTrainingJob', request)).toEqual([]);
    expect(checkRequestLimits(request)).toEqual([]);
  });

  it('streams checkpoints to checkpoints/<job>/, ships config and code as channels, and maps the model', async () => {
    const plan = await dryRun(path.join(REPO_ROOT, 'configs/examples/qwen3-1.7B-gsm8k-grpo.yaml'));
    const r = plan.request;
    const job = plan.jobName;
    expect(job).toMatch(/^annotations-adhoc-\d{8}-\d{6}$/);
    expect(r.CheckpointConfig).toEqual({
      S3Uri: `s3://${settings.bucket}/rlvr-experiments/checkpoints/${job}/`,
      LocalPath: '/opt/ml/checkpoints',
    });
    expect(r.OutputDataConfig?.S3OutputPath).toBe(`s3://${settings.bucket}/rlvr-experiments/output`);
    expect(r.AlgorithmSpecification?.TrainingImage).toBe(IMAGE);
    expect(r.RoleArn).toBe(settings.roleArn);
    const channels = Object.fromEntries(
      r.InputDataConfig!.map((c) => [c.ChannelName, [c.InputMode, c.DataSource?.S3DataSource?.S3Uri]]),
    );
    expect(channels).toEqual({
      config: ['File', `s3://${settings.bucket}/rlvr-experiments/jobs/${job}/`],
      code: ['File', `s3://${settings.bucket}/rlvr-experiments/source/${plan.packed.sha256}.tar.gz`],
      model: ['FastFile', `s3://${settings.bucket}/rlvr-experiments/models/Qwen3-1.7B-Base/`],
      gsm8k_train: ['File', `s3://${settings.bucket}/rlvr-experiments/datasets/gsm8k_train/`],
    });
    expect(r.ResourceConfig).toMatchObject({ InstanceType: 'ml.p4de.24xlarge', InstanceCount: 1 });
    expect(r.Environment).toMatchObject({
      RLVR_TRAIN_GPUS: '0,1,2,3,4,5',
      RLVR_EVAL_GPUS: '6,7',
      RLVR_CONFIG: '/opt/ml/input/data/config/resolved-config.yaml',
      RLVR_EVAL_CONFIG: '/opt/ml/input/data/config/eval-config.yaml',
      RLVR_TRAINER_COMMAND: 'python entrypoints/train_grpo_sft.py {config}',
      HF_HUB_OFFLINE: '1',
    });
    expect(r.EnableNetworkIsolation).toBe(true);
    const tags = Object.fromEntries(r.Tags!.map((t) => [t.Key, t.Value]));
    expect(tags['rlvr:config']).toBe('configs/examples/qwen3-1.7B-gsm8k-grpo.yaml');
    expect(tags['rlvr:source-sha256']).toBe(plan.packed.sha256);
    expect(tags['rlvr:template']).toBe('p4de-train-eval');
    expect(r.AlgorithmSpecification?.MetricDefinitions?.map((m) => m.Name)).toEqual([
      'train:reward',
      'train:kl',
      'train:loss',
    ]);
  });

  it('never puts secrets from the environment into the job environment or tags', async () => {
    const plan = await planInSession({
      configPath: exampleConfigs()[0],
      options: {},
      settings,
      image: IMAGE,
      dryRun: true,
      cwd: REPO_ROOT,
      env: {
        ...NO_AWS_ENV,
        AWS_SECRET_ACCESS_KEY: 'SECRET-VALUE',
        HF_TOKEN: 'hf_SECRET',
        WANDB_API_KEY: 'SECRET2',
      },
    });
    const text = JSON.stringify(plan.request);
    expect(text).not.toMatch(/SECRET/);
  });

  it('enables code execution only for code benchmarks', async () => {
    const olmes = await dryRun(exampleConfigs()[0], {
      evalConfigPath: path.join(EVAL_DIR, 'olmes_watch.yaml'),
    });
    expect(olmes.request.Environment?.HF_ALLOW_CODE_EVAL).toBe('1');
    const lmEval = await dryRun(exampleConfigs()[0]);
    expect(lmEval.request.Environment?.HF_ALLOW_CODE_EVAL).toBeUndefined();
  });

  it('lets the plans of one sweep share the staged and packed source', async () => {
    const cache = newPlanCache();
    const first = await dryRun(exampleConfigs()[0], { cache, description: 'a' });
    const second = await dryRun(exampleConfigs()[0], { cache, description: 'b' });
    expect(cache.sources.size).toBe(1);
    expect(second.packed).toBe(first.packed); // packed once
    expect(second.request.Tags).toEqual(first.request.Tags);
  });

  it('catches a request over SageMaker limits before sending', async () => {
    const plan = await dryRun(exampleConfigs()[0]);
    const long = buildCreateTrainingJobRequest({
      ...plan.requestInput,
      jobName: plan.jobName,
      options: {
        ...plan.requestInput.options,
        trainerCommand: `python x.py {config} ${'--flag '.repeat(100)}`,
      },
    });
    expect(checkRequestLimits(long).map((p) => p.where)).toEqual(['Environment.RLVR_TRAINER_COMMAND']);
  });
});
