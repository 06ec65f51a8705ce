/**
 * The transfer rows' peers: s3rver on a free loopback port (both sides talk to it) and moto for
 * SageMaker, with the commands of both sides as a user runs them.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CreateTrainingJobCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { S3Layout } from '../lib/layout';
import { freePort, startMoto } from '../test/helpers/moto';
import { medianPair, movedAtLeast, run, type Timed } from './measure';

const ROOT = path.resolve(__dirname, '..');
export const BUCKET = 'bench';
/** The team's layout in the bench's bucket (the default root prefix, as the CLI resolves it here). */
export const LAYOUT = new S3Layout(BUCKET);

export interface Peers {
  readonly env: NodeJS.ProcessEnv;
  readonly motoEnv: Record<string, string>;
  readonly s3Port: number;
  readonly s3Endpoint: string;
  /** `aws --endpoint-url <s3rver> …` */
  aws(args: string[], opts?: { time?: boolean }): Promise<Timed>;
  /** `rlvr …` (the built CLI) against s3rver and moto. */
  rlvr(args: string[], opts?: { time?: boolean }, extraEnv?: NodeJS.ProcessEnv): Promise<Timed>;
  /** Creates a training job of that name in moto (download and sync-traces describe it). */
  job(name: string): Promise<unknown>;
  /** `s3://bench/rlvr-experiments/checkpoints/<job>/` */
  ck(job: string): string;
  /** A folder under the work folder, emptied first. */
  fresh(name: string): string;
  /**
   * `rlvr download <job>` into `ours-<name>` against `aws s3 cp` of `source` (a key, or a prefix with
   * `--recursive`) into `cli-<name>`, each into a fresh folder; with `fsync`, our `--fsync` against the
   * CLI followed by `sync` (its files on disk too).
   */
  downloadPair(
    name: string,
    jobName: string,
    source: string,
    bytes: number,
    options?: { recursive?: boolean; fsync?: boolean; runs?: number },
  ): ReturnType<typeof medianPair>;
  stop(): Promise<void>;
}

export async function startPeers(work: string): Promise<Peers> {
  const s3Port = await freePort();
  const s3Dir = path.join(work, 's3rver');
  fs.mkdirSync(s3Dir);
  const s3rver = spawn(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/s3rver/bin/s3rver.js'),
      '-d',
      s3Dir,
      '-a',
      '127.0.0.1',
      '-p',
      String(s3Port),
      '--configure-bucket',
      BUCKET,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  s3rver.stdout!.resume();
  s3rver.stderr!.resume();
  const moto = await startMoto();
  const s3Endpoint = `http://127.0.0.1:${s3Port}`;
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`${s3Endpoint}/${BUCKET}`);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: work,
    ...moto.env,
    AWS_ENDPOINT_URL_S3: s3Endpoint,
    // s3rver accepts only its built-in key; moto accepts any.
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_DEFAULT_REGION: 'us-west-2',
    // s3rver (2021) predates streaming trailer checksums; the SDK then sends them only when required.
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    RLVR_BUCKET: BUCKET,
  };
  const aws = (args: string[], opts: { time?: boolean } = {}) =>
    run('aws', ['--endpoint-url', s3Endpoint, ...args], env, { ...opts, cwd: work });
  const rlvr = (args: string[], opts: { time?: boolean } = {}, extraEnv: NodeJS.ProcessEnv = {}) =>
    run(
      process.execPath,
      [path.join(ROOT, 'bin/rlvr.js'), ...args],
      { ...env, ...extraEnv },
      { ...opts, cwd: work },
    );
  const sagemaker = new SageMakerClient({
    region: 'us-west-2',
    endpoint: moto.endpoint,
    credentials: { accessKeyId: 't', secretAccessKey: 't' },
  });
  const job = async (name: string) =>
    sagemaker.send(
      new CreateTrainingJobCommand({
        TrainingJobName: name,
        RoleArn: 'arn:aws:iam::123456789012:role/bench',
        AlgorithmSpecification: { TrainingImage: 'img:1', TrainingInputMode: 'File' },
        OutputDataConfig: { S3OutputPath: LAYOUT.uri(LAYOUT.outputPath()) },
        ResourceConfig: { InstanceType: 'ml.g5.2xlarge', InstanceCount: 1, VolumeSizeInGB: 1 },
        StoppingCondition: { MaxRuntimeInSeconds: 3600 },
      }),
    );
  const ck = (j: string) => LAYOUT.uri(LAYOUT.checkpointsPrefix(j));
  const fresh = (name: string) => {
    const dir = path.join(work, name);
    fs.rmSync(dir, { recursive: true, force: true });
    return dir;
  };
  const downloadPair = (
    name: string,
    jobName: string,
    source: string,
    bytes: number,
    options: { recursive?: boolean; fsync?: boolean; runs?: number } = {},
  ) =>
    medianPair(
      async () => {
        const dest = fresh(`cli-${name}`);
        const cp = options.recursive
          ? ['s3', 'cp', '--recursive', source, dest, '--quiet']
          : ['s3', 'cp', source, path.join(dest, path.basename(source)), '--quiet'];
        if (!options.fsync) return aws(cp, { time: true });
        return run('sh', ['-c', `aws --endpoint-url ${s3Endpoint} ${cp.join(' ')} && sync`], env, {
          time: true,
          cwd: work,
        });
      },
      async () => {
        const args = ['download', jobName, '--results-dir', fresh(`ours-${name}`), '--json'];
        return movedAtLeast(await rlvr(options.fsync ? [...args, '--fsync'] : args, { time: true }), bytes);
      },
      options.runs,
    );

  return {
    env,
    motoEnv: moto.env,
    s3Port,
    s3Endpoint,
    aws,
    rlvr,
    job,
    ck,
    fresh,
    downloadPair,
    stop: async () => {
      sagemaker.destroy();
      s3rver.kill();
      await moto.stop();
    },
  };
}
