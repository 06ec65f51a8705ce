/**
 * Preparing a job inside the container, before anything starts: where things are (the container
 * contract), the trainer's source, the config and the job's trainer contract, our files in the
 * run folder, a restart's resume, the config the trainer reads, and the datasets where its loaders look.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parse } from 'yaml';
import { stringifyForTrainer } from '../config';
import {
  CHANNELS,
  CONTAINER,
  CONTAINER_CONFIG_FILES,
  containerPathUnder,
  JOB_ENV,
  JOB_FILES,
  PATCH_FILES,
  RUN_FOLDER,
  RUNTIME_ENV,
  workerFileName,
} from '../layout';
import type { JobContract } from '../trainers';
import { clusterOf, type ClusterHosts } from './cluster';
import { applyWeightsResume, findResumePoint } from './resume';
import { checkpointDirs } from './run-folder';
import { sharedJobFolder, type SharedJobFolder } from './shared-run';
import { extractTarGz, readJsonFile, UnsafeEntryError } from '../util';

export type Yaml = Record<string, unknown>;

/** A failure of the job itself: its message goes into /opt/ml/output/failure with the log's last lines. */
export class JobFailure extends Error {
  constructor(
    message: string,
    readonly tail: readonly string[] = [],
  ) {
    super(message);
  }
}

export function readJson(file: string): Record<string, unknown> | undefined {
  return readJsonFile<Record<string, unknown> | undefined>(file, undefined);
}

/** Where everything is for this job, on this host; `runInfo` becomes our run.json. */
export interface ContainerJob {
  readonly env: NodeJS.ProcessEnv;
  readonly say: (line: string) => void;
  /** Where the processes' prefixed output goes (SageMaker sends stdout to CloudWatch). */
  readonly out: NodeJS.WritableStream;
  readonly tmpRoot: string;
  readonly runDir: string;
  readonly dataDir: string;
  readonly modelDir: string;
  readonly logsDir: string;
  readonly codeDir: string;
  readonly configChannel: string;
  readonly failureFile: string;
  readonly host: string;
  /** Multi-host jobs: the hosts, the head, this host's part. */
  readonly cluster: ClusterHosts | undefined;
  /** The head of a multi-host job, or the one host: it runs the trainer and writes the shared files. */
  readonly primary: boolean;
  readonly instanceType: string;
  /** resourceconfig.json's `network_interface_name`: the interface of this host NCCL and Gloo use. */
  readonly networkInterface: string | undefined;
  /**
   * A file of this host's own: hosts share one checkpoint prefix, so a worker's files carry its name;
   * the head's (or the one host's) are the job's.
   */
  readonly own: (name: string) => string;
  readonly runInfoFile: string;
  readonly runInfo: Record<string, unknown>;
  readonly trainGpus: string;
  readonly evalGpus: string;
  /**
   * The job's folder on the file system all hosts share (the `shared` channel), when it has one: the
   * trainer's run root and its profile's shared folder are there on every host (shared-run.ts).
   */
  readonly shared: SharedJobFolder | undefined;
}

