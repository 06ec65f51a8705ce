/**
 * The job's entrypoint inside the image (`train`), on SageMaker and in local Docker alike: turns the
 * container contract (BRIEF §4) into a trainer plus an eval watcher, keeps the run folder (BRIEF §7)
 * complete, and never lets a job "complete" without the checkpoints its config asks for (BRIEF §1).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { parse } from 'yaml';
import { stringifyForTrainer } from '../config/yaml-write';
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
} from '../layout';
import { CheckpointTracker, exposeCheckpoint } from './checkpoints';
import { runToEnd, shellQuote, startProcess, type Started } from './process';

export interface EntrypointOptions {
  /** `/opt/ml`, or a folder standing in for it. */
  readonly root?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly out?: NodeJS.WritableStream;
  /** After SIGTERM, how long the trainer gets to finish its checkpoint (SageMaker kills at 120 s). */
  readonly graceMs?: number;
  readonly pollMs?: number;
  /** A checkpoint's files must stay unchanged this long before the eval watcher sees it. */
  readonly stableMs?: number;
  /** How long the eval watcher gets to finish the final checkpoint once training has ended. */
  readonly evalFinalTimeoutMs?: number;
  /** Where the eval watcher's view of complete checkpoints lives (outside the synced run folder). */
  readonly viewDir?: string;
}

export const DEFAULT_EVAL_COMMAND = '{python} entrypoints/eval_benchmarks.py --config {config}';
export const EVAL_COMMAND_ENV = 'RLVR_EVAL_COMMAND';
const EVAL_DONE_FILE = '.training-done';

