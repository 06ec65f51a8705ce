/**
 * `submit --local`: the same job, the same image and the same container contract, on this machine's
 * Docker engine. The /opt/ml tree is prepared on the host, the trainer's source is mounted read-only,
 * channels come from local folders (or from S3 through a local cache), and /opt/ml/checkpoints is the
 * local run folder `results/<config_stem>_<YYYYMMDD-HHMMSS>/`.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AwsClients } from '../aws';
import { RuntimeFailure, UserError } from '../errors';
import type { ProgressOf } from '../progress';
import { connectEngine, type ContainerSpec, type Engine } from '../image';
import { jobUploads, type SubmitPlan } from '../training';
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
  workerFileName,
} from '../layout';
import { fetchObject } from '../transfers';
import { rlvrCacheDir } from '../util';

/**
 * What a local run needs of a job, whichever kind it is (a training submit, a batch evaluation): the
 * files of its config channel, its environment, and where its other channels come from.
 */
export interface LocalJob {
  /** The run folder's name stem (`results/<stem>_<YYYYMMDD-HHMMSS>/`). */
  readonly stem: string;
  readonly instanceCount: number;
  readonly networkIsolation: boolean;
  /** Every host mounts one volume as the `shared` channel (the stack's file system on SageMaker). */
  readonly sharedFileSystem?: boolean;
  readonly environment: Readonly<Record<string, string>>;
  /** The config channel's files, as a SageMaker job gets them under `jobs/<job>/`. */
  readonly configFiles: readonly { readonly file: string; readonly body: string }[];
  /** The trainer's source, mounted read-only at /opt/ml/code. */
  readonly sourceRoot?: string;
  /** The other channels: each a host folder (fetched from S3 through the local cache when needed). */
  binds(aws: AwsClients | undefined): Promise<Bind[]>;
  /** Refuses GPUs the job would use beyond those a host's container gets (bad input). */
  checkGpus?(gpus: readonly number[] | undefined): void;
}

/** A training submit's plan as a local job. */
export function localJobOfPlan(plan: SubmitPlan): LocalJob {
  return {
    stem: path.basename(plan.config.path).replace(/\.ya?ml$/i, ''),
    instanceCount: plan.options.instanceCount.value,
    // A job with the shared file system may have turned isolation off for itself (shared_fs_network_isolation).
    networkIsolation: plan.sharedFileSystem?.networkIsolation.value ?? plan.options.networkIsolation.value,
    sharedFileSystem: plan.sharedFileSystem !== undefined,
    environment: plan.request.Environment ?? {},
    configFiles: jobUploads(plan),
    sourceRoot: plan.source.root,
    binds: (aws) => channelBinds(plan, aws),
    checkGpus: (gpus) => checkGpuSplit(plan, gpus),
  };
}

export interface LocalRunOptions {
  readonly job: LocalJob;
  /** The image to run (a local tag or ID). */
  readonly image: string;
  readonly dockerHost?: string;
  /** Host GPUs given to the container (they appear inside as 0..n-1). */
  readonly gpus?: readonly number[];
  /**
   * False: the GPUs are shared out among the hosts and numbered for the job, but no devices are asked
   * of the engine (an engine without the NVIDIA runtime; tests). Default true.
   */
  readonly gpuDevices?: boolean;
  /** AWS clients, for inputs that are only in S3. */
  readonly aws?: AwsClients;
  /** Where the job's stdout and stderr go: the caller's streams (the library never writes to the process's). */
  readonly out: NodeJS.WritableStream;
  readonly err: NodeJS.WritableStream;
  /** Aborted (Ctrl-C): the job gets SIGTERM, and SIGKILL after SageMaker's grace. */
  readonly signal?: AbortSignal;
  readonly listener?: (event: LocalRunEvent) => void;
  /**
   * Rehearsing a slow or missing host: milliseconds before a host's container starts (`Infinity`: it
   * never does). The other hosts are not told.
   */
  readonly hostDelays?: Readonly<Record<string, number>>;
  /** The folder `results/` is made in (default: the process's working folder). */
  readonly cwd?: string;
  /**
   * Rehearsing a restart (spot, retries): the job runs again in this earlier local run folder, as
   * SageMaker restarts an interrupted job with its checkpoint prefix copied back.
   */
  readonly restartIn?: string;
}

