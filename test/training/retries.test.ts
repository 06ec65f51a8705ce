import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DescribeTrainingJobResponse } from '@aws-sdk/client-sagemaker';
import { YamlFile } from '../../lib/config';
import { type SubmitPlan } from '../../lib/training';
import { buildCreateTrainingJobRequest } from '../../lib/training/request';
import {
  BUILT_IN_TEMPLATES,
  checkRequestLimits,
  describeSource,
  resolveJobOptions,
  type JobOptionFlags,
} from '../../lib/job-options';
import { attemptsFromRunInfo, describeAttempts, summarizeAttempts } from '../../lib/operate/inspect';
import { planJson, renderPlan } from '../../bin/plan-output';
import { runCli } from '../helpers/cli';
import { loadBotocoreModel, validateAgainstModel } from '../helpers/botocore-model';
import {
  GSM8K_EXAMPLE,
  gsm8kWith,
  lineOf,
  makeTrainerRepo,
  planInSession,
  REPO_ROOT,
} from '../helpers/fixtures';

const model = loadBotocoreModel('sagemaker');
const IMAGE = `123456789012.dkr.ecr.us-west-2.amazonaws.com/rlvr-experiments@sha256:${'a'.repeat(64)}`;
const NO_AWS_ENV = { HOME: '/nonexistent', AWS_EC2_METADATA_DISABLED: 'true' };
const SETTINGS = {
  bucket: 'sagemaker-us-west-2-123456789012',
  roleArn: 'arn:aws:iam::123456789012:role/rlvr-sagemaker-execution',
  region: 'us-west-2',
};

function resolve(flags: JobOptionFlags, launcherExtra = '') {
  const text = `run: {name: x}\nlauncher:\n  max_runtime: 12h\n${launcherExtra}`;
  const file = YamlFile.parse(text, 'cfg.yaml');
  return resolveJobOptions({
    flags,
    launcher: (file.toJS() as { launcher?: Record<string, unknown> }).launcher,
    configFile: file,
    template: { name: 'p4de-train', values: BUILT_IN_TEMPLATES['p4de-train'] },
    hasEvalConfig: false,
    defaultTrainerCommand: { value: 'python entrypoints/train_grpo_sft.py {config}', note: 'grpo-sft' },
  });
}

async function dryRun(options: JobOptionFlags, config = GSM8K_EXAMPLE): Promise<SubmitPlan> {
  return planInSession({
    configPath: config,
    options,
    settings: SETTINGS,
    image: IMAGE,
    dryRun: true,
    cwd: REPO_ROOT,
    env: NO_AWS_ENV,
  });
}

describe('max_retries', () => {
  it('is unset by default, and read from a flag or the config with its source', () => {
    const none = resolve({});
    expect(none.problems).toEqual([]);
    expect(none.options!.maxRetries.value).toBeUndefined();

    const flag = resolve({ max_retries: '3' });
    expect(flag.options!.maxRetries.value).toBe(3);
    expect(describeSource(flag.options!.maxRetries.source)).toBe('flag --max-retries');

    const config = resolve({}, '  max_retries: 30\n');
    expect(config.options!.maxRetries.value).toBe(30);
    expect(describeSource(config.options!.maxRetries.source)).toBe('config cfg.yaml:4:16');
  });

  it.each([['0'], ['31'], ['2.5'], ['three'], ['-1']])('refuses %s where it was given', (value) => {
    const { options, problems } = resolve({ max_retries: value });
    expect(options).toBeUndefined();
    expect(problems).toEqual([
      {
        location: undefined,
        where: '--max-retries',
        message: `${JSON.stringify(value)} is not a retry count from 1 to 30`,
        hint: undefined,
      },
    ]);
  });

  it('becomes RetryStrategy.MaximumRetryAttempts, absent when unset, valid for the API model', async () => {
    const plain = await dryRun({});
    expect(plain.request.RetryStrategy).toBeUndefined();
    const retried = await dryRun({ max_retries: '5', spot: true, max_wait: '48h' });
    expect(retried.request.RetryStrategy).toEqual({ MaximumRetryAttempts: 5 });
    expect(validateAgainstModel(model, 'CreateTrainingJob', retried.request)).toEqual([]);
    expect(checkRequestLimits(retried.request)).toEqual([]);
    // Outside the API's range, the model and our limit check both refuse it.
    const tooMany = buildCreateTrainingJobRequest({
      ...retried.requestInput,
      jobName: retried.jobName,
      options: { ...retried.requestInput.options, maxRetries: 31 },
    });
    expect(validateAgainstModel(model, 'CreateTrainingJob', tooMany)).toEqual([
      'CreateTrainingJob.RetryStrategy.MaximumRetryAttempts: length/value 31 > max 30',
    ]);
    expect(checkRequestLimits(tooMany).map((p) => `${p.where}: ${p.message}`)).toEqual([
      'RetryStrategy.MaximumRetryAttempts: must be 1–30, got 31',
    ]);
  });

  it('the plan shows the retries and the spot wait as rows, and its JSON carries both', async () => {
    const p = await dryRun({ max_retries: '3', spot: true, max_wait: '48h' });
    const text = renderPlan(p);
    expect(text).toMatch(/spot wait +up to 48h \(MaxWaitTimeInSeconds 172800\) +← flag --max-wait\n/);
    expect(text).toMatch(
      /retries +up to 3 \(RetryStrategy\.MaximumRetryAttempts 3\) +← flag --max-retries\n/,
    );
    const json = planJson(p);
    expect(json.retries).toEqual({ maxRetryAttempts: 3, source: 'flag --max-retries' });
    expect(json.spotWait).toEqual({ maxWaitTimeInSeconds: 172800, source: 'flag --max-wait' });
    expect(json.options.maxRetries).toEqual({ value: 3, source: 'flag --max-retries' });

    const onDemand = await dryRun({});
    expect(renderPlan(onDemand)).toMatch(/retries +none \(no RetryStrategy\)/);
    expect(renderPlan(onDemand)).not.toMatch(/spot wait/);
    expect(planJson(onDemand).spotWait).toBeNull();
    expect(planJson(onDemand).retries.maxRetryAttempts).toBeNull();
  });
});

