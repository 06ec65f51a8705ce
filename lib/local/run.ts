/**
 * `submit --local`: the same job, the same image and the same container contract, on this machine's
 * Docker engine. The /opt/ml tree is prepared on the host, the trainer's source is mounted read-only,
 * channels come from local folders (or from S3 through a local cache), and /opt/ml/checkpoints is the
 * local run folder `results/<config_stem>_<YYYYMMDD-HHMMSS>/`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AwsClients } from '../aws';
import { RuntimeFailure, UserError } from '../errors';
import type { ProgressOf } from '../progress';
import { connectEngine, type ContainerSpec, type Engine } from '../image';
import { jobUploads, type SubmitPlan } from '../jobs';
import { valueAtPath } from '../trainers';
import {
  channelPath,
  CHANNELS,
  CONTAINER,
  CONTAINER_CONFIG_FILES,
  containerPathUnder,
  JOB_ENV,
  jobNameTimestamp,
  LOCAL,
  RUN_FOLDER,
} from '../layout';
import { fetchObject } from '../results';

export interface LocalRunOptions {
  readonly plan: SubmitPlan;
  /** The image to run (a local tag or ID). */
  readonly image: string;
  readonly dockerHost?: string;
  /** Host GPUs given to the container (they appear inside as 0..n-1). */
  readonly gpus?: readonly number[];
  /** AWS clients, for inputs that are only in S3. */
  readonly aws?: AwsClients;
  /** Where the job's stdout and stderr go: the caller's streams (the library never writes to the process's). */
  readonly out: NodeJS.WritableStream;
  readonly err: NodeJS.WritableStream;
  /** Aborted (Ctrl-C): the job gets SIGTERM, and SIGKILL after SageMaker's grace. */
  readonly signal?: AbortSignal;
  readonly listener?: (event: LocalRunEvent) => void;
}

/** What a local run reports as it goes; the CLI decides how to show it. */
export type LocalRunEvent = ProgressOf<'started' | 'stopping' | 'failed'>;

/** Seconds between SIGTERM and SIGKILL when a run is interrupted, as SageMaker gives. */
const STOP_GRACE_SECONDS = 120;

export interface LocalRunResult {
  readonly exitCode: number;
  readonly runDir: string;
  readonly interrupted: boolean;
}

interface Bind {
  readonly host: string;
  readonly container: string;
  readonly readOnly: boolean;
  readonly what: string;
}