/** What a local run reports as it goes; the CLI decides how to show it. */
export type LocalRunEvent = ProgressOf<'started' | 'stopping' | 'failed' | 'warning'>;

/** Seconds between SIGTERM and SIGKILL when a run is interrupted, as SageMaker gives. */
const STOP_GRACE_SECONDS = 120;

export interface LocalRunResult {
  readonly exitCode: number;
  readonly runDir: string;
  readonly interrupted: boolean;
}

export interface Bind {
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
  return rlvrCacheDir('s3');
}

/** An S3 prefix (or one object) mirrored into the local cache; files already there with the right size are kept. */
export async function cacheFromS3(
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

/** The job's files, exactly as a SageMaker job gets them in its config channel. */
function writeConfigChannel(job: LocalJob, mlRoot: string): void {
  const configChannel = containerPathUnder(mlRoot, channelPath(CHANNELS.config));
  for (const f of job.configFiles) {
    fs.mkdirSync(path.dirname(path.join(configChannel, f.file)), { recursive: true });
    fs.writeFileSync(path.join(configChannel, f.file), f.body);
  }
}

/** Where each channel comes from on this machine. */
async function channelBinds(plan: SubmitPlan, aws: AwsClients | undefined): Promise<Bind[]> {
  const configDir = path.dirname(plan.config.path);
  const bases = [configDir, plan.source.root];
  const binds: Bind[] = [];

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

export async function runLocal(options: LocalRunOptions): Promise<LocalRunResult> {
  const { job } = options;
  const emit = options.listener ?? (() => undefined);
  const engine = await connectEngine(options.dockerHost);
  await checkImage(engine, options.image);
  // One container per host of the job (`--instances` plans it for that many).
  const hosts = Array.from({ length: job.instanceCount }, (_, i) => `algo-${i + 1}`);
  const hostGpus = splitGpus(options.gpus, hosts);
  job.checkGpus?.(hostGpus?.[0]);

  const { name, runDir } = runFolderOf(options);
  const mlRoots = new Map(
    hosts.map((h) => [h, fs.mkdtempSync(path.join(os.tmpdir(), `rlvr-local-ml-${h}-`))]),
  );
  let network: Awaited<ReturnType<Engine['createNetwork']>> | undefined;
  let volume: Awaited<ReturnType<Engine['createVolume']>> | undefined;
  try {
    const binds = await job.binds(options.aws);
    if (job.sharedFileSystem) {
      // A volume of its own, not a folder of the run: the hosts see the head's writes only through it.
      volume = await engine.createVolume(`rlvr-shared-${randomBytes(6).toString('hex')}`, {
        labels: { 'rlvr.local-run': name },
      });
      binds.push({
        host: volume.name,
        container: channelPath(CHANNELS.shared),
        readOnly: false,
        what: 'shared file system',
      });
    }
    fs.mkdirSync(runDir, { recursive: true });
    const nic = localInterface(hosts.length);
    for (const [host, mlRoot] of mlRoots) {
      writeConfigChannel(job, mlRoot);
      writeInputConfig(mlRoot, binds, hosts, host, nic);
    }
    // Hosts of one job share a network of their own, as SageMaker's instances do; with network
    // isolation it has no route out.
    if (hosts.length > 1) {
      // Its own suffix: a restart rehearsal keeps the run's name, and a network left behind keeps its own.
      const suffix = randomBytes(3).toString('hex');
      network = await engine.createNetwork(
        `rlvr-${name.toLowerCase().replace(/[^a-z0-9_.-]/g, '-')}-${suffix}`,
        {
          internal: job.networkIsolation,
          labels: { 'rlvr.local-run': name },
        },
      );
    }
    emit({
      type: 'started',
      name,
      image: options.image,
      binds: binds.map((b) => ({ what: b.what, host: b.host })),
      runDir,
      gpus: options.gpus?.length ?? 0,
      ...(network ? { hosts: { names: hosts, network: network.name } } : {}),
    });
    const log = teeOutput(options.out, options.err, path.join(runDir, RUN_FOLDER.localRunLog));
    // Every host's container is stopped; the run says so once.
    let stopSaid = false;
    const stoppingOnce = () => {
      if (!stopSaid) emit({ type: 'stopping', graceSeconds: STOP_GRACE_SECONDS });
      stopSaid = true;
    };
    let exits: (HostExit | undefined)[];
    try {
      exits = await runHosts(engine, {
        hosts,
        specOf: (host) =>
          containerSpec(options, {
            name,
            host,
            mlRoot: mlRoots.get(host)!,
            runDir,
            binds,
            network: network?.name,
            gpus: hostGpus?.[hosts.indexOf(host)],
          }),
        sinksOf: (host) => (hosts.length > 1 ? log.prefixed(`${host} | `) : log.sinks),
        delays: options.hostDelays ?? {},
        signal: options.signal,
        onStop: stoppingOnce,
      });
    } finally {
      await log.close();
    }
    const ran = exits.filter((e): e is HostExit => e !== undefined);
    const reasons = collectFailures(hosts, mlRoots, runDir);
    if (reasons.length > 0) emit({ type: 'failed', reason: reasons.join('; ') });
    return {
      exitCode: ran.find((e) => e.exitCode !== 0)?.exitCode ?? 0,
      runDir,
      // Ctrl-C, not the other hosts being ended because one could not run.
      interrupted: Boolean(options.signal?.aborted) && ran.some((e) => e.interrupted),
    };
  } catch (e) {
    if (e instanceof UserError || e instanceof RuntimeFailure) throw e;
    throw new RuntimeFailure(`The local run failed: ${(e as Error).message}`, 'LocalRunFailed', { cause: e });
  } finally {
    await network?.remove().catch((err: Error) =>
      emit({
        type: 'warning',
        message: `the run's network ${network!.name} could not be removed (${err.message}): docker network rm ${network!.name}`,
      }),
    );
    await volume?.remove().catch((err: Error) =>
      emit({
        type: 'warning',
        message: `the run's shared volume ${volume!.name} could not be removed (${err.message}): docker volume rm ${volume!.name}`,
      }),
    );
    for (const mlRoot of mlRoots.values()) fs.rmSync(mlRoot, { recursive: true, force: true });
  }
}

/** A new run folder, or the earlier one a restart rehearsal runs in (it keeps its name). */
function runFolderOf(options: LocalRunOptions): { name: string; runDir: string } {
  if (options.restartIn) {
    const runDir = path.resolve(options.cwd ?? process.cwd(), options.restartIn);
    const earlier = fs.existsSync(runDir) ? fs.readdirSync(runDir) : [];
    if (!earlier.some((f) => /^run(-.+)?\.json$/.test(f))) {
      throw new UserError(
        `${runDir} is not the run folder of an earlier local run (it has no run.json): pass the folder a --local run printed.`,
        'NotARunFolder',
      );
    }
    return { name: path.basename(runDir), runDir };
  }
  const name = `${options.job.stem}_${jobNameTimestamp(new Date())}`;
  const runDir = path.resolve(options.cwd ?? process.cwd(), LOCAL.resultsDir, name);
  if (fs.existsSync(runDir))
    throw new UserError(`${runDir} exists already; wait a second and run again.`, 'RunDirExists');
  return { name, runDir };
}

interface HostExit {
  readonly exitCode: number;
  readonly interrupted: boolean;
}

/** After the head's container failed, how long the others get to hear it before they are stopped. */
const HEAD_FAILED_GRACE_MS = 10_000;

/**
 * Every host's container at once. A host whose container cannot run stops the others (nothing is left
 * running when this returns), and when the head's container fails the others are stopped soon after,
 * as SageMaker ends the instances of a failed job.
 */
async function runHosts(
  engine: Engine,
  o: {
    hosts: readonly string[];
    specOf: (host: string) => ContainerSpec;
    sinksOf: (host: string) => { stdout: (d: Buffer) => void; stderr: (d: Buffer) => void };
    delays: Readonly<Record<string, number>>;
    signal: AbortSignal | undefined;
    onStop: () => void;
  },
): Promise<(HostExit | undefined)[]> {
  const all = new AbortController();
  const forward = () => all.abort();
  if (o.signal?.aborted) all.abort();
  o.signal?.addEventListener('abort', forward, { once: true });
  let endOthers: NodeJS.Timeout | undefined;
  try {
    const settled = await Promise.allSettled(
      o.hosts.map(async (host, i) => {
        try {
          const exit = await runHost(engine, {
            host,
            spec: o.specOf(host),
            sinks: o.sinksOf(host),
            delayMs: o.delays[host] ?? 0,
            signal: all.signal,
            onStop: o.onStop,
          });
          if (i === 0 && o.hosts.length > 1 && exit && exit.exitCode !== 0)
            endOthers ??= setTimeout(() => all.abort(), HEAD_FAILED_GRACE_MS);
          return exit;
        } catch (err) {
          all.abort();
          throw err;
        }
      }),
    );
    const rejected = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (rejected) throw rejected.reason;
    return settled.map((r) => (r as PromiseFulfilledResult<HostExit | undefined>).value);
  } finally {
    clearTimeout(endOthers);
    o.signal?.removeEventListener('abort', forward);
  }
}

/** One host's container, after its rehearsal delay (none if the run is interrupted first). */
async function runHost(
  engine: Engine,
  o: {
    host: string;
    spec: ContainerSpec;
    sinks: { stdout: (d: Buffer) => void; stderr: (d: Buffer) => void };
    delayMs: number;
    signal: AbortSignal | undefined;
    onStop: () => void;
  },
): Promise<HostExit | undefined> {
  if (o.delayMs === Infinity) return undefined;
  if (o.delayMs > 0) {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        o.signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, o.delayMs);
      o.signal?.addEventListener('abort', done, { once: true });
    });
  }
  return engine.run(o.spec, {
    ...o.sinks,
    ...(o.signal ? { signal: o.signal } : {}),
    onStop: o.onStop,
  });
}

