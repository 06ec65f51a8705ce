/**
 * The job's entrypoint inside the image (`train`), on SageMaker and in local Docker alike: turns the
 * container contract into a trainer plus an eval watcher, follows the trainer's run-time
 * contract (the launcher's `contract.json`), keeps the run folder complete, and never lets
 * a job "complete" without the checkpoints its trainer writes (a job once "completed" with no checkpoint at all).
 *
 * The steps, each in its own place: preparing the job (setup.ts), the eval watcher (eval-watcher.ts),
 * watching the run folder while the trainer runs (monitor.ts), and the outcome (here).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BUILT_IN_DEFAULTS } from '../job-options';
import { CONTAINER, JOB_ENV, RUN_FOLDER, RUNTIME_ENV } from '../layout';
import { EVAL_KIND, kindOfEnvironment, PASSK_KIND, TRAINING_KIND } from '../job-kinds';
import { runPasskBatch } from './passk-batch';
import { containerProgram, programKinds, registerContainerProgram } from './programs';
import {
  finishEvalWatcher,
  prepareEvalWatcher,
  type EvalOutcome,
  type EvalWatcherPlan,
} from './eval-watcher';
import {
  clusterTiming,
  HeadEndpoint,
  platformEnvironment,
  type ClusterTiming,
  type HeadPhase,
} from './cluster';
import { formCluster, rayCommand, runWorker, StoppedWhileJoining, type RayCommand } from './cluster-run';
import { cudaCompatEnvironment } from './cuda-compat';
import { runEvalBatch } from './eval-batch';
import { holdPlatformEnvironment } from './hold-env';
import { RunMonitor } from './monitor';
import { SharedRunMirror, takeOverLeftovers } from './shared-run';
import { shellQuote, signalGroup, startProcess, waitWithGrace, type Started } from './process';
import {
  describeContainer,
  JobFailure,
  placeDatasets,
  planRestart,
  prepareCode,
  processEnvironment,
  readJobInputs,
  writeOurFiles,
  writeRunInfo,
  writeTrainerConfig,
  type ContainerJob,
} from './setup';

export interface EntrypointOptions {
  /** `/opt/ml`, or a folder standing in for it. */
  readonly root?: string;
  /** `/tmp`, or a folder standing in for it (the trainer's dataset copies, the watcher's view). */
  readonly tmpRoot?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** The entrypoint's own output (main.ts: stdout, which SageMaker sends to CloudWatch). */
  readonly out: NodeJS.WritableStream;
  /** After SIGTERM, how long the trainer gets to finish its checkpoint (SageMaker kills at 120 s). */
  readonly graceMs?: number;
  readonly pollMs?: number;
  /** A checkpoint's files must stay unchanged this long before the eval watcher sees it. */
  readonly stableMs?: number;
  /** How long the eval watcher gets to evaluate what is left once training has ended. */
  readonly evalFinalTimeoutMs?: number;
  /** Between the watcher's SIGTERM and its SIGKILL. */
  readonly evalTermGraceMs?: number;
  /** The longest poll interval the watcher is given (seconds; default 10). */
  readonly evalPollMaxS?: number;
  /** Aborted on SIGTERM (stop, spot): the trainer is asked to stop after its current checkpoint. */
  readonly signal?: AbortSignal;
  /** Folders standing in for `/proc` and the image's cuda-compat folder (tests). */
  readonly cudaCompat?: { readonly procRoot?: string; readonly compatDir?: string };
}

/** Tests only: replaces the contract's eval command. */
export const EVAL_COMMAND_ENV = JOB_ENV.evalCommand;
const EVAL_DONE_FILE = '.training-done';

export async function runEntrypoint(options: EntrypointOptions): Promise<number> {
  const { out } = options;
  const job = describeContainer({
    root: options.root ?? CONTAINER.root,
    tmpRoot: options.tmpRoot ?? '/tmp',
    env: options.env ?? process.env,
    out,
  });
  const { env, say } = job;
  // Before any mode: each starts CUDA (the trainer, vLLM, the eval harness), on every host. The
  // environment every child gets is the job's own, so the decision goes into it.
  const compat = cudaCompatEnvironment({ env, ...options.cudaCompat });
  say(compat.note);
  Object.assign(env, compat.env);
  job.runInfo.cudaCompat = { enabled: compat.enabled, note: compat.note };
  const kind = kindOfEnvironment(env);
  const program = kind && containerProgram<EntrypointOptions>(kind);
  if (!program) {
    // A job of a kind this image does not know: an image older than the launcher that submitted it.
    const failure = new JobFailure(
      `${JOB_ENV.mode}=${env[JOB_ENV.mode]}: this image runs no such job kind (it runs ${programKinds().join(', ')}); rebuild the image with the launcher that submitted the job`,
    );
    writeFailure(job.failureFile, failure);
    say(`FAILED: ${failure.message}`);
    return 1;
  }
  return program(job, options);
}

