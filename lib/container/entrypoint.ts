/**
 * The job's entrypoint inside the image (`train`), on SageMaker and in local Docker alike: turns the
 * container contract (BRIEF §4) into a trainer plus an eval watcher, follows the trainer's run-time
 * contract (the launcher's `contract.json`), keeps the run folder (BRIEF §7) complete, and never lets
 * a job "complete" without the checkpoints its trainer writes (BRIEF §1).
 *
 * The steps, each in its own place: preparing the job (setup.ts), the eval watcher (eval-watcher.ts),
 * watching the run folder while the trainer runs (monitor.ts), and the outcome (here).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONTAINER, JOB_ENV, RUN_FOLDER, RUNTIME_ENV } from '../layout';
import {
  finishEvalWatcher,
  prepareEvalWatcher,
  type EvalOutcome,
  type EvalWatcherPlan,
} from './eval-watcher';
import { RunMonitor } from './monitor';
import { runToEnd, shellQuote, signalGroup, startProcess, waitWithGrace, type Started } from './process';
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
}

/** Tests only: replaces the contract's eval command. */
export const EVAL_COMMAND_ENV = JOB_ENV.evalCommand;
const EVAL_DONE_FILE = '.training-done';
const DEFAULT_EVAL_WAIT_MS = 30 * 60_000;

export async function runEntrypoint(options: EntrypointOptions): Promise<number> {
  const { out } = options;
  const job = describeContainer({
    root: options.root ?? CONTAINER.root,
    tmpRoot: options.tmpRoot ?? '/tmp',
    env: options.env ?? process.env,
    out,
  });
  const { env, say } = job;
  const graceMs = options.graceMs ?? 100_000;
  let trainer: Started | undefined;
  let watcher: Started | undefined;
  let stopRequestedAt: number | undefined;
  const onTerm = () => {
    if (stopRequestedAt !== undefined) return;
    stopRequestedAt = Date.now();
    say('SIGTERM: asking the trainer to stop after its current checkpoint');
    for (const p of [trainer, watcher]) signalGroup(p, 'SIGTERM');
  };
  if (options.signal?.aborted) onTerm();
  options.signal?.addEventListener('abort', onTerm);

  try {
    // 1. Prepare: source, config and contract, our files, a restart's resume, datasets.
    const { contract, attempts, trainerConfig, baseEnv, evalPlan } = await prepareJob(job, options);

    // 2. Start: Ray's head on exactly the train GPUs (their GRPO trainer joins it), the trainer, the watcher.
    const useRay = env[JOB_ENV.useRay] === '1' && job.primary;
    const rayEnv = { ...baseEnv, CUDA_VISIBLE_DEVICES: job.trainGpus };
    if (useRay) await startRay(job, rayEnv);
    const monitor = new RunMonitor({
      runDir: job.runDir,
      contract,
      stableMs: options.stableMs ?? 10_000,
      say,
      onTrainerRun: (run) => {
        job.runInfo.trainerRun = run;
        attempts.current.trainerRun = run.folder;
        writeRunInfo(job, attempts);
      },
    });
    trainer = startTrainer(job, baseEnv, trainerConfig, useRay);
    if (evalPlan) watcher = startWatcher(job, baseEnv, evalPlan);
    if (stopRequestedAt !== undefined) signalGroup(trainer, 'SIGTERM');
    if (evalPlan && watcher) monitor.showTo(evalPlan);

    // 3. Watch the run folder until the trainer ends; after SIGTERM, at most the grace period.
    const poll = setInterval(() => monitor.look(), options.pollMs ?? 5000);
    const result = await waitWithGrace(
      trainer,
      () => stopRequestedAt !== undefined,
      graceMs,
      () => say(`the trainer did not stop within ${graceMs / 1000} s of SIGTERM: killing it`),
    );
    clearInterval(poll);
    const checkpoints = monitor.trainingEnded();

    // 4. The watcher finishes this attempt's checkpoints (bounded), Ray stops.
    const evalOutcome =
      watcher && evalPlan
        ? await finishEvaluation(job, options, {
            watcher,
            plan: evalPlan,
            names: monitor.shownThisAttempt(),
            stopDeadline: stopRequestedAt !== undefined ? stopRequestedAt + graceMs : undefined,
          })
        : undefined;
    if (useRay) await stopRay(job, rayEnv);

    // 5. The outcome.
    return finish(job, attempts, {
      trainer,
      result,
      stopped: stopRequestedAt !== undefined,
      checkpoints,
      trainerRun: monitor.trainerRun,
      expectCheckpoints: contract.expectCheckpoints,
      ownFolder: contract.runFolder.kind === 'own',
      evalOutcome,
    });
  } catch (err) {
    const failure =
      err instanceof JobFailure ? err : new JobFailure(`entrypoint error: ${(err as Error).message}`);
    for (const p of [trainer, watcher]) signalGroup(p, 'SIGKILL');
    writeFailure(job.failureFile, failure);
    say(`FAILED: ${failure.message}`);
    return 1;
  } finally {
    options.signal?.removeEventListener('abort', onTerm);
  }
}

/** Step 1: the code, the config and contract, our files, a restart's resume, datasets, the watcher's plan. */
async function prepareJob(job: ContainerJob, options: EntrypointOptions) {
  await prepareCode(job);
  const { config, contract, evalConfigPath } = readJobInputs(job);
  writeOurFiles(job, contract);
  const attempts = planRestart(job, contract, config);
  const trainerConfig = writeTrainerConfig(job, contract, config);
  writeRunInfo(job, attempts);
  placeDatasets(job, contract);
  const baseEnv = processEnvironment(job, contract);
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
      : (options.evalFinalTimeoutMs ?? envWait ?? DEFAULT_EVAL_WAIT_MS),
    termGraceMs: stopping ? 0 : (options.evalTermGraceMs ?? 10_000),
    pollMs: options.pollMs ?? 5000,
    doneFile: path.join(run.plan.viewDir, EVAL_DONE_FILE),
    say: job.say,
  });
}

async function stopRay(job: ContainerJob, rayEnv: NodeJS.ProcessEnv): Promise<void> {
  await runToEnd('ray stop --force', {
    cwd: job.codeDir,
    env: rayEnv,
    logFile: path.join(job.logsDir, job.own('ray.log')),
    name: 'ray',
    out: job.out,
  });
}

async function startRay(job: ContainerJob, rayEnv: NodeJS.ProcessEnv): Promise<void> {
  const gpus = job.trainGpus ? job.trainGpus.split(',').length : 0;
  const r = await runToEnd(
    `ray start --head --port=6379 --num-gpus=${gpus} --disable-usage-stats --include-dashboard=false`,
    {
      cwd: job.codeDir,
      env: rayEnv,
      logFile: path.join(job.logsDir, job.own('ray.log')),
      name: 'ray',
      out: job.out,
    },
  );
  if (r.code !== 0) throw new JobFailure(`ray start exited with code ${r.code}`, r.tail);
}

function startTrainer(
  job: ContainerJob,
  baseEnv: NodeJS.ProcessEnv,
  trainerConfig: string,
  useRay: boolean,
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
      ...(useRay ? { RAY_ADDRESS: '127.0.0.1:6379' } : {}),
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
  if (trainerCode !== 0 && !r.stopped) {
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