export function describeContainer(options: {
  readonly root: string;
  readonly tmpRoot: string;
  readonly env: NodeJS.ProcessEnv;
  readonly out: NodeJS.WritableStream;
}): ContainerJob {
  const { root, env } = options;
  const runDir = containerPathUnder(root, CONTAINER.checkpointsDir);
  const dataDir = containerPathUnder(root, CONTAINER.dataDir);
  const inputConfig = containerPathUnder(root, CONTAINER.inputConfigDir);
  const resource = readJson(path.join(inputConfig, CONTAINER_CONFIG_FILES.resources)) ?? {};
  // The channels SageMaker mounted, recorded in run.json (the launcher's inputs as the job saw them).
  const channels = Object.keys(
    readJson(path.join(inputConfig, CONTAINER_CONFIG_FILES.inputData)) ?? {},
  ).sort();
  const hosts = Array.isArray(resource.hosts) ? (resource.hosts as string[]) : [];
  const host = typeof resource.current_host === 'string' ? resource.current_host : os.hostname();
  const cluster = clusterOf(resource, host);
  const multi = cluster !== undefined;
  const instanceType = String(resource.current_instance_type ?? env[JOB_ENV.instanceType] ?? 'local');
  // The head's files are the job's (run.json, summary.json, the trainer's log); a worker's carry its name.
  const own = (name: string) => (!multi || cluster.isHead ? name : workerFileName(name, host));
  const jobName = env.TRAINING_JOB_NAME ?? env[JOB_ENV.runName] ?? 'local';
  const shared = channels.includes(CHANNELS.shared)
    ? sharedJobFolder(path.join(dataDir, CHANNELS.shared), jobName)
    : undefined;
  const trainGpus = (env[JOB_ENV.trainGpus] ?? '').trim();
  const evalGpus = (env[JOB_ENV.evalGpus] ?? '').trim();
  return {
    env,
    say: (line) => options.out.write(`[rlvr] ${line}\n`),
    out: options.out,
    tmpRoot: options.tmpRoot,
    runDir,
    dataDir,
    modelDir: containerPathUnder(root, CONTAINER.modelDir),
    logsDir: path.join(runDir, RUN_FOLDER.logs),
    codeDir: containerPathUnder(root, CONTAINER.codeDir),
    configChannel: path.join(dataDir, CHANNELS.config),
    failureFile: containerPathUnder(root, CONTAINER.failureFile),
    host,
    cluster,
    primary: !cluster || cluster.isHead,
    instanceType,
    networkInterface:
      typeof resource.network_interface_name === 'string' && resource.network_interface_name
        ? resource.network_interface_name
        : undefined,
    own,
    runInfoFile: path.join(runDir, own(RUN_FOLDER.runInfo)),
    trainGpus,
    evalGpus,
    shared,
    runInfo: {
      job: jobName,
      run: env[JOB_ENV.runName],
      host,
      hostname: os.hostname(),
      hosts,
      instanceType,
      ...(cluster ? { role: cluster.isHead ? 'head' : 'worker' } : {}),
      channels,
      ...(shared ? { sharedFolder: shared.root } : {}),
      image: env[JOB_ENV.image] ?? null,
      submitId: env[JOB_ENV.submitId] ?? null,
      sourceSha256: env[JOB_ENV.sourceSha256] ?? null,
      gitCommit: null as string | null,
      trainGpus,
      evalGpus,
      startedAt: new Date().toISOString(),
    },
  };
}

/**
 * The trainer's source: the `code` channel's archive, unpacked only once its SHA-256 is the one the
 * launcher submitted (RLVR_SOURCE_SHA256: an archive replaced in S3 after submit fails the job), or a
 * folder mounted at /opt/ml/code (local runs).
 */
export async function prepareCode(job: ContainerJob): Promise<void> {
  const codeChannel = path.join(job.dataDir, CHANNELS.code);
  if (fs.existsSync(codeChannel)) {
    const archive = fs.readdirSync(codeChannel).find((f) => f.endsWith('.tar.gz'));
    if (!archive) throw new JobFailure(`the code channel ${codeChannel} holds no .tar.gz`);
    const file = path.join(codeChannel, archive);
    await checkSourceDigest(file, job.env[JOB_ENV.sourceSha256]);
    const n = await unpackSource(file, job.codeDir);
    job.say(`unpacked the trainer's source (${n} files, ${archive}, sha256 verified) into ${job.codeDir}`);
  } else if (!fs.existsSync(job.codeDir) || fs.readdirSync(job.codeDir).length === 0) {
    throw new JobFailure(`no trainer source: neither a code channel nor files in ${job.codeDir}`);
  }
}

/** The archive's SHA-256 against the one submitted; a mismatch or no digest at all fails the job. */
async function checkSourceDigest(file: string, expected: string | undefined): Promise<void> {
  const want = (expected ?? '').trim().toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(want)) {
    throw new JobFailure(
      `${JOB_ENV.sourceSha256} is ${expected === undefined ? 'not set' : `"${expected}", not a SHA-256`}: ` +
        `the trainer's source cannot be verified, so it is not unpacked (was this job started by rlvr submit?)`,
    );
  }
  const hash = createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  const got = hash.digest('hex');
  if (got !== want) {
    throw new JobFailure(
      `the trainer's source archive ${path.basename(file)} has SHA-256 ${got}, not the ${want} submitted ` +
        `(${JOB_ENV.sourceSha256}): it was changed after submit, so it is not unpacked. Submit the job again.`,
    );
  }
}