registerContainerProgram(EVAL_KIND, (job, o) => runEvalBatch(job, o.signal));
registerContainerProgram(PASSK_KIND, (job, o) => runPasskBatch(job, o.signal));
registerContainerProgram(TRAINING_KIND, runTraining);

/** A training job: the trainer (and its Ray cluster across hosts), the eval watcher, the outcome. */
async function runTraining(job: ContainerJob, options: EntrypointOptions): Promise<number> {
  const { env, say } = job;
  const useRay = env[JOB_ENV.useRay] === '1';
  const timing = clusterTiming(env);
  const run: Running = {};
  const onTerm = () => {
    if (run.stopRequestedAt !== undefined) return;
    run.stopRequestedAt = Date.now();
    say(
      job.primary
        ? 'SIGTERM: asking the trainer to stop after its current checkpoint'
        : 'SIGTERM: leaving the Ray cluster',
    );
    for (const p of [run.trainer, run.watcher]) signalGroup(p, 'SIGTERM');
  };
  if (options.signal?.aborted) onTerm();
  options.signal?.addEventListener('abort', onTerm);
  const stopping = () => run.stopRequestedAt !== undefined;
  let endpoint: HeadEndpoint | undefined;
  let ended: { phase: HeadPhase; reason?: string } = { phase: 'failed', reason: 'the head ended early' };

  try {
    if (job.cluster && !useRay) {
      throw new JobFailure(
        `${job.cluster.hosts.length} hosts but ${JOB_ENV.useRay} is not 1: nothing would join them into one cluster (submit with rlvr, which refuses this)`,
      );
    }
    // The head's endpoint opens first, so a failure while preparing reaches the workers too.
    if (job.cluster?.isHead) {
      endpoint = await HeadEndpoint.open(
        timing.statusPort,
        job.cluster.hosts.filter((h) => h !== job.host),
        say,
      );
    }
    // 1. Prepare: source, config and contract, our files, a restart's resume, datasets.
    const prepared = await prepareJob(job, options);
    if (job.cluster && !job.cluster.isHead) return await workerHost(job, prepared, timing, stopping);

    const code = await runHead(job, prepared, { options, run, endpoint, timing, useRay, stopping });
    ended = { phase: stopping() ? 'stopped' : 'succeeded' };
    return code;
  } catch (err) {
    const failure =
      err instanceof JobFailure ? err : new JobFailure(`entrypoint error: ${(err as Error).message}`);
    for (const p of [run.trainer, run.watcher]) signalGroup(p, 'SIGKILL');
    writeFailure(job.failureFile, failure);
    say(`FAILED: ${failure.message}`);
    ended = { phase: 'failed', reason: failure.message };
    return 1;
  } finally {
    clearTimeout(run.clusterKill);
    options.signal?.removeEventListener('abort', onTerm);
    await endpoint?.close(ended.phase, ended.reason, Math.max(5000, 5 * timing.pollMs), timing.pollMs);
  }
}