describe('the CLI flags', () => {
  it('--max-retries 31 exits 2 naming the flag', async () => {
    const config = path.relative(REPO_ROOT, GSM8K_EXAMPLE);
    const { code, stderr } = await runCli(['submit', config, '--dry-run', '--max-retries', '31']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--max-retries: "31" is not a retry count from 1 to 30/);
  });

  it('launcher.max_retries out of range exits 2 at its line', async () => {
    const text = gsm8kWith(['max_runtime: 24h', 'max_runtime: 24h\n  max_retries: 40']);
    const { root, configPath } = makeTrainerRepo({ config: text });
    const written = fs.readFileSync(configPath, 'utf8');
    const { code, stderr } = await runCli(['submit', 'configs/gsm8k.yaml', '--dry-run'], { cwd: root });
    expect(code).toBe(2);
    expect(stderr).toMatch(
      new RegExp(`gsm8k\\.yaml:${lineOf(written, 'max_retries: 40')}:\\d+: launcher\\.max_retries`),
    );
  });

  it('--instances without --local is a usage error that points at --instance-count', async () => {
    const config = path.relative(REPO_ROOT, GSM8K_EXAMPLE);
    const { code, stderr } = await runCli(['submit', config, '--dry-run', '--instances', '2']);
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /--instances runs a job as local containers, with --local; for SageMaker use --instance-count 2/,
    );
  });

  it.each([['0'], ['9'], ['two']])('--local --instances %s exits 2 before anything runs', async (n) => {
    const config = path.relative(REPO_ROOT, GSM8K_EXAMPLE);
    const { code, stderr } = await runCli(['submit', config, '--local', '--instances', n]);
    expect(code).toBe(2);
    expect(stderr).toMatch(new RegExp(`--instances ${n}: a whole number from 1 to 8`));
  });
});

describe('attempts of a job', () => {
  const job = (statuses: string[], retries?: number): DescribeTrainingJobResponse =>
    ({
      TrainingJobName: 'j',
      TrainingJobArn: 'arn',
      TrainingJobStatus: 'InProgress',
      SecondaryStatus: statuses[statuses.length - 1] as never,
      CreationTime: new Date(0),
      SecondaryStatusTransitions: statuses.map((s) => ({ Status: s as never, StartTime: new Date(0) })),
      ...(retries ? { RetryStrategy: { MaximumRetryAttempts: retries } } : {}),
    }) as unknown as DescribeTrainingJobResponse;

  const RUN_INFO = {
    resume: { kind: 'weights', from: 'qwen3-gsm8k_step20', step: 20, note: 'weights only' },
    attempts: [
      { startedAt: '2026-01-01T00:00:00Z', host: 'algo-1' },
      {
        startedAt: '2026-01-01T02:00:00Z',
        host: 'algo-1',
        resume: { kind: 'weights', from: 'qwen3-gsm8k_step20', step: 20, note: 'weights only' },
        endedAt: '2026-01-01T05:00:00Z',
        status: 'Completed',
      },
      'not an attempt',
    ],
  };

  it('counts run.json attempts and SageMaker interruptions, and says where the restart resumed', () => {
    const transitions = ['Starting', 'Downloading', 'Training', 'Interrupted', 'Starting', 'Training'];
    const report = summarizeAttempts(job(transitions, 3), RUN_INFO);
    expect(report).toMatchObject({ count: 2, interruptions: 1, maxRetries: 3 });
    expect(report.recorded).toHaveLength(2);
    expect(report.recorded[1]).toEqual({
      startedAt: '2026-01-01T02:00:00Z',
      host: 'algo-1',
      endedAt: '2026-01-01T05:00:00Z',
      status: 'Completed',
      resume: { kind: 'weights', from: 'qwen3-gsm8k_step20', step: 20, note: 'weights only' },
    });
    expect(describeAttempts(report)).toBe(
      '2 (1 interruption) · resumed from step 20 (qwen3-gsm8k_step20) · retries: up to 3',
    );
  });

  it('without run.json, one attempt per interruption plus one once training started', () => {
    const report = summarizeAttempts(
      job(['Starting', 'Training', 'Interrupted', 'Starting', 'Training', 'Interrupted', 'Starting']),
      undefined,
    );
    expect(report).toMatchObject({ count: 3, interruptions: 2, maxRetries: undefined, resume: undefined });
    expect(describeAttempts(report)).toBe('3 (2 interruptions)');
    expect(summarizeAttempts(job(['Starting']), undefined).count).toBe(0);
  });

  it('reads run.json attempts defensively', () => {
    expect(attemptsFromRunInfo('garbage')).toEqual([]);
    expect(
      attemptsFromRunInfo({ attempts: [{ startedAt: 5, host: 'algo-2', resume: { note: 7 } }] }),
    ).toEqual([{ host: 'algo-2' }]);
  });
});