/**
 * The source archive into `dest`: files and symlinks; an absolute name, a `..`, an entry or symlink
 * reaching outside, a device or fifo entry fails the job.
 */
async function unpackSource(archive: string, dest: string): Promise<number> {
  try {
    const files = await extractTarGz(fs.createReadStream(archive), dest, { symlinks: true, unsafe: 'fail' });
    return files.length;
  } catch (err) {
    if (err instanceof UnsafeEntryError) throw new JobFailure(`the trainer's source archive: ${err.message}`);
    throw err;
  }
}

/** The resolved config and the job's trainer contract (both written by the launcher). */
export function readJobInputs(job: ContainerJob): {
  config: Yaml;
  contract: JobContract;
  evalConfigPath: string | undefined;
} {
  const configPath = job.env[JOB_ENV.config];
  if (!configPath || !fs.existsSync(configPath)) {
    throw new JobFailure(
      `${JOB_ENV.config} (${configPath ?? 'unset'}) names no file: was this job started by rlvr submit?`,
    );
  }
  const config = (parse(fs.readFileSync(configPath, 'utf8')) ?? {}) as Yaml;
  const evalConfigPath = job.primary ? job.env[JOB_ENV.evalConfig] : undefined;
  const contractFile = path.join(job.configChannel, JOB_FILES.contract);
  const contract = readJson(contractFile) as JobContract | undefined;
  if (!contract) throw new JobFailure(`${contractFile} is missing: was this job started by rlvr submit?`);
  job.runInfo.trainer = contract.trainer;
  if (contract.acknowledged) job.runInfo.acknowledged = contract.acknowledged;
  // The forecast the job was given, beside what happens (the attempts' times): later forecasts read it.
  if (contract.forecast) job.runInfo.forecast = contract.forecast;
  // A job mounting the shared file system records whether it ran isolated, and why.
  if (contract.networkIsolation) job.runInfo.networkIsolation = contract.networkIsolation;
  return { config, contract, evalConfigPath };
}

function copyTree(src: string, dest: string): void {
  if (!fs.existsSync(src)) return;
  fs.mkdirSync(dest, { recursive: true });
  for (const e of fs.readdirSync(src, { withFileTypes: true })) {
    const s = path.join(src, e.name);
    const d = path.join(dest, e.name);
    if (e.isDirectory()) copyTree(s, d);
    else if (e.isFile()) fs.copyFileSync(s, d);
  }
}

/** Our files in the run folder: its folders, the source state (patches/), RESULTS.md. */
export function writeOurFiles(job: ContainerJob, contract: JobContract): void {
  for (const d of [job.runDir, job.logsDir, job.modelDir]) fs.mkdirSync(d, { recursive: true });
  if (job.shared) {
    for (const d of [job.shared.runRoot, job.shared.folder]) fs.mkdirSync(d, { recursive: true });
  }
  if (contract.runFolder.kind === 'launcher') {
    for (const d of [RUN_FOLDER.checkpoints, RUN_FOLDER.traces])
      fs.mkdirSync(path.join(trainerRunRoot(job), d), { recursive: true });
  }
  const commitFile = path.join(job.configChannel, JOB_FILES.patchesDir, PATCH_FILES.commit);
  if (fs.existsSync(commitFile)) job.runInfo.gitCommit = fs.readFileSync(commitFile, 'utf8').trim() || null;
  if (!job.primary) return;
  copyTree(path.join(job.configChannel, JOB_FILES.patchesDir), path.join(job.runDir, RUN_FOLDER.patches));
  const results = path.join(job.runDir, RUN_FOLDER.results);
  if (!fs.existsSync(results)) {
    fs.writeFileSync(
      results,
      `# ${String(job.env[JOB_ENV.runName] ?? 'run')} — ${String(job.runInfo.job)}\n\nNotes on this run: what it tests, what happened, what the evals say.\n`,
    );
  }
}