/** A config value that names an existing local path (absolute, ~, or relative to the config or the source). */
function existingLocalPath(value: unknown, bases: readonly string[]): string | undefined {
  if (typeof value !== 'string' || /^s3:\/\//.test(value)) return undefined;
  const expanded = value.startsWith('~/') ? path.join(os.homedir(), value.slice(2)) : value;
  for (const base of path.isAbsolute(expanded) ? [''] : bases) {
    const candidate = path.resolve(base, expanded);
    if (fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

function cacheRoot(): string {
  return path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'rlvr', 's3');
}

/** An S3 prefix (or one object) mirrored into the local cache; files already there with the right size are kept. */
async function cacheFromS3(
  aws: AwsClients | undefined,
  bucket: string,
  key: string,
  what: string,
): Promise<string> {
  if (!aws) {
    throw new UserError(
      `${what} is only in S3 (s3://${bucket}/${key}) and this run has no AWS access. Point the config at a local copy, or configure AWS credentials.`,
      'LocalInputMissing',
    );
  }
  // A key without a trailing slash names one object (an order file), not every key it prefixes.
  const objects = (await aws.s3.listObjects(bucket, key)).filter((o) =>
    key.endsWith('/') ? !o.key.endsWith('/') : o.key === key,
  );
  if (objects.length === 0)
    throw new UserError(`${what}: nothing in S3 at s3://${bucket}/${key}`, 'LocalInputMissing');
  const single = !key.endsWith('/');
  const dir = path.join(cacheRoot(), bucket, single ? path.posix.dirname(key) : key);
  for (const o of objects) {
    const rel = single ? path.posix.basename(o.key) : o.key.slice(key.length);
    const dest = path.join(dir, rel);
    if (fs.existsSync(dest) && fs.statSync(dest).size === o.size) continue;
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    await fetchObject(aws.s3, bucket, o, dest);
  }
  return dir;
}

/** Where each channel comes from on this machine. */
async function channelBinds(plan: SubmitPlan, aws: AwsClients | undefined, mlRoot: string): Promise<Bind[]> {
  const configDir = path.dirname(plan.config.path);
  const bases = [configDir, plan.source.root];
  const binds: Bind[] = [];

  // The job's files, exactly as a SageMaker job gets them in its config channel.
  const configChannel = containerPathUnder(mlRoot, channelPath(CHANNELS.config));
  for (const f of jobUploads(plan)) {
    fs.mkdirSync(path.dirname(path.join(configChannel, f.file)), { recursive: true });
    fs.writeFileSync(path.join(configChannel, f.file), f.body);
  }

  const { model, otherModels, datasets, orderFiles } = plan.inputs;
  for (const m of [model, ...otherModels]) {
    const local = m.mappings.map((x) => existingLocalPath(x.value, bases)).find(Boolean);
    binds.push({
      host: local ?? (await cacheFromS3(aws, m.location.bucket, m.location.key, `The model (${m.channel})`)),
      container: channelPath(m.channel),
      readOnly: true,
      what: m.channel,
    });
  }
  for (const d of datasets) {
    const local = existingLocalPath(valueAtPath(plan.config.value, d.referencedAt), bases);
    binds.push({
      host: local ?? (await cacheFromS3(aws, d.location.bucket, d.location.key, `Dataset ${d.folder}`)),
      // A local data file is bound as itself; one fetched from S3 sits in a folder of its own.
      container: local && d.kind === 'file' ? d.containerPath : channelPath(d.channel),
      readOnly: true,
      what: `dataset ${d.folder}`,
    });
  }
  for (const o of orderFiles) {
    binds.push({
      host: await cacheFromS3(aws, o.location.bucket, o.location.key, 'Order file'),
      container: channelPath(o.channel),
      readOnly: true,
      what: 'order file',
    });
  }
  return binds;
}

export function localRunName(configFile: string, now: Date): string {
  return `${path.basename(configFile).replace(/\.ya?ml$/i, '')}_${jobNameTimestamp(now)}`;
}

export async function runLocal(options: LocalRunOptions): Promise<LocalRunResult> {
  const { plan } = options;
  const emit = options.listener ?? (() => undefined);
  const engine = await connectEngine(options.dockerHost);
  await checkImage(engine, options.image);
  checkGpuSplit(plan, options.gpus);

  const name = localRunName(plan.config.path, new Date());
  const runDir = path.resolve(LOCAL.resultsDir, name);
  if (fs.existsSync(runDir))
    throw new UserError(`${runDir} exists already; wait a second and run again.`, 'RunDirExists');
  const mlRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-local-ml-'));
  try {
    const binds = await channelBinds(plan, options.aws, mlRoot);
    fs.mkdirSync(runDir, { recursive: true });
    writeInputConfig(mlRoot, binds);
    emit({
      type: 'started',
      name,
      image: options.image,
      binds: binds.map((b) => ({ what: b.what, host: b.host })),
      runDir,
      gpus: options.gpus?.length ?? 0,
    });
    const log = teeOutput(options.out, options.err, path.join(runDir, RUN_FOLDER.localRunLog));
    let exit;
    try {
      exit = await engine.run(containerSpec(options, name, mlRoot, runDir, binds), {
        ...log.sinks,
        ...(options.signal ? { signal: options.signal } : {}),
        onStop: () => emit({ type: 'stopping', graceSeconds: STOP_GRACE_SECONDS }),
      });
    } finally {
      await log.close();
    }
    const failure = containerPathUnder(mlRoot, CONTAINER.failureFile);
    if (fs.existsSync(failure)) {
      fs.copyFileSync(failure, path.join(runDir, RUN_FOLDER.failure));
      emit({ type: 'failed', reason: fs.readFileSync(failure, 'utf8').split('\n')[0] });
    }
    return { exitCode: exit.exitCode, runDir, interrupted: exit.interrupted };
  } catch (e) {
    if (e instanceof UserError || e instanceof RuntimeFailure) throw e;
    throw new RuntimeFailure(`The local run failed: ${(e as Error).message}`, 'LocalRunFailed', { cause: e });
  } finally {
    fs.rmSync(mlRoot, { recursive: true, force: true });
  }
}

async function checkImage(engine: Engine, image: string): Promise<void> {
  if (!(await engine.exists(image))) {
    throw new UserError(
      `The image ${image} is not in the Docker engine at ${engine.where}. Pull it first, or leave out --image and launcher.image so the run builds the pipeline's image.`,
      'NoLocalImage',
    );
  }
}

/** The GPUs the split names must be among those the container gets (numbered 0..n-1 inside). */
function checkGpuSplit(plan: SubmitPlan, gpus: readonly number[] | undefined): void {
  const gpuCount = gpus?.length;
  if (gpuCount === undefined) return;
  const used = [...plan.options.trainGpus.value, ...plan.options.evalGpus.value];
  const beyond = used.filter((g) => g >= gpuCount);
  if (beyond.length > 0) {
    throw new UserError(
      `--gpus gives the container ${gpuCount} GPU(s), numbered 0-${gpuCount - 1} inside it, but the split uses GPU ${beyond.join(', ')}. ` +
        `Pass --train-gpus and --eval-gpus within 0-${gpuCount - 1}.`,
      'BadGpuSplit',
    );
  }
}

/** The /opt/ml/input/config files SageMaker writes: one host, the channels, no hyperparameters. */
function writeInputConfig(mlRoot: string, binds: readonly Bind[]): void {
  const inputConfig = containerPathUnder(mlRoot, CONTAINER.inputConfigDir);
  for (const d of [CONTAINER.inputConfigDir, CONTAINER.outputDir, CONTAINER.modelDir]) {
    fs.mkdirSync(containerPathUnder(mlRoot, d), { recursive: true });
  }
  const channels = [CHANNELS.config, ...binds.map((b) => path.basename(b.container))];
  const writeConfig = (file: string, value: unknown) =>
    fs.writeFileSync(path.join(inputConfig, file), JSON.stringify(value));
  writeConfig(CONTAINER_CONFIG_FILES.resources, {
    current_host: 'algo-1',
    hosts: ['algo-1'],
    current_instance_type: 'local',
  });
  writeConfig(CONTAINER_CONFIG_FILES.hyperparameters, {});
  writeConfig(
    CONTAINER_CONFIG_FILES.inputData,
    Object.fromEntries(channels.map((c) => [c, { TrainingInputMode: 'File' }])),
  );
}

function containerSpec(
  options: LocalRunOptions,
  name: string,
  mlRoot: string,
  runDir: string,
  binds: readonly Bind[],
): ContainerSpec {
  const { plan } = options;
  return {
    image: options.image,
    cmd: ['train'],
    env: {
      ...(plan.request.Environment ?? {}),
      [JOB_ENV.image]: options.image,
      TRAINING_JOB_NAME: name,
      [JOB_ENV.instanceType]: 'local',
    },
    labels: { 'rlvr.local-run': name },
    binds: [
      `${mlRoot}:${CONTAINER.root}`,
      `${runDir}:${CONTAINER.checkpointsDir}`,
      `${plan.source.root}:${CONTAINER.codeDir}:ro`,
      ...binds.map((b) => `${b.host}:${b.container}${b.readOnly ? ':ro' : ''}`),
    ],
    networkMode: plan.options.networkIsolation.value ? 'none' : 'host',
    shmSizeBytes: 16 * 1024 ** 3,
    ...(options.gpus ? { gpus: options.gpus } : {}),
    stopGraceSeconds: STOP_GRACE_SECONDS,
  };
}

/** The job's output goes to the caller's streams and to the run folder's log. */
function teeOutput(out: NodeJS.WritableStream, err: NodeJS.WritableStream, logFile: string) {
  const log = fs.createWriteStream(logFile);
  return {
    sinks: {
      stdout: (d: Buffer) => {
        out.write(d);
        log.write(d);
      },
      stderr: (d: Buffer) => {
        err.write(d);
        log.write(d);
      },
    },
    close: () => new Promise<void>((r) => log.end(() => r())),
  };
}