class JobFailure extends Error {
  constructor(
    message: string,
    readonly tail: readonly string[] = [],
  ) {
    super(message);
  }
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function parseGpus(text: string | undefined): string {
  return (text ?? '').trim();
}

async function unpackSource(archive: string, dest: string): Promise<number> {
  fs.mkdirSync(dest, { recursive: true });
  let count = 0;
  await new Promise<void>((resolve, reject) => {
    const ex = extract();
    ex.on('entry', (header, stream, next) => {
      const target = path.join(dest, header.name);
      if (!target.startsWith(dest + path.sep)) {
        reject(new Error(`unsafe path in the source archive: ${header.name}`));
        return;
      }
      fs.mkdirSync(path.dirname(target), { recursive: true });
      if (header.type === 'symlink') {
        fs.symlinkSync(header.linkname!, target);
        stream.resume();
        stream.on('end', next);
      } else if (header.type === 'file') {
        const ws = fs.createWriteStream(target, { mode: header.mode ?? 0o644 });
        stream.pipe(ws);
        ws.on('finish', () => {
          count++;
          next();
        });
        ws.on('error', reject);
      } else {
        stream.resume();
        stream.on('end', next);
      }
    });
    ex.on('finish', resolve);
    ex.on('error', reject);
    fs.createReadStream(archive).on('error', reject).pipe(createGunzip()).on('error', reject).pipe(ex);
  });
  return count;
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

type Yaml = Record<string, unknown>;

/** Does the config ask for checkpoints? (An interval, and checkpointing not switched off.) */
export function expectsCheckpoints(config: Yaml): boolean {
  const training = (config.training ?? {}) as Yaml;
  const trainer = trainerRole(config);
  const ckpt = ((trainer?.config as Yaml | undefined)?.checkpoint ?? {}) as Yaml;
  if (ckpt.enable === false) return false;
  return Number(training.checkpoint_interval ?? 0) > 0 || Number(ckpt.interval ?? 0) > 0;
}

function trainerRole(config: Yaml): Yaml | undefined {
  const roles = Array.isArray(config.roles) ? (config.roles as Yaml[]) : [];
  return roles.find((r) => r.kind === 'titan') ?? roles.find((r) => r.name === 'trainer');
}

export async function runEntrypoint(options: EntrypointOptions = {}): Promise<number> {
  const root = options.root ?? CONTAINER.root;
  const env = options.env ?? process.env;
  const out = options.out ?? process.stdout;
  const say = (line: string) => out.write(`[rlvr] ${line}\n`);
  const failureFile = containerPathUnder(root, CONTAINER.failureFile);
  const modelDir = containerPathUnder(root, CONTAINER.modelDir);
  const runDir = containerPathUnder(root, CONTAINER.checkpointsDir);
  const checkpointDir = path.join(runDir, RUN_FOLDER.checkpoints);
  const startedAt = new Date();

  const inputConfig = containerPathUnder(root, CONTAINER.inputConfigDir);
  const resource = readJson(path.join(inputConfig, CONTAINER_CONFIG_FILES.resources)) ?? {};
  // The channels SageMaker mounted, recorded in run.json (the launcher's inputs as the job saw them).
  const channels = Object.keys(
    readJson(path.join(inputConfig, CONTAINER_CONFIG_FILES.inputData)) ?? {},
  ).sort();
  const hosts = Array.isArray(resource.hosts) ? (resource.hosts as string[]) : [];
  const host = typeof resource.current_host === 'string' ? resource.current_host : os.hostname();
  const multi = hosts.length > 1;
  const primary = !multi || host === [...hosts].sort()[0];
  // Hosts share one checkpoint prefix: each host's own files carry its name.
  const own = (name: string) => {
    if (!multi) return name;
    const ext = path.extname(name);
    return `${name.slice(0, name.length - ext.length)}-${host}${ext}`;
  };
  const logsDir = path.join(runDir, RUN_FOLDER.logs);
  const runInfoFile = path.join(runDir, own(RUN_FOLDER.runInfo));
  const runInfo: Record<string, unknown> = {
    job: env.TRAINING_JOB_NAME ?? env[JOB_ENV.runName] ?? 'local',
    run: env[JOB_ENV.runName],
    host,
    hostname: os.hostname(),
    hosts,
    instanceType: resource.current_instance_type ?? env.RLVR_INSTANCE_TYPE ?? 'local',
    channels,
    image: env[JOB_ENV.image] ?? null,
    submitId: env[JOB_ENV.submitId] ?? null,
    sourceSha256: env[JOB_ENV.sourceSha256] ?? null,
    gitCommit: null as string | null,
    trainGpus: parseGpus(env[JOB_ENV.trainGpus]),
    evalGpus: parseGpus(env[JOB_ENV.evalGpus]),
    startedAt: startedAt.toISOString(),
  };

  let trainer: Started | undefined;
  let evaluator: Started | undefined;
  let stopping = false;
  let stopRequestedAt = 0;
  let rayStarted = false;
  const onTerm = () => {
    if (stopping) return;
    stopping = true;
    stopRequestedAt = Date.now();
    say('SIGTERM: asking the trainer to stop after its current checkpoint');
    for (const p of [trainer, evaluator]) signalGroup(p, 'SIGTERM');
  };
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onTerm);

  try {
    for (const d of [runDir, checkpointDir, logsDir, path.join(runDir, RUN_FOLDER.traces), modelDir]) {
      fs.mkdirSync(d, { recursive: true });
    }

    // The trainer's source: the `code` channel's archive, or a folder mounted at /opt/ml/code (local runs).
    const codeDir = containerPathUnder(root, CONTAINER.codeDir);
    const codeChannel = path.join(containerPathUnder(root, CONTAINER.dataDir), CHANNELS.code);
    if (fs.existsSync(codeChannel)) {
      const archive = fs.readdirSync(codeChannel).find((f) => f.endsWith('.tar.gz'));
      if (!archive) throw new JobFailure(`the code channel ${codeChannel} holds no .tar.gz`);
      const n = await unpackSource(path.join(codeChannel, archive), codeDir);
      say(`unpacked the trainer's source (${n} files, ${archive}) into ${codeDir}`);
    } else if (!fs.existsSync(codeDir) || fs.readdirSync(codeDir).length === 0) {
      throw new JobFailure(`no trainer source: neither a code channel nor files in ${codeDir}`);
    }

    // The config the trainer reads: the launcher's resolved config, checkpoints pointed at the run folder.
    const configPath = env[JOB_ENV.config];
    if (!configPath || !fs.existsSync(configPath)) {
      throw new JobFailure(
        `${JOB_ENV.config} (${configPath ?? 'unset'}) names no file: was this job started by rlvr submit?`,
      );
    }
    const config = (parse(fs.readFileSync(configPath, 'utf8')) ?? {}) as Yaml;
    const role = trainerRole(config);
    if (role) {
      const rc = (role.config ??= {}) as Yaml;
      const ckpt = (rc.checkpoint ??= {}) as Yaml;
      ckpt.folder = checkpointDir;
    }
    const configText = `# The config this run used (rlvr entrypoint: checkpoint.folder → the run folder).\n${stringifyForTrainer(config)}`;
    const runConfig = primary
      ? path.join(runDir, RUN_FOLDER.config)
      : path.join(os.tmpdir(), 'rlvr-config.yaml');
    fs.writeFileSync(runConfig, configText);

    const configChannel = path.join(containerPathUnder(root, CONTAINER.dataDir), CHANNELS.config);
    const commitFile = path.join(configChannel, JOB_FILES.patchesDir, PATCH_FILES.commit);
    if (fs.existsSync(commitFile)) runInfo.gitCommit = fs.readFileSync(commitFile, 'utf8').trim() || null;
    if (primary) {
      copyTree(path.join(configChannel, JOB_FILES.patchesDir), path.join(runDir, RUN_FOLDER.patches));
      const results = path.join(runDir, RUN_FOLDER.results);
      if (!fs.existsSync(results)) {
        fs.writeFileSync(
          results,
          `# ${String(env[JOB_ENV.runName] ?? 'run')} — ${String(runInfo.job)}\n\nNotes on this run: what it tests, what happened, what the evals say.\n`,
        );
      }
    }
    // A restarted job (spot) finds its run.json copied back from S3: keep its earlier attempts.
    const previous = readJson(runInfoFile);
    const attempts = Array.isArray(previous?.attempts) ? (previous!.attempts as unknown[]) : [];
    const writeRunInfo = (extra: Record<string, unknown> = {}) =>
      fs.writeFileSync(
        runInfoFile,
        `${JSON.stringify({ ...runInfo, ...extra, attempts: [...attempts, { startedAt: runInfo.startedAt, host }] }, null, 2)}\n`,
      );
    writeRunInfo();

    const baseEnv: NodeJS.ProcessEnv = {
      ...env,
      [RUNTIME_ENV.runDir]: runDir,
      [RUNTIME_ENV.checkpointDir]: checkpointDir,
      [RUNTIME_ENV.host]: host,
      PYTHONUNBUFFERED: '1',
    };
    const trainGpus = String(runInfo.trainGpus);
    const evalGpus = String(runInfo.evalGpus);

    // The eval watcher's config: watch the complete-checkpoint view, write results into the run folder.
    const viewDir = options.viewDir ?? path.join(os.tmpdir(), 'rlvr-eval-view');
    let evalCommand: string | undefined;
    const evalConfigPath = env[JOB_ENV.evalConfig];
    if (evalConfigPath && primary) {
      const evalConfig = (parse(fs.readFileSync(evalConfigPath, 'utf8')) ?? {}) as Yaml;
      const tp = Number(((evalConfig.vllm ?? {}) as Yaml).tensor_parallel_size ?? 1);
      if (tp !== 1) {
        throw new JobFailure(
          `the eval config asks for tensor_parallel_size ${tp}; an eval watcher runs one model copy per GPU with tensor_parallel_size 1 (set vllm.tensor_parallel_size: 1)`,
        );
      }
      if (!evalGpus)
        throw new JobFailure('an eval config was given but no eval GPUs (RLVR_EVAL_GPUS is empty)');
      const watch = (evalConfig.watch ??= {}) as Yaml;
      watch.enable = true;
      watch.local_dir = viewDir;
      delete watch.s3_prefix;
      evalConfig.output_dir = path.join(runDir, RUN_FOLDER.evals);
      fs.mkdirSync(evalConfig.output_dir as string, { recursive: true });
      fs.mkdirSync(viewDir, { recursive: true });
      const rewritten = path.join(runDir, RUN_FOLDER.evals, JOB_FILES.evalConfig);
      fs.writeFileSync(rewritten, stringifyForTrainer(evalConfig));
      const python = evalConfig.harness === 'olmes' ? CONTAINER.olmesPython : 'python';
      evalCommand = (env[EVAL_COMMAND_ENV] || DEFAULT_EVAL_COMMAND)
        .replaceAll('{python}', python)
        .replaceAll('{config}', shellQuote(rewritten));
    }

    // Ray: a head on exactly the train GPUs, before the trainer (their GRPO trainer joins it).
    const useRay = env[JOB_ENV.useRay] === '1' && primary;
    const rayEnv = { ...baseEnv, CUDA_VISIBLE_DEVICES: trainGpus };
    if (useRay) {
      const gpus = trainGpus ? trainGpus.split(',').length : 0;
      const r = await runToEnd(
        `ray start --head --port=6379 --num-gpus=${gpus} --disable-usage-stats --include-dashboard=false`,
        { cwd: codeDir, env: rayEnv, logFile: path.join(logsDir, own('ray.log')), name: 'ray' },
      );
      if (r.code !== 0) throw new JobFailure(`ray start exited with code ${r.code}`, r.tail);
      rayStarted = true;
    }

    // The launcher always sets it, from the trainer profile: no trainer is guessed in here.
    const commandTemplate = env[JOB_ENV.trainerCommand];
    if (!commandTemplate)
      throw new JobFailure(`${JOB_ENV.trainerCommand} is not set: submit the job with rlvr`);
    const trainerCommand = commandTemplate.replaceAll('{config}', shellQuote(runConfig));
    say(`trainer on GPUs [${trainGpus}]: ${trainerCommand}`);
    trainer = startProcess({
      name: 'trainer',
      command: trainerCommand,
      cwd: codeDir,
      env: {
        ...baseEnv,
        CUDA_VISIBLE_DEVICES: trainGpus,
        [RUNTIME_ENV.role]: 'trainer',
        ...(useRay ? { RAY_ADDRESS: '127.0.0.1:6379' } : {}),
      },
      logFile: path.join(logsDir, own('trainer.log')),
      out,
    });
    if (evalCommand) {
      say(`eval watcher on GPUs [${evalGpus}]: ${evalCommand}`);
      evaluator = startProcess({
        name: 'eval',
        command: evalCommand,
        cwd: codeDir,
        env: {
          ...baseEnv,
          CUDA_VISIBLE_DEVICES: evalGpus,
          [RUNTIME_ENV.role]: 'eval',
          [RUNTIME_ENV.evalDoneFile]: path.join(viewDir, EVAL_DONE_FILE),
        },
        logFile: path.join(logsDir, own('eval.log')),
        out,
      });
    }
    if (stopping) signalGroup(trainer, 'SIGTERM');

    // Show the watcher each checkpoint once it is complete.
    const tracker = new CheckpointTracker(checkpointDir, options.stableMs ?? 10_000);
    const expose = (names: string[]) => {
      for (const n of names) {
        say(`checkpoint ${n} is complete`);
        if (evaluator) exposeCheckpoint(viewDir, checkpointDir, n);
      }
    };
    const poll = setInterval(() => expose(tracker.scan()), options.pollMs ?? 5000);

    // Wait for the trainer; after SIGTERM, at most the grace period.
    const graceMs = options.graceMs ?? 100_000;
    let killedAfterGrace = false;
    const result = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const arm = setInterval(() => {
        if (stopping && !timer) {
          timer = setTimeout(() => {
            killedAfterGrace = true;
            say(`the trainer did not stop within ${graceMs / 1000} s of SIGTERM: killing it`);
            signalGroup(trainer, 'SIGKILL');
          }, graceMs);
        }
      }, 100);
      void trainer!.exited.then((r) => {
        clearInterval(arm);
        clearTimeout(timer);
        resolve(r);
      });
    });
    clearInterval(poll);
    // Training is over: nothing grows any more, so whatever is complete now is final.
    const finalTracker = new CheckpointTracker(checkpointDir, 0);
    finalTracker.scan();
    expose(finalTracker.complete().filter((n) => !tracker.complete().includes(n)));
    const checkpoints = finalTracker.complete();