/** Steps 2–5 on the head (or the one host): Ray, the trainer and the watcher, the watch, the outcome. */
async function runHead(
  job: ContainerJob,
  prepared: Prepared,
  ctx: {
    options: EntrypointOptions;
    run: Running;
    endpoint: HeadEndpoint | undefined;
    timing: ClusterTiming;
    useRay: boolean;
    stopping: () => boolean;
  },
): Promise<number> {
  const { options, run, endpoint, timing, useRay, stopping } = ctx;
  const { say } = job;
  const graceMs = options.graceMs ?? 100_000;
  // 2. Start: Ray on exactly the train GPUs (their GRPO trainer joins it), the trainer, the watcher.
  const { contract, attempts, trainerConfig, baseEnv, evalPlan } = prepared;
  const rayEnv = { ...baseEnv, CUDA_VISIBLE_DEVICES: job.trainGpus };
  const ray = rayCommand(job, rayEnv);
  let rayAddress: string | undefined;
  try {
    rayAddress = useRay ? await startRay(job, { ray, endpoint, timing, stopping }) : undefined;
  } catch (err) {
    if (!(err instanceof StoppedWhileJoining)) throw err;
    await ray('ray stop --force');
    return stoppedBeforeTraining(job, attempts);
  }
  const monitor = new RunMonitor({
    runDir: job.runDir,
    contract,
    stableMs: options.stableMs ?? 10_000,
    say,
    onTrainerRun: (trainerRun) => {
      job.runInfo.trainerRun = trainerRun;
      attempts.current.trainerRun = trainerRun.folder;
      writeRunInfo(job, attempts);
    },
  });
  const mirror = job.shared
    ? new SharedRunMirror({
        shared: job.shared,
        runDir: job.runDir,
        contract,
        stableMs: options.stableMs ?? 10_000,
        say,
      })
    : undefined;
  // From the container's start to here is setup a forecast adds to the trainer's own startup.
  attempts.current.trainerStartedAt = new Date().toISOString();
  run.trainer = startTrainer(job, baseEnv, trainerConfig, rayAddress);
  if (evalPlan) run.watcher = startWatcher(job, baseEnv, evalPlan);
  if (stopping()) signalGroup(run.trainer, 'SIGTERM');
  if (evalPlan && run.watcher) monitor.showTo(evalPlan);
  if (endpoint) followWorkers(job, endpoint, timing, run);

  // 3. Watch the run folder until the trainer ends; after SIGTERM, at most the grace period.
  const poll = setInterval(() => {
    mirror?.look();
    monitor.look();
  }, options.pollMs ?? 5000);
  const result = await waitWithGrace(run.trainer, stopping, graceMs, () =>
    say(`the trainer did not stop within ${graceMs / 1000} s of SIGTERM: killing it`),
  );
  clearInterval(poll);
  clearTimeout(run.clusterKill);
  // When training itself ended (before the evaluations the watcher finishes): the actual a forecast of
  // the wall time to the last step is checked against.
  attempts.current.trainerEndedAt = new Date().toISOString();
  // From here workers leave as they hear how the trainer ended: their silence is no loss.
  endpoint?.stopWatching();
  endpoint?.publish(...trainerEnded(result, stopping(), run.clusterFailure));
  // After a SIGTERM the copy gets what is left of the grace period, as the eval watcher does.
  const copied = await mirror?.final(stopping() ? run.stopRequestedAt! + graceMs : undefined);
  const checkpoints = monitor.trainingEnded();

  // 4. The watcher finishes this attempt's checkpoints (bounded), Ray stops.
  const evalOutcome =
    run.watcher && evalPlan
      ? await finishEvaluation(job, options, {
          watcher: run.watcher,
          plan: evalPlan,
          names: monitor.shownThisAttempt(),
          stopDeadline: run.clusterFailure
            ? Date.now()
            : stopping()
              ? run.stopRequestedAt! + graceMs
              : undefined,
        })
      : undefined;
  if (useRay) await ray('ray stop --force');

  // 5. The outcome.
  const code = finish(job, attempts, {
    trainer: run.trainer,
    result,
    stopped: stopping(),
    clusterFailure: run.clusterFailure,
    checkpoints,
    trainerRun: monitor.trainerRun,
    expectCheckpoints: contract.expectCheckpoints,
    ownFolder: contract.runFolder.kind === 'own',
    evalOutcome,
  });
  // Once the summary is written: the job's folder on the shared file system, now in the run folder.
  if (mirror && copied) {
    const removed = copied.ok ? await mirror.removeJobFolder() : copied;
    say(
      removed.ok
        ? "the job's folder on the shared file system is copied into the run folder and removed"
        : `the job's folder on the shared file system is kept (${job.shared!.root}): ${removed.why}`,
    );
  }
  return code;
}

/** SIGTERM before the trainer started (the hosts were still joining): run.json says Stopped. */
function stoppedBeforeTraining(job: ContainerJob, attempts: Prepared['attempts']): number {
  const endedAt = new Date().toISOString();
  attempts.current.endedAt = endedAt;
  attempts.current.status = 'Stopped';
  writeRunInfo(job, attempts, { endedAt, status: 'Stopped', exitCode: 0 });
  job.say('Stopped before the trainer started (the hosts were still joining)');
  return 0;
}