/** This attempt and the earlier ones (a restarted job finds its run.json copied back from S3). */
export interface Attempts {
  readonly earlier: readonly Yaml[];
  readonly current: Yaml;
}

/**
 * A restart continues from the newest complete checkpoint as far as the trainer can (`weights`: the
 * policy's load paths and the step counter in `config`), and says so in run.json.
 */
export function planRestart(job: ContainerJob, contract: JobContract, config: Yaml): Attempts {
  const previous = readJson(job.runInfoFile);
  const earlier = Array.isArray(previous?.attempts) ? (previous!.attempts as Yaml[]) : [];
  const current: Yaml = { startedAt: job.runInfo.startedAt, host: job.host };
  if (!previous) return { earlier, current };
  if (typeof previous.trainerRun === 'object') job.runInfo.earlierTrainerRun = previous.trainerRun;
  const fromBase = 'training starts again from the base model';
  let resume: Yaml;
  if (contract.resume.kind === 'weights') {
    const point = findResumePoint(checkpointDirs(job.runDir, contract));
    if (point) {
      for (const s of point.skipped) job.say(`restart: ${s.name} is not complete (${s.why}): passed over`);
      const resumed = applyWeightsResume(config, contract.resume, point);
      job.say(`restart: ${resumed.note}, from ${point.checkpoint} (step ${point.step})`);
      for (const [k, v] of Object.entries(resumed.rewritten)) job.say(`restart: ${k} → ${v.now}`);
      resume = resumed;
    } else {
      resume = { kind: 'weights', from: null, note: `no complete checkpoint: ${fromBase}` };
      job.say(`restart: no complete checkpoint from the earlier attempts: ${fromBase}`);
    }
  } else if (contract.resume.kind === 'none') {
    // Starting over would train again from the base model, paid again, over what the earlier attempts
    // saved: fail loudly instead, with the earlier checkpoints kept.
    const kept = checkpointDirs(job.runDir, contract).flatMap((d) =>
      fs.existsSync(d) ? fs.readdirSync(d).map((n) => path.relative(job.runDir, path.join(d, n))) : [],
    );
    throw new JobFailure(
      `restart: ${contract.trainer} cannot resume (its profile says resume: none), so this restart would train again from the base model; failing instead. ` +
        `The earlier attempts' files stay in the run folder${kept.length ? ` (${kept.slice(0, 5).join(', ')}${kept.length > 5 ? ', …' : ''})` : ''}. ` +
        `Submit a new job to train again, or declare how it resumes (resume and runtime.resume_with in rlvr-trainers.yaml).`,
    );
  } else {
    resume = { kind: 'full', note: 'the trainer continues through its own resume mechanism' };
  }
  job.runInfo.resume = resume;
  current.resume = resume;
  return { earlier, current };
}

/** run.json: this host's record of the job, with every attempt. */
export function writeRunInfo(job: ContainerJob, attempts: Attempts, extra: Yaml = {}): void {
  fs.writeFileSync(
    job.runInfoFile,
    `${JSON.stringify({ ...job.runInfo, ...extra, attempts: [...attempts.earlier, attempts.current] }, null, 2)}\n`,
  );
}

/**
 * The config the trainer reads, under the file name the user gave it (their runtime names the run after
 * it), outside the streamed folder (the trainer copies it into its own); our copy in the run folder.
 */
export function writeTrainerConfig(job: ContainerJob, contract: JobContract, config: Yaml): string {
  const configText = `# The config this run used (resolved by rlvr submit${job.runInfo.resume ? '; restart: see run.json resume' : ''}).\n${stringifyForTrainer(config)}`;
  const trainerConfig = path.join(job.tmpRoot, 'rlvr-trainer-config', contract.configName);
  fs.mkdirSync(path.dirname(trainerConfig), { recursive: true });
  fs.writeFileSync(trainerConfig, configText);
  const ours = path.join(job.runDir, RUN_FOLDER.config);
  if (job.primary && !fs.existsSync(ours)) fs.writeFileSync(ours, configText);
  return trainerConfig;
}