    let evalResult: { code: number | null; timedOut: boolean } | undefined;
    if (evaluator) {
      fs.writeFileSync(path.join(viewDir, EVAL_DONE_FILE), `${new Date().toISOString()}\n`);
      // After SIGTERM, only what is left of the one grace period (SageMaker kills at 120 s).
      const timeoutMs = stopping
        ? Math.max(0, stopRequestedAt + graceMs - Date.now())
        : (options.evalFinalTimeoutMs ?? 30 * 60_000);
      say(
        `training ended: the eval watcher has ${Math.round(timeoutMs / 1000)} s to finish the last checkpoint`,
      );
      evalResult = await waitOrKill(evaluator, timeoutMs, stopping ? 0 : 10_000);
    }
    if (rayStarted) {
      await runToEnd('ray stop --force', {
        cwd: codeDir,
        env: rayEnv,
        logFile: path.join(logsDir, own('ray.log')),
        name: 'ray',
      });
    }

    const trainerCode = result.code ?? (result.signal ? 128 + (os.constants.signals[result.signal] ?? 0) : 1);
    const last = checkpoints.length ? checkpoints[checkpoints.length - 1] : undefined;
    const finalCkpt = checkpoints.find((c) => c.endsWith('_final')) ?? last;
    const summary = {
      status: '' as string,
      trainerExitCode: trainerCode,
      stopped: stopping,
      killedAfterGrace,
      checkpoints,
      lastCheckpoint: finalCkpt ? path.join(checkpointDir, finalCkpt) : null,
      eval: evalResult ? { exitCode: evalResult.code, timedOut: evalResult.timedOut } : null,
      endedAt: new Date().toISOString(),
    };