/** Each host's /opt/ml/output/failure into the run folder (`failure`, `failure-algo-2`, …); their first lines. */
function collectFailures(
  hosts: readonly string[],
  mlRoots: ReadonlyMap<string, string>,
  runDir: string,
): string[] {
  const reasons: string[] = [];
  for (const host of hosts) {
    const failure = containerPathUnder(mlRoots.get(host)!, CONTAINER.failureFile);
    if (!fs.existsSync(failure)) continue;
    // The head's is the job's failure; a worker's carries its host's name, as its other files do.
    const name = host === hosts[0] ? RUN_FOLDER.failure : workerFileName(RUN_FOLDER.failure, host);
    fs.copyFileSync(failure, path.join(runDir, name));
    const first = fs.readFileSync(failure, 'utf8').split('\n')[0];
    reasons.push(hosts.length > 1 ? `${host}: ${first}` : first);
  }
  return reasons;
}

async function checkImage(engine: Engine, image: string): Promise<void> {
  if (!(await engine.exists(image))) {
    throw new UserError(
      `The image ${image} is not in the Docker engine at ${engine.where}. Pull it first, or leave out --image and launcher.image so the run builds the pipeline's image.`,
      'NoLocalImage',
    );
  }
}

/** `--gpus` shared out among the hosts in equal runs (two containers never share a GPU). */
function splitGpus(gpus: readonly number[] | undefined, hosts: readonly string[]): number[][] | undefined {
  if (!gpus) return undefined;
  if (gpus.length % hosts.length !== 0) {
    throw new UserError(
      `--gpus gives ${gpus.length} GPU(s) to ${hosts.length} hosts: each host needs the same number. Pass a multiple of ${hosts.length} GPUs, or change --instances.`,
      'BadGpuSplit',
    );
  }
  const each = gpus.length / hosts.length;
  return hosts.map((_, i) => gpus.slice(i * each, (i + 1) * each));
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

/**
 * The interface the containers of a local run really have, as SageMaker names its hosts' own: `eth0` on
 * the job's own Docker network (several hosts), else `lo`, which every container has whatever its network
 * (the engine's machine may not be this one, so its interfaces cannot be read from here). NCCL and Gloo
 * are pinned to it, so it must exist.
 */
function localInterface(hosts: number): string {
  return hosts > 1 ? 'eth0' : 'lo';
}

/** The /opt/ml/input/config files SageMaker writes: the hosts, the channels, no hyperparameters. */
function writeInputConfig(
  mlRoot: string,
  binds: readonly Bind[],
  hosts: readonly string[],
  current: string,
  networkInterface: string,
): void {
  const inputConfig = containerPathUnder(mlRoot, CONTAINER.inputConfigDir);
  for (const d of [CONTAINER.inputConfigDir, CONTAINER.outputDir, CONTAINER.modelDir]) {
    fs.mkdirSync(containerPathUnder(mlRoot, d), { recursive: true });
  }
  const channels = [CHANNELS.config, ...binds.map((b) => path.basename(b.container))];
  const writeConfig = (file: string, value: unknown) =>
    fs.writeFileSync(path.join(inputConfig, file), JSON.stringify(value));
  writeConfig(CONTAINER_CONFIG_FILES.resources, {
    current_host: current,
    current_group_name: 'homogeneousCluster',
    hosts,
    network_interface_name: networkInterface,
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
  where: {
    name: string;
    host: string;
    mlRoot: string;
    runDir: string;
    binds: readonly Bind[];
    network: string | undefined;
    gpus: readonly number[] | undefined;
  },
): ContainerSpec {
  const { job } = options;
  const { name, mlRoot, runDir, binds } = where;
  return {
    image: options.image,
    cmd: ['train'],
    env: {
      ...job.environment,
      [JOB_ENV.image]: options.image,
      TRAINING_JOB_NAME: name,
      [JOB_ENV.instanceType]: 'local',
    },
    labels: { 'rlvr.local-run': name, 'rlvr.local-host': where.host },
    binds: [
      `${mlRoot}:${CONTAINER.root}`,
      `${runDir}:${CONTAINER.checkpointsDir}`,
      ...(job.sourceRoot ? [`${job.sourceRoot}:${CONTAINER.codeDir}:ro`] : []),
      ...binds.map((b) => `${b.host}:${b.container}${b.readOnly ? ':ro' : ''}`),
    ],
    networkMode: where.network ?? (job.networkIsolation ? 'none' : 'host'),
    ...(where.network ? { hostname: where.host } : {}),
    shmSizeBytes: 16 * 1024 ** 3,
    ...(where.gpus && options.gpuDevices !== false ? { gpus: where.gpus } : {}),
    stopGraceSeconds: STOP_GRACE_SECONDS,
  };
}

/** The job's output goes to the caller's streams and to the run folder's log. */
function teeOutput(out: NodeJS.WritableStream, err: NodeJS.WritableStream, logFile: string) {
  const log = fs.createWriteStream(logFile);
  const flushers: (() => void)[] = [];
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
    /** Sinks that put `prefix` before each line (the hosts of a multi-host run, interleaved). */
    prefixed: (prefix: string) => {
      const lines = (write: (d: Buffer) => void) => {
        let rest = '';
        // A last line without its newline is written when the log closes.
        flushers.push(() => {
          if (rest) write(Buffer.from(`${prefix}${rest}\n`));
          rest = '';
        });
        return (d: Buffer) => {
          const text = rest + d.toString('utf8');
          const end = text.lastIndexOf('\n') + 1;
          rest = text.slice(end);
          if (end > 0) write(Buffer.from(text.slice(0, end).replace(/^(?=.)/gm, prefix)));
        };
      };
      return {
        stdout: lines((d) => {
          out.write(d);
          log.write(d);
        }),
        stderr: lines((d) => {
          err.write(d);
          log.write(d);
        }),
      };
    },
    close: () => {
      for (const flush of flushers) flush();
      return new Promise<void>((r) => log.end(() => r()));
    },
  };
}