/** A contract path under `/tmp`, moved under the folder standing in for it. */
function underTmp(tmpRoot: string, p: string): string {
  return p === '/tmp' || p.startsWith('/tmp/') ? path.join(tmpRoot, p.slice('/tmp'.length)) : p;
}

/** Datasets where the trainer's loaders look for a local copy (their /tmp/<name>_<split>_cache). */
export function placeDatasets(job: ContainerJob, contract: Pick<JobContract, 'datasetCaches'>): void {
  const placed: Yaml[] = [];
  for (const d of contract.datasetCaches) {
    const channel = path.join(job.dataDir, d.channel);
    const target = underTmp(job.tmpRoot, d.path);
    if (!fs.existsSync(channel)) {
      job.say(`dataset channel ${d.channel} is not mounted: the trainer will not find ${d.path}`);
      continue;
    }
    if (!fs.existsSync(path.join(channel, d.marker)))
      job.say(
        `dataset channel ${d.channel} has no ${d.marker}: the trainer's loader will not take ${d.path}`,
      );
    let existing: string | undefined;
    try {
      existing = fs.readlinkSync(target);
    } catch {
      existing = fs.existsSync(target) ? '(a folder)' : undefined;
    }
    if (existing === undefined) {
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.symlinkSync(channel, target);
    } else if (existing !== channel) {
      job.say(`${d.path} exists already (${existing}): left as it is`);
    }
    placed.push({ channel: d.channel, at: d.path });
    job.say(`dataset ${d.channel} → ${d.path}`);
  }
  if (placed.length) job.runInfo.datasets = placed;
}

/**
 * PYTHONPATH with the shipped source's import roots first: the image holds the trainer's dependencies
 * only, so its own packages come from the source this job shipped, for every process that imports them
 * (the trainer, its eval script, and `ray start`, whose workers host the trainer's actors).
 */
export function pythonPath(
  job: ContainerJob,
  contract: Pick<JobContract, 'importRoots'>,
): string | undefined {
  const roots = (contract.importRoots ?? []).map((r) =>
    r === '.' ? job.codeDir : path.join(job.codeDir, r),
  );
  const inherited = (job.env.PYTHONPATH ?? '').split(':').filter((p) => p && !roots.includes(p));
  const all = [...roots, ...inherited];
  return all.length ? all.join(':') : undefined;
}

/**
 * Where the trainer writes its run: the streamed run folder, or with a shared file system the job's run
 * root on it, the same path on every host (the head copies it into the streamed folder).
 */
export function trainerRunRoot(job: ContainerJob): string {
  return job.shared?.runRoot ?? job.runDir;
}

/** What every process gets: a trainer with its own run folder makes it under its run root. */
export function processEnvironment(job: ContainerJob, contract: JobContract): NodeJS.ProcessEnv {
  const rf = contract.runFolder;
  const pythonpath = pythonPath(job, contract);
  if (pythonpath && contract.importRoots?.length)
    job.say(`PYTHONPATH=${pythonpath} (the shipped source's import roots first)`);
  const root = trainerRunRoot(job);
  // The profile's shared folder: on the shared file system when there is one; on one host a folder of
  // its own (their default is under the working directory, the source, which a local run mounts read-only).
  const folder = job.shared?.folder ?? path.join(job.tmpRoot, 'rlvr-shared-folder');
  const sharedFolder = contract.sharedFolder ? { [contract.sharedFolder.env]: folder } : {};
  if (contract.sharedFolder) fs.mkdirSync(folder, { recursive: true });
  if (job.shared)
    job.say(
      `the shared file system: the trainer's run root is ${root}${contract.sharedFolder ? `, $${contract.sharedFolder.env}=${folder}` : ''}`,
    );
  return {
    ...job.env,
    ...(pythonpath ? { PYTHONPATH: pythonpath } : {}),
    [RUNTIME_ENV.host]: job.host,
    PYTHONUNBUFFERED: '1',
    ...sharedFolder,
    ...(rf.kind === 'own'
      ? { [rf.rootEnv]: root }
      : {
          [RUNTIME_ENV.runDir]: root,
          [RUNTIME_ENV.checkpointDir]: path.join(root, RUN_FOLDER.checkpoints),
        }),
  };
}
