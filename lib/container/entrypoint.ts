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
import { CheckpointTracker } from '../checkpoints';
import { RLVR_EVAL_SCRIPT } from '../trainers/rlvr-experiments';
import { LAUNCHER_RUNTIME } from '../trainers/profile';
import type { JobContract } from '../trainers/job-contract';
import { awaitingResults, exposeCheckpoint, rewriteEvalConfig, scriptAccepts } from './eval-watcher';
import { applyWeightsResume, findResumePoint } from './resume';
import {
  checkpointDirs,
  findNewTrainerRunFolder,
  trainerRunFolders,
  type TrainerRunFolder,
} from './run-folder';
import { runToEnd, shellQuote, startProcess, type Started } from './process';

export interface EntrypointOptions {
  /** `/opt/ml`, or a folder standing in for it. */
  readonly root?: string;
  /** `/tmp`, or a folder standing in for it (the trainer's dataset copies, the watcher's view). */
  readonly tmpRoot?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly out?: NodeJS.WritableStream;
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
}

/** Tests only: replaces the contract's eval command. */
export const EVAL_COMMAND_ENV = JOB_ENV.evalCommand;
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

/** Does the config ask for checkpoints? (Jobs submitted without a contract: an interval, not switched off.) */
export function expectsCheckpoints(config: Yaml): boolean {
  const training = (config.training ?? {}) as Yaml;
  const roles = Array.isArray(config.roles) ? (config.roles as Yaml[]) : [];
  const trainer = roles.find((r) => r.kind === 'titan') ?? roles.find((r) => r.name === 'trainer');
  const ckpt = ((trainer?.config as Yaml | undefined)?.checkpoint ?? {}) as Yaml;
  if (ckpt.enable === false) return false;
  return Number(training.checkpoint_interval ?? 0) > 0 || Number(ckpt.interval ?? 0) > 0;
}

/** The job's contract (config channel), or for a job without one: a trainer writing where it is told. */
function readContract(file: string, config: Yaml, evalConfigGiven: boolean): JobContract {
  const shipped = readJson(file) as JobContract | undefined;
  if (shipped) return shipped;
  return {
    trainer: 'custom',
    configName: RUN_FOLDER.config,
    runFolder: LAUNCHER_RUNTIME.runFolder,
    expectCheckpoints: expectsCheckpoints(config),
    resume: { kind: 'none' },
    datasetCaches: [],
    ...(evalConfigGiven ? { eval: { ...RLVR_EVAL_SCRIPT, resultKeys: [] } } : {}),
  };
}

/** A contract path under `/tmp`, moved under the folder standing in for it. */
function underTmp(tmpRoot: string, p: string): string {
  return p === '/tmp' || p.startsWith('/tmp/') ? path.join(tmpRoot, p.slice('/tmp'.length)) : p;
}