/** The processes of this host and how the run is going. */
interface Running {
  trainer?: Started;
  watcher?: Started;
  stopRequestedAt?: number;
  /** A multi-host job lost or was told of a failed host. */
  clusterFailure?: string;
  clusterKill?: NodeJS.Timeout;
}

/** Between a lost host and SIGKILL: the trainer would hang in a collective with a host gone. */
const CLUSTER_FAILURE_GRACE_MS = 10_000;

/** The head, while the trainer runs: a worker that fails or falls silent fails the job now. */
function followWorkers(job: ContainerJob, endpoint: HeadEndpoint, timing: ClusterTiming, run: Running): void {
  endpoint.publish('running');
  endpoint.onFailure((reason) => {
    if (run.clusterFailure !== undefined) return;
    run.clusterFailure = `cluster: ${reason}`;
    job.say(`${run.clusterFailure}: stopping the trainer`);
    for (const p of [run.trainer, run.watcher]) signalGroup(p, 'SIGTERM');
    run.clusterKill = setTimeout(() => {
      for (const p of [run.trainer, run.watcher]) signalGroup(p, 'SIGKILL');
    }, CLUSTER_FAILURE_GRACE_MS);
  });
  endpoint.watch(timing.lostAfterMs, timing.pollMs);
}

/** What the head tells the workers once its trainer has ended. */
function trainerEnded(
  result: { code: number | null; signal: NodeJS.Signals | null },
  stopped: boolean,
  clusterFailure: string | undefined,
): [HeadPhase, { reason?: string }] {
  if (clusterFailure) return ['failed', { reason: clusterFailure }];
  if (stopped) return ['stopped', {}];
  if (result.code === 0) return ['succeeded', {}];
  return ['failed', { reason: `the trainer exited with code ${result.code ?? result.signal}` }];
}

/** Ray on this host's train GPUs: the head of a multi-host cluster once every host joined, or a one-host head. */
async function startRay(
  job: ContainerJob,
  o: { ray: RayCommand; endpoint: HeadEndpoint | undefined; timing: ClusterTiming; stopping: () => boolean },
): Promise<string> {
  const gpus = job.trainGpus ? job.trainGpus.split(',').length : 0;
  if (job.cluster && o.endpoint) {
    return formCluster({ ...o, job, cluster: job.cluster, gpus, endpoint: o.endpoint });
  }
  const r = await o.ray(
    `ray start --head --port=${o.timing.rayPort} --num-gpus=${gpus} --disable-usage-stats --include-dashboard=false`,
  );
  if (r.code !== 0) throw new JobFailure(`ray start exited with code ${r.code}`, r.tail);
  return `127.0.0.1:${o.timing.rayPort}`;
}

/** A worker host: joins the head's Ray with its train GPUs and ends with the head; its run.json says how. */
async function workerHost(
  job: ContainerJob,
  prepared: Prepared,
  timing: ClusterTiming,
  stopping: () => boolean,
): Promise<number> {
  const ray = rayCommand(job, { ...prepared.baseEnv, CUDA_VISIBLE_DEVICES: job.trainGpus });
  const gpus = job.trainGpus ? job.trainGpus.split(',').length : 0;
  const outcome = await runWorker({ job, cluster: job.cluster!, timing, ray, gpus, stopping });
  const endedAt = new Date().toISOString();
  const { attempts } = prepared;
  attempts.current.endedAt = endedAt;
  attempts.current.status = outcome.status;
  writeRunInfo(job, attempts, {
    endedAt,
    status: outcome.status,
    exitCode: outcome.status === 'Failed' ? 1 : 0,
    ...(outcome.reason ? { reason: outcome.reason } : {}),
  });
  if (outcome.status === 'Failed') throw new JobFailure(outcome.reason ?? 'failed', outcome.tail);
  job.say(`${outcome.status}: this host's part of the job is done`);
  return 0;
}

type Prepared = Awaited<ReturnType<typeof prepareJob>>;