    let failure: JobFailure | undefined;
    if (trainerCode !== 0 && !stopping) {
      failure = new JobFailure(
        `trainer exited with code ${trainerCode}${result.signal ? ` (${result.signal})` : ''}`,
        trainer.tail.get(),
      );
    } else if (!stopping && expectsCheckpoints(config) && checkpoints.length === 0) {
      failure = new JobFailure(
        `the trainer exited 0 but wrote no checkpoint into ${checkpointDir}, though the config asks for checkpoints; failing the job so it cannot complete without them`,
        trainer.tail.get(),
      );
    }
    summary.status = failure ? 'Failed' : stopping ? 'Stopped' : 'Completed';
    fs.writeFileSync(path.join(runDir, own(RUN_FOLDER.summary)), `${JSON.stringify(summary, null, 2)}\n`);
    writeRunInfo({ endedAt: summary.endedAt, status: summary.status, exitCode: failure ? 1 : trainerCode });
    copySmallArtifacts(runDir, modelDir, [
      RUN_FOLDER.config,
      own(RUN_FOLDER.runInfo),
      RUN_FOLDER.results,
      own(RUN_FOLDER.summary),
    ]);
    if (failure) throw failure;
    say(`${summary.status}: ${checkpoints.length} checkpoint(s)${finalCkpt ? `, last ${finalCkpt}` : ''}`);
    return stopping ? trainerCode : 0;
  } catch (err) {
    const failure =
      err instanceof JobFailure ? err : new JobFailure(`entrypoint error: ${(err as Error).message}`);
    for (const p of [trainer, evaluator]) signalGroup(p, 'SIGKILL');
    writeFailure(failureFile, failure);
    say(`FAILED: ${failure.message}`);
    return 1;
  } finally {
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onTerm);
  }
}

function signalGroup(p: Started | undefined, signal: NodeJS.Signals): void {
  if (!p?.child.pid || p.child.exitCode !== null || p.child.signalCode !== null) return;
  try {
    process.kill(-p.child.pid, signal); // the process group: sh and everything it started
  } catch {
    try {
      p.child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** Waits for `p`; past the timeout, SIGTERM, and SIGKILL `termGraceMs` later (at once when 0). */
async function waitOrKill(
  p: Started,
  timeoutMs: number,
  termGraceMs: number,
): Promise<{ code: number | null; timedOut: boolean }> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    p.exited.then(() => false),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutMs))),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    signalGroup(p, termGraceMs > 0 ? 'SIGTERM' : 'SIGKILL');
    const killTimer = setTimeout(() => signalGroup(p, 'SIGKILL'), termGraceMs);
    await p.exited;
    clearTimeout(killTimer);
  }
  const { code } = await p.exited;
  return { code, timedOut };
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