export async function runEntrypoint(options: EntrypointOptions = {}): Promise<number> {
  const root = options.root ?? CONTAINER.root;
  const tmpRoot = options.tmpRoot ?? '/tmp';
  const env = options.env ?? process.env;
  const out = options.out ?? process.stdout;
  const say = (line: string) => out.write(`[rlvr] ${line}\n`);
  const failureFile = containerPathUnder(root, CONTAINER.failureFile);
  const modelDir = containerPathUnder(root, CONTAINER.modelDir);
  const runDir = containerPathUnder(root, CONTAINER.checkpointsDir);
  const dataDir = containerPathUnder(root, CONTAINER.dataDir);
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
    instanceType: resource.current_instance_type ?? env[JOB_ENV.instanceType] ?? 'local',
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
    for (const d of [runDir, logsDir, modelDir]) fs.mkdirSync(d, { recursive: true });

    // The trainer's source: the `code` channel's archive, or a folder mounted at /opt/ml/code (local runs).
    const codeDir = containerPathUnder(root, CONTAINER.codeDir);
    const codeChannel = path.join(dataDir, CHANNELS.code);
    if (fs.existsSync(codeChannel)) {
      const archive = fs.readdirSync(codeChannel).find((f) => f.endsWith('.tar.gz'));
      if (!archive) throw new JobFailure(`the code channel ${codeChannel} holds no .tar.gz`);
      const n = await unpackSource(path.join(codeChannel, archive), codeDir);
      say(`unpacked the trainer's source (${n} files, ${archive}) into ${codeDir}`);
    } else if (!fs.existsSync(codeDir) || fs.readdirSync(codeDir).length === 0) {
      throw new JobFailure(`no trainer source: neither a code channel nor files in ${codeDir}`);
    }

    // The config the trainer reads: the launcher's resolved config, under the user's file name (their
    // runtime names the run after it), outside the streamed folder (the trainer copies it into its own).
    const configPath = env[JOB_ENV.config];
    if (!configPath || !fs.existsSync(configPath)) {
      throw new JobFailure(
        `${JOB_ENV.config} (${configPath ?? 'unset'}) names no file: was this job started by rlvr submit?`,
      );
    }
    const config = (parse(fs.readFileSync(configPath, 'utf8')) ?? {}) as Yaml;
    const configChannel = path.join(dataDir, CHANNELS.config);
    const evalConfigPath = primary ? env[JOB_ENV.evalConfig] : undefined;
    const contract = readContract(
      path.join(configChannel, JOB_FILES.contract),
      config,
      Boolean(evalConfigPath),
    );
    runInfo.trainer = contract.trainer;
    const ownFolder = contract.runFolder.kind === 'own' ? contract.runFolder : undefined;
    if (!ownFolder) {
      for (const d of [path.join(runDir, RUN_FOLDER.checkpoints), path.join(runDir, RUN_FOLDER.traces)])
        fs.mkdirSync(d, { recursive: true });
    }

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

    // A restarted job (spot) finds its run folder copied back from S3: keep its earlier attempts and
    // continue from the newest complete checkpoint as far as the trainer can.
    const previous = readJson(runInfoFile);
    const attempts = Array.isArray(previous?.attempts) ? (previous!.attempts as Yaml[]) : [];
    const attempt: Yaml = { startedAt: runInfo.startedAt, host };
    if (previous) {
      if (typeof previous.trainerRun === 'object') runInfo.earlierTrainerRun = previous.trainerRun;
      if (contract.resume.kind === 'weights') {
        const point = findResumePoint(checkpointDirs(runDir, contract));
        if (point) {
          for (const s of point.skipped) say(`restart: ${s.name} is not complete (${s.why}): passed over`);
          const resumed = applyWeightsResume(config, contract.resume, point);
          runInfo.resume = resumed;
          say(`restart: ${resumed.note}, from ${point.checkpoint} (step ${point.step})`);
          for (const [k, v] of Object.entries(resumed.rewritten)) say(`restart: ${k} → ${v.now}`);
        } else {
          runInfo.resume = {
            kind: 'weights',
            from: null,
            note: 'no complete checkpoint: training starts again from the base model',
          };
          say(
            'restart: no complete checkpoint from the earlier attempts: training starts again from the base model',
          );
        }
      } else if (contract.resume.kind === 'none') {
        runInfo.resume = {
          kind: 'none',
          note: `${contract.trainer} cannot resume: training starts again from the base model`,
        };
        say(`restart: ${String((runInfo.resume as Yaml).note)}`);
      } else {
        runInfo.resume = { kind: 'full', note: 'the trainer continues through its own resume mechanism' };
      }
      attempt.resume = runInfo.resume;
    }
    const configText = `# The config this run used (resolved by rlvr submit${runInfo.resume ? '; restart: see run.json resume' : ''}).\n${stringifyForTrainer(config)}`;
    const trainerConfig = path.join(tmpRoot, 'rlvr-trainer-config', contract.configName);
    fs.mkdirSync(path.dirname(trainerConfig), { recursive: true });
    fs.writeFileSync(trainerConfig, configText);
    const ourConfig = path.join(runDir, RUN_FOLDER.config);
    if (primary && !fs.existsSync(ourConfig)) fs.writeFileSync(ourConfig, configText);

    const writeRunInfo = (extra: Record<string, unknown> = {}) =>
      fs.writeFileSync(
        runInfoFile,
        `${JSON.stringify({ ...runInfo, ...extra, attempts: [...attempts, attempt] }, null, 2)}\n`,
      );
    writeRunInfo();

    // Datasets where the trainer's loaders look for a local copy (their /tmp/<name>_<split>_cache).
    const placed: Yaml[] = [];
    for (const d of contract.datasetCaches) {
      const channel = path.join(dataDir, d.channel);
      const target = underTmp(tmpRoot, d.path);
      if (!fs.existsSync(channel)) {
        say(`dataset channel ${d.channel} is not mounted: the trainer will not find ${d.path}`);
        continue;
      }
      if (!fs.existsSync(path.join(channel, d.marker)))
        say(`dataset channel ${d.channel} has no ${d.marker}: the trainer's loader will not take ${d.path}`);
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
        say(`${d.path} exists already (${existing}): left as it is`);
      }
      placed.push({ channel: d.channel, at: d.path });
      say(`dataset ${d.channel} → ${d.path}`);
    }
    if (placed.length) runInfo.datasets = placed;

    const baseEnv: NodeJS.ProcessEnv = {
      ...env,
      [RUNTIME_ENV.host]: host,
      PYTHONUNBUFFERED: '1',
      // A trainer with its own run folder makes it under this variable's folder: the streamed one.
      ...(ownFolder
        ? { [ownFolder.rootEnv]: runDir }
        : {
            [RUNTIME_ENV.runDir]: runDir,
            [RUNTIME_ENV.checkpointDir]: path.join(runDir, RUN_FOLDER.checkpoints),
          }),
    };
    const trainGpus = String(runInfo.trainGpus);
    const evalGpus = String(runInfo.evalGpus);

    // The eval watcher's config: watch the complete-checkpoint view, write results into the run folder.
    const viewDir = path.join(tmpRoot, 'rlvr-eval-view');
    const evalDir = path.join(runDir, RUN_FOLDER.evals);
    let evalCommand: string | undefined;
    const evalContract = contract.eval;
    if (evalConfigPath && evalContract) {
      const evalConfig = (parse(fs.readFileSync(evalConfigPath, 'utf8')) ?? {}) as Yaml;
      const tp = Number(((evalConfig.vllm ?? {}) as Yaml).tensor_parallel_size ?? 1);
      if (tp !== 1) {
        throw new JobFailure(
          `the eval config asks for tensor_parallel_size ${tp}; an eval watcher runs one model copy per GPU with tensor_parallel_size 1 (set vllm.tensor_parallel_size: 1)`,
        );
      }
      if (!evalGpus)
        throw new JobFailure(`an eval config was given but no eval GPUs (${JOB_ENV.evalGpus} is empty)`);
      for (const note of rewriteEvalConfig(evalConfig, evalContract, {
        viewDir,
        outputDir: evalDir,
        pollMaxS: options.evalPollMaxS,
      }))
        say(note);
      fs.mkdirSync(evalDir, { recursive: true });
      fs.mkdirSync(viewDir, { recursive: true });
      const rewritten = path.join(evalDir, JOB_FILES.evalConfig);
      fs.writeFileSync(rewritten, stringifyForTrainer(evalConfig));
      const python = evalConfig.harness === 'olmes' ? CONTAINER.olmesPython : 'python';
      evalCommand = (env[EVAL_COMMAND_ENV] || evalContract.command)
        .replaceAll('{python}', python)
        .replaceAll('{config}', shellQuote(rewritten))
        .replaceAll('{watch}', shellQuote(path.join(viewDir, '*')));
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
    const trainerCommand = commandTemplate.replaceAll('{config}', shellQuote(trainerConfig));
    const foldersBefore = new Set(ownFolder ? trainerRunFolders(runDir, ownFolder.marker) : []);
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

    // Find the run folder the trainer makes for itself, and show the watcher each complete checkpoint.
    let trainerRun: TrainerRunFolder | undefined;
    const lookForRunFolder = () => {
      if (!ownFolder || trainerRun) return;
      trainerRun = findNewTrainerRunFolder(runDir, ownFolder, foldersBefore);
      if (!trainerRun) return;
      runInfo.trainerRun = trainerRun;
      attempt.trainerRun = trainerRun.folder;
      writeRunInfo();
      say(`the trainer's run folder: ${trainerRun.folder} (checkpoints in ${trainerRun.checkpoints})`);
    };
    const tracker = new CheckpointTracker(() => checkpointDirs(runDir, contract), options.stableMs ?? 10_000);
    const exposed: { name: string; path: string }[] = [];
    const expose = (found: { name: string; path: string }[]) => {
      for (const c of found) {
        say(`checkpoint ${c.name} is complete`);
        if (evaluator && evalContract) {
          if (!scriptAccepts(evalContract, c.path)) {
            say(
              `checkpoint ${c.name} is not shown to the eval watcher: it takes only folders with ${evalContract.accepts!.join(' or ')}`,
            );
            continue;
          }
          exposeCheckpoint(viewDir, c.path, c.name);
          exposed.push(c);
        }
      }
    };
    const poll = setInterval(() => {
      lookForRunFolder();
      expose(tracker.scan());
    }, options.pollMs ?? 5000);

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
    lookForRunFolder();
    if (ownFolder && !trainerRun)
      say(`the trainer made no run folder with ${ownFolder.marker} under ${runDir}`);
    // Training is over: nothing grows any more, so a folder whose weights are whole is final.
    expose(tracker.scan(true));
    const thisAttempt = (c: { path: string }) =>
      !ownFolder ||
      (trainerRun !== undefined && c.path.startsWith(path.join(runDir, trainerRun.folder) + path.sep));
    const checkpoints = tracker.complete().filter(thisAttempt);
    const names = checkpoints.map((c) => c.name);

    let evalResult:
      { code: number | null; timedOut: boolean; evaluated: string[]; missing: string[] } | undefined;
    if (evaluator && evalContract) {
      fs.writeFileSync(path.join(viewDir, EVAL_DONE_FILE), `${new Date().toISOString()}\n`);
      // After SIGTERM, only what is left of the one grace period (SageMaker kills at 120 s).
      const timeoutMs = stopping
        ? Math.max(0, stopRequestedAt + graceMs - Date.now())
        : (options.evalFinalTimeoutMs ??
          (Number(env[JOB_ENV.evalWait]) > 0 ? Number(env[JOB_ENV.evalWait]) * 1000 : 30 * 60_000));
      // This attempt's checkpoints: an earlier attempt's watcher may have marked one seen and been stopped
      // before its results, and their script never takes a seen checkpoint again.
      const mine = exposed.filter(thisAttempt).map((c) => c.name);
      say(
        `training ended: the eval watcher has ${Math.round(timeoutMs / 1000)} s to evaluate ${mine.length} checkpoint(s)`,
      );
      const waiting = () =>
        evalContract.ends === 'never' ? awaitingResults(mine, evalDir, evalContract).length > 0 : true;
      const deadline = Date.now() + timeoutMs;
      while (
        waiting() &&
        Date.now() < deadline &&
        evaluator.child.exitCode === null &&
        evaluator.child.signalCode === null
      )
        await Promise.race([
          evaluator.exited,
          new Promise((r) => setTimeout(r, Math.min(options.pollMs ?? 5000, 1000))),
        ]);
      const missing = awaitingResults(mine, evalDir, evalContract);
      const timedOut = missing.length > 0 && Date.now() >= deadline;
      const stopped = await stopProcess(evaluator, stopping ? 0 : (options.evalTermGraceMs ?? 10_000));
      evalResult = {
        code: stopped.code,
        timedOut,
        evaluated: mine.filter((n) => !missing.includes(n)),
        missing,
      };
      say(
        `eval watcher stopped: evaluated ${evalResult.evaluated.join(', ') || 'nothing'}${missing.length ? `; no results for ${missing.join(', ')}${timedOut ? ' (time ran out)' : ''}` : ''}`,
      );
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
    const finalCkpt = checkpoints.find((c) => c.name.endsWith('_final')) ?? last;
    const summary = {
      status: '' as string,
      trainerExitCode: trainerCode,
      stopped: stopping,
      killedAfterGrace,
      trainerRun: trainerRun?.folder ?? null,
      checkpoints: names,
      lastCheckpoint: finalCkpt?.path ?? null,
      ...(runInfo.resume ? { resume: runInfo.resume } : {}),
      eval: evalResult
        ? {
            exitCode: evalResult.code,
            timedOut: evalResult.timedOut,
            evaluated: evalResult.evaluated,
            missing: evalResult.missing,
          }
        : null,
      endedAt: new Date().toISOString(),
    };

    let failure: JobFailure | undefined;
    if (trainerCode !== 0 && !stopping) {
      failure = new JobFailure(
        `trainer exited with code ${trainerCode}${result.signal ? ` (${result.signal})` : ''}`,
        trainer.tail.get(),
      );
    } else if (!stopping && contract.expectCheckpoints && checkpoints.length === 0) {
      const where = ownFolder
        ? trainerRun
          ? path.join(runDir, trainerRun.checkpoints)
          : `a run folder under ${runDir}`
        : path.join(runDir, RUN_FOLDER.checkpoints);
      failure = new JobFailure(
        `the trainer exited 0 but wrote no complete checkpoint into ${where}, though the config asks for checkpoints; failing the job so it cannot complete without them`,
        trainer.tail.get(),
      );
    }
    summary.status = failure ? 'Failed' : stopping ? 'Stopped' : 'Completed';
    fs.writeFileSync(path.join(runDir, own(RUN_FOLDER.summary)), `${JSON.stringify(summary, null, 2)}\n`);
    attempt.endedAt = summary.endedAt;
    attempt.status = summary.status;
    writeRunInfo({ endedAt: summary.endedAt, status: summary.status, exitCode: failure ? 1 : trainerCode });
    copySmallArtifacts(runDir, modelDir, [
      RUN_FOLDER.config,
      own(RUN_FOLDER.runInfo),
      RUN_FOLDER.results,
      own(RUN_FOLDER.summary),
    ]);
    if (failure) throw failure;
    say(
      `${summary.status}: ${checkpoints.length} checkpoint(s)${finalCkpt ? `, last ${finalCkpt.name}` : ''}`,
    );
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

/** SIGTERM, and SIGKILL `termGraceMs` later (at once when 0); resolves when it has exited. */
async function stopProcess(p: Started, termGraceMs: number): Promise<{ code: number | null }> {
  signalGroup(p, termGraceMs > 0 ? 'SIGTERM' : 'SIGKILL');
  const killTimer = setTimeout(() => signalGroup(p, 'SIGKILL'), termGraceMs);
  const { code } = await p.exited;
  clearTimeout(killTimer);
  return { code };
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