/** Step 1: the code, the config and contract, our files, a restart's resume, datasets, the watcher's plan. */
async function prepareJob(job: ContainerJob, options: EntrypointOptions) {
  await prepareCode(job);
  const { config, contract, evalConfigPath } = readJobInputs(job);
  writeOurFiles(job, contract);
  if (job.shared && job.primary)
    await takeOverLeftovers({
      shared: job.shared,
      runDir: job.runDir,
      contract,
      stableMs: 0,
      say: job.say,
    });
  const attempts = planRestart(job, contract, config);
  const trainerConfig = writeTrainerConfig(job, contract, config);
  writeRunInfo(job, attempts);
  placeDatasets(job, contract);
  // NCCL and Gloo on the interface SageMaker names, one host or many (and EFA where there is one).
  const platform = platformEnvironment(job, job.env);
  for (const n of platform.notes) job.say(`platform: ${n}`);
  const baseEnv = { ...processEnvironment(job, contract), ...platform.env };
  if (contract.holdPlatformEnv) holdPlatformEnvironment(job, baseEnv, platform.held);
  const evalPlan =
    evalConfigPath && contract.eval
      ? prepareEvalWatcher({
          evalConfigPath,
          contract: contract.eval,
          runDir: job.runDir,
          tmpRoot: job.tmpRoot,
          evalGpus: job.evalGpus,
          commandOverride: job.env[EVAL_COMMAND_ENV],
          pollMaxS: options.evalPollMaxS,
          say: job.say,
          fail: (m) => new JobFailure(m),
        })
      : undefined;
  return { contract, attempts, trainerConfig, baseEnv, evalPlan };
}

/**
 * Step 4: the watcher evaluates what this attempt left, bounded: after SIGTERM only what is left of
 * the one grace period (SageMaker kills at 120 s), else the job's eval wait.
 */
function finishEvaluation(
  job: ContainerJob,
  options: EntrypointOptions,
  run: {
    watcher: Started;
    plan: EvalWatcherPlan;
    names: readonly string[];
    stopDeadline: number | undefined;
  },
): Promise<EvalOutcome> {
  const envWait =
    Number(job.env[JOB_ENV.evalWait]) > 0 ? Number(job.env[JOB_ENV.evalWait]) * 1000 : undefined;
  const stopping = run.stopDeadline !== undefined;
  return finishEvalWatcher({
    watcher: run.watcher,
    plan: run.plan,
    names: run.names,
    timeoutMs: stopping
      ? Math.max(0, run.stopDeadline! - Date.now())
      : (options.evalFinalTimeoutMs ?? envWait ?? BUILT_IN_DEFAULTS.eval_wait * 1000),
    termGraceMs: stopping ? 0 : (options.evalTermGraceMs ?? 10_000),
    pollMs: options.pollMs ?? 5000,
    doneFile: path.join(run.plan.viewDir, EVAL_DONE_FILE),
    say: job.say,
  });
}

function startTrainer(
  job: ContainerJob,
  baseEnv: NodeJS.ProcessEnv,
  trainerConfig: string,
  rayAddress: string | undefined,
): Started {
  // The launcher always sets it, from the trainer profile: no trainer is guessed in here.
  const template = job.env[JOB_ENV.trainerCommand];
  if (!template) throw new JobFailure(`${JOB_ENV.trainerCommand} is not set: submit the job with rlvr`);
  const command = template.replaceAll('{config}', shellQuote(trainerConfig));
  job.say(`trainer on GPUs [${job.trainGpus}]: ${command}`);
  return startProcess({
    name: 'trainer',
    command,
    cwd: job.codeDir,
    env: {
      ...baseEnv,
      CUDA_VISIBLE_DEVICES: job.trainGpus,
      [RUNTIME_ENV.role]: 'trainer',
      ...(rayAddress ? { RAY_ADDRESS: rayAddress } : {}),
    },
    logFile: path.join(job.logsDir, job.own('trainer.log')),
    out: job.out,
  });
}

function startWatcher(job: ContainerJob, baseEnv: NodeJS.ProcessEnv, plan: EvalWatcherPlan): Started {
  job.say(`eval watcher on GPUs [${job.evalGpus}]: ${plan.command}`);
  return startProcess({
    name: 'eval',
    command: plan.command,
    cwd: job.codeDir,
    env: {
      ...baseEnv,
      CUDA_VISIBLE_DEVICES: job.evalGpus,
      [RUNTIME_ENV.role]: 'eval',
      [RUNTIME_ENV.evalDoneFile]: path.join(plan.viewDir, EVAL_DONE_FILE),
    },
    logFile: path.join(job.logsDir, job.own('eval.log')),
    out: job.out,
  });
}

/** summary.json, run.json's end, the small files into /opt/ml/model; a failure when the job failed. */
function finish(
  job: ContainerJob,
  attempts: Parameters<typeof writeRunInfo>[1],
  r: {
    trainer: Started;
    result: { code: number | null; signal: NodeJS.Signals | null; killedAfterGrace: boolean };
    stopped: boolean;
    /** A multi-host job's failed or lost host: the job's cause, whatever the trainer's exit. */
    clusterFailure: string | undefined;
    checkpoints: readonly { name: string; path: string }[];
    trainerRun: { folder: string; checkpoints: string } | undefined;
    expectCheckpoints: boolean;
    ownFolder: boolean;
    evalOutcome: EvalOutcome | undefined;
  },
): number {
  const { result, checkpoints } = r;
  const trainerCode = result.code ?? (result.signal ? 128 + (os.constants.signals[result.signal] ?? 0) : 1);
  const finalCkpt = checkpoints.find((c) => c.name.endsWith('_final')) ?? checkpoints[checkpoints.length - 1];
  let failure: JobFailure | undefined;
  if (r.clusterFailure) {
    failure = new JobFailure(r.clusterFailure, r.trainer.tail.get());
  } else if (trainerCode !== 0 && !r.stopped) {
    failure = new JobFailure(
      `trainer exited with code ${trainerCode}${result.signal ? ` (${result.signal})` : ''}`,
      r.trainer.tail.get(),
    );
  } else if (!r.stopped && r.expectCheckpoints && checkpoints.length === 0) {
    const where = r.ownFolder
      ? r.trainerRun
        ? path.join(job.runDir, r.trainerRun.checkpoints)
        : `a run folder under ${job.runDir}`
      : path.join(job.runDir, RUN_FOLDER.checkpoints);
    failure = new JobFailure(
      `the trainer exited 0 but wrote no complete checkpoint into ${where}, though the config asks for checkpoints; failing the job so it cannot complete without them`,
      r.trainer.tail.get(),
    );
  }
  const status = failure ? 'Failed' : r.stopped ? 'Stopped' : 'Completed';
  const endedAt = new Date().toISOString();
  const summary = {
    status,
    trainerExitCode: trainerCode,
    stopped: r.stopped,
    killedAfterGrace: result.killedAfterGrace,
    trainerRun: r.trainerRun?.folder ?? null,
    checkpoints: checkpoints.map((c) => c.name),
    lastCheckpoint: finalCkpt?.path ?? null,
    ...(job.runInfo.resume ? { resume: job.runInfo.resume } : {}),
    eval: r.evalOutcome
      ? {
          exitCode: r.evalOutcome.code,
          timedOut: r.evalOutcome.timedOut,
          evaluated: r.evalOutcome.evaluated,
          missing: r.evalOutcome.missing,
        }
      : null,
    endedAt,
  };
  fs.writeFileSync(
    path.join(job.runDir, job.own(RUN_FOLDER.summary)),
    `${JSON.stringify(summary, null, 2)}\n`,
  );
  attempts.current.endedAt = endedAt;
  attempts.current.status = status;
  writeRunInfo(job, attempts, { endedAt, status, exitCode: failure ? 1 : trainerCode });
  copySmallArtifacts(job.runDir, job.modelDir, [
    RUN_FOLDER.config,
    job.own(RUN_FOLDER.runInfo),
    RUN_FOLDER.results,
    job.own(RUN_FOLDER.summary),
  ]);
  if (failure) throw failure;
  job.say(`${status}: ${checkpoints.length} checkpoint(s)${finalCkpt ? `, last ${finalCkpt.name}` : ''}`);
  return r.stopped ? trainerCode : 0;
}

/** Small files only: checkpoints never go into model.tar.gz (a huge tarball is a known trap). */
function copySmallArtifacts(runDir: string, modelDir: string, names: readonly string[]): void {
  fs.mkdirSync(modelDir, { recursive: true });
  for (const n of names) {
    const src = path.join(runDir, n);
    if (fs.existsSync(src)) fs.copyFileSync(src, path.join(modelDir, n));
  }
}

/** `/opt/ml/output/failure`: one line saying why, then the failing log's last lines (SageMaker keeps 1024 chars). */
function writeFailure(file: string, failure: JobFailure): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tail = failure.tail.length ? `\n--- last lines ---\n${failure.tail.slice(-20).join('\n')}\n` : '\n';
  fs.writeFileSync(file, `${failure.message}${tail}`);
}
