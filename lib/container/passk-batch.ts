/**
 * The image's passk mode (`RLVR_MODE=passk`): a pass@k campaign. Each host runs the repository's pass@k
 * script once per GPU, each process its shard (the plan's argv, with the script's own shard flags). Its
 * output folder is a work folder beside the run folder (/opt/ml/passk-work, not streamed): the files it
 * appends to all job (results, completions, its log) reach the run folder, and so S3, as segments written
 * once each (segments.ts), since SageMaker would send a growing file whole on every sync. A shard whose
 * run folder already has results (a restarted job gets its run folder back; `--continue` brings an
 * earlier campaign's in the `resume` channel) gets its work files rebuilt from the segments and is
 * started with the script's resume arguments, so it skips those prompt ids; a line cut off by a stop is
 * left out, since the script cannot parse it. Prompts finished after the last sealed segment of a killed
 * job are generated again. A failing shard does not stop the others; the job fails at the end naming it.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { finished as streamFinished } from 'node:stream/promises';
import { CONTAINER, PASSK_RESUME_CHANNEL } from '../layout';
import {
  PASSK_DIR,
  PASSK_PLAN_FILE,
  SHARD_RECORD_FILE,
  shardFolder,
  isStreamFile,
  type PasskJobPlan,
  type PlannedShard,
  type ShardAttempt,
  type ShardRecord,
} from '../passk-records';
import { copyFileAtomic, readJsonFile, writeFileAtomic } from '../util';
import { hostIndex, localizer, prepareView } from './eval-batch';
import { runBatchMode } from './batch-mode';
import { shellQuote, signalGroup, startProcess, type Started } from './process';
import { SEGMENT_BOUNDS, SegmentedFile, Segmenter, rebuildWorkFile, streamedFiles } from './segments';
import { JobFailure, placeDatasets, prepareCode, pythonPath, type ContainerJob } from './setup';

const SHARD_LOG = 'shard.log';
/** Beside the run folder (/opt/ml/passk-work): the scripts' output folder, out of what SageMaker streams. */
const PASSK_WORK_DIR = 'passk-work';

function readPlan(job: ContainerJob): PasskJobPlan {
  const file = path.join(job.configChannel, PASSK_PLAN_FILE);
  const plan = readJsonFile<PasskJobPlan | undefined>(file, undefined);
  if (!plan || plan.version !== 1 || !Array.isArray(plan.shards))
    throw new JobFailure(`${file} is missing or not a pass@k plan of version 1 (submit with rlvr passk)`);
  return plan;
}

/**
 * Cuts a file back to its last complete line: a process stopped mid-write leaves half a JSON line, which
 * the script's resume (json.loads on every line) would fail on. Returns the bytes removed.
 */
export function dropPartialLine(file: string): number {
  if (!fs.existsSync(file)) return 0;
  const size = fs.statSync(file).size;
  if (size === 0) return 0;
  const fd = fs.openSync(file, 'r+');
  try {
    const chunk = Buffer.alloc(64 * 1024);
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const n = fs.readSync(fd, chunk, 0, end - start, start);
      const at = chunk.subarray(0, n).lastIndexOf(0x0a);
      if (at >= 0) {
        const keep = start + at + 1;
        if (keep < size) fs.ftruncateSync(fd, keep);
        return size - keep;
      }
      end = start;
    }
    fs.ftruncateSync(fd, 0);
    return size;
  } finally {
    fs.closeSync(fd);
  }
}

/** Complete lines of a file (its finished prompts, for the results file). */
export function countLines(file: string): number {
  if (!fs.existsSync(file)) return 0;
  const fd = fs.openSync(file, 'r');
  try {
    const chunk = Buffer.alloc(1024 * 1024);
    let lines = 0;
    let pos = 0;
    for (;;) {
      const n = fs.readSync(fd, chunk, 0, chunk.length, pos);
      if (n === 0) return lines;
      for (let i = 0; i < n; i++) if (chunk[i] === 0x0a) lines++;
      pos += n;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** A line's prompt id: their records start with it (json.dumps keeps the dict's order). */
const PROMPT_ID = /^\{"prompt_id": ("(?:[^"\\]|\\.)*")/;

function promptIdOf(line: string): string | undefined {
  const m = PROMPT_ID.exec(line);
  if (!m) return undefined;
  try {
    return JSON.parse(m[1]) as string;
  } catch {
    return undefined;
  }
}

async function* linesOf(file: string): AsyncIterable<string> {
  yield* readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
}

/**
 * completions.jsonl as the results file has it: the script writes a prompt's completions before it
 * verifies them, so a stop in between leaves completions the resume generates again (a second line),
 * and a restored folder may hold an older copy of one file than of the other. Kept: the first line of
 * each prompt the results file has. Returns the lines dropped and the results without completions.
 */
export async function alignCompletions(
  resultsFile: string,
  completionsFile: string,
): Promise<{ dropped: number; missing: number }> {
  if (!fs.existsSync(completionsFile) || !fs.existsSync(resultsFile)) return { dropped: 0, missing: 0 };
  const finished = new Set<string>();
  for await (const line of linesOf(resultsFile)) {
    const id = promptIdOf(line);
    if (id !== undefined) finished.add(id);
  }
  const kept = new Set<string>();
  // A fresh name, created exclusively: a link an earlier attempt left at a predictable one is never followed.
  const partial = `${completionsFile}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const out = fs.createWriteStream(partial, { flags: 'wx' });
  let dropped = 0;
  for await (const line of linesOf(completionsFile)) {
    const id = promptIdOf(line);
    if (id === undefined || !finished.has(id) || kept.has(id)) {
      if (line.trim()) dropped++;
      continue;
    }
    kept.add(id);
    if (!out.write(`${line}\n`)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  out.end();
  await streamFinished(out);
  if (dropped > 0) fs.renameSync(partial, completionsFile);
  else fs.rmSync(partial, { force: true });
  return { dropped, missing: finished.size - kept.size };
}

interface Campaign {
  readonly job: ContainerJob;
  readonly plan: PasskJobPlan;
  readonly localize: (text: string) => string;
  readonly running: Set<Started>;
  readonly stopping: () => boolean;
  readonly env: NodeJS.ProcessEnv;
  readonly failed: string[];
  /** The running shards' segmenters: a stop seals what each has complete at once. */
  readonly segmenters: Set<Segmenter>;
}

/** The folder the shards' scripts write in: beside the run folder, not under it (not streamed to S3). */
export function passkWorkRoot(job: Pick<ContainerJob, 'runDir'>): string {
  return path.join(path.dirname(job.runDir), PASSK_WORK_DIR);
}

/**
 * The plan's argv with the script's output folder moved to the work folder: the plan names the run
 * folder's passk/ (older plans too), and every other container path is localized as before. One pass,
 * so a replacement is never replaced again.
 */
export function shardLocalizer(
  job: ContainerJob,
  localize: (text: string) => string,
): (text: string) => string {
  const output = `${CONTAINER.checkpointsDir}/${PASSK_DIR}`;
  const work = passkWorkRoot(job);
  return (text) =>
    text
      .split(output)
      .map((part) => localize(part))
      .join(work);
}

function shardDir(c: Campaign, shard: PlannedShard): string {
  return path.join(c.job.runDir, PASSK_DIR, shardFolder(c.plan.files, shard.index));
}

/** The files a shard's output is streamed by (its results, its completions), relative to its folder. */
function streamedOutputs(plan: PasskJobPlan): string[] {
  return [plan.files.results, plan.files.completions];
}

function hasStream(dir: string, name: string): boolean {
  return streamedFiles(path.join(dir, path.dirname(name)), path.basename(name)).some(
    (f) => fs.statSync(f).size > 0,
  );
}

/** An earlier campaign's output for this shard (its single files or its segments), when this run folder has none of its own. */
function seedFromResume(c: Campaign, shard: PlannedShard, dir: string): void {
  const { results } = c.plan.files;
  if (hasStream(dir, results)) return;
  const earlier = path.join(c.job.dataDir, PASSK_RESUME_CHANNEL, shardFolder(c.plan.files, shard.index));
  if (!hasStream(earlier, results)) return;
  for (const name of streamedOutputs(c.plan)) {
    const to = path.join(dir, path.dirname(name));
    fs.mkdirSync(to, { recursive: true });
    for (const f of streamedFiles(path.join(earlier, path.dirname(name)), path.basename(name)))
      copyFileAtomic(f, path.join(to, path.basename(f)));
  }
  c.job.say(`shard ${shard.index}: continues the earlier campaign's finished prompt(s)`);
}

/** Top-level files of a shard folder that are neither streamed in segments nor ours: the script's small ones. */
function otherFiles(plan: PasskJobPlan, folder: string): string[] {
  const ours = [...streamedOutputs(plan), SHARD_LOG].filter((n) => !n.includes('/'));
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(folder, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isFile() && !e.name.startsWith('.') && e.name !== SHARD_RECORD_FILE)
    .filter((e) => !ours.some((n) => isStreamFile(n, e.name)))
    .map((e) => e.name);
}

/** Copies `names` from one folder to another, each replaced atomically (a sync never sees half of one). */
function copyFiles(from: string, to: string, names: readonly string[]): void {
  for (const name of names) copyFileAtomic(path.join(from, name), path.join(to, name));
}

/**
 * The shard's work folder made again from its run folder: the script's small files copied back, and its
 * results and completions rebuilt from their segments (see segments.ts), so its resume skips what is in
 * them. The bytes of a line cut off by a stop are dropped; returns how many.
 */
function prepareWork(plan: PasskJobPlan, dir: string, work: string): number {
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  copyFiles(dir, work, otherFiles(plan, dir));
  let cut = 0;
  for (const name of streamedOutputs(plan))
    cut += rebuildWorkFile(
      path.join(dir, path.dirname(name)),
      path.basename(name),
      path.join(work, name),
    ).cut;
  return cut;
}

/** The shard's segmenter: results looked at first, completions (written before them) after, the log last. */
function segmenterOf(c: Campaign, dir: string, work: string): Segmenter {
  const files = streamedOutputs(c.plan).map((name) => {
    const to = path.join(dir, path.dirname(name));
    fs.mkdirSync(to, { recursive: true });
    const from = fs.statSync(path.join(work, name)).size;
    return new SegmentedFile(path.join(work, name), to, path.basename(name), { from });
  });
  files.push(new SegmentedFile(path.join(work, SHARD_LOG), dir, SHARD_LOG, { lines: false }));
  let said = false;
  return new Segmenter(files, SEGMENT_BOUNDS, Date.now, (e) => {
    // Said once: the next look tries again, every few seconds.
    if (!said) c.job.say(`could not write a segment in ${dir}: ${(e as Error).message} (tried again)`);
    said = true;
  });
}

function writeAttempt(dir: string, index: number, attempt: ShardAttempt, replaceLast: boolean): void {
  const file = path.join(dir, SHARD_RECORD_FILE);
  const earlier = readJsonFile<ShardRecord | undefined>(file, undefined)?.attempts ?? [];
  const attempts = replaceLast ? [...earlier.slice(0, -1), attempt] : [...earlier, attempt];
  const record: ShardRecord = { index, attempts };
  writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`);
}

/** Rebuilds the work folder and says what its resume found; returns the prompts finished before. */
async function resumeShard(c: Campaign, shard: PlannedShard, dir: string, work: string): Promise<number> {
  const { job, plan } = c;
  const cut = prepareWork(plan, dir, work);
  if (cut > 0) job.say(`shard ${shard.index}: removed a line cut off by the last stop (${cut} bytes)`);
  const aligned = await alignCompletions(
    path.join(work, plan.files.results),
    path.join(work, plan.files.completions),
  );
  if (aligned.dropped > 0)
    job.say(
      `shard ${shard.index}: ${aligned.dropped} completions line(s) without a result dropped (generated again)`,
    );
  if (aligned.missing > 0)
    job.say(
      `shard ${shard.index}: ${aligned.missing} finished prompt(s) have no completions line (an older copy came back): their prompts are not in an SFT set`,
    );
  return countLines(path.join(work, plan.files.results));
}

async function runShard(c: Campaign, shard: PlannedShard): Promise<void> {
  const { job, plan } = c;
  const dir = shardDir(c, shard);
  const work = path.join(passkWorkRoot(job), shardFolder(plan.files, shard.index));
  fs.mkdirSync(dir, { recursive: true });
  seedFromResume(c, shard, dir);
  const earlier = readJsonFile<ShardRecord | undefined>(path.join(dir, SHARD_RECORD_FILE), undefined);
  const last = earlier?.attempts.at(-1);
  if (last?.outcome === 'finished' && fs.existsSync(path.join(dir, plan.files.summary))) {
    // A restart after this shard ended: loading vLLM again would find nothing to do.
    job.say(`shard ${shard.index}: finished in an earlier attempt (${last.promptsAfter} prompt(s)), skipped`);
    return;
  }
  const before = await resumeShard(c, shard, dir, work);
  const results = path.join(work, plan.files.results);
  const argv = [...shard.argv.map(c.localize), ...(before > 0 ? plan.resumeArgs : [])];
  const attempt: ShardAttempt = {
    host: job.host,
    gpu: shard.gpu,
    instanceType: job.instanceType,
    startedAt: new Date().toISOString(),
    promptsBefore: before,
  };
  writeAttempt(dir, shard.index, attempt, false);
  const name = `shard ${shard.index} gpu${shard.gpu}`;
  job.say(`${name}: started${before > 0 ? ` (${before} prompt(s) done earlier are skipped)` : ''}`);
  const segmenter = segmenterOf(c, dir, work);
  const started = startProcess({
    name,
    command: `exec ${argv.map(shellQuote).join(' ')}`,
    cwd: job.codeDir,
    env: { ...c.env, CUDA_VISIBLE_DEVICES: String(shard.gpu) },
    logFile: path.join(work, SHARD_LOG),
    // Its segments are the run folder's copy: the work file itself is not rotated.
    rotate: false,
    out: job.out,
  });
  c.running.add(started);
  c.segmenters.add(segmenter);
  segmenter.start();
  const { code, signal } = await started.exited;
  c.running.delete(started);
  c.segmenters.delete(segmenter);
  segmenter.stop();
  // Everything the script wrote goes into the run folder now: its last lines, its summary and small files.
  segmenter.flush(true);
  copyFiles(work, dir, otherFiles(plan, work));
  const after = countLines(results);
  const outcome = code === 0 ? 'finished' : c.stopping() ? 'stopped' : 'failed';
  writeAttempt(
    dir,
    shard.index,
    { ...attempt, endedAt: new Date().toISOString(), promptsAfter: after, exitCode: code, outcome },
    true,
  );
  if (outcome === 'finished')
    return void job.say(`${name}: done, ${after} prompt(s) (${after - before} now)`);
  if (outcome === 'stopped')
    return void job.say(`${name}: stopped at ${after} prompt(s) (a restart resumes it)`);
  const why = `exit ${code ?? signal}: ${started.tail.get().slice(-3).join(' / ') || 'no output'}`;
  c.failed.push(`shard ${shard.index} (${why.slice(0, 200)})`);
  job.say(`${name}: FAILED (${why}); the other shards go on`);
}

export function runPasskBatch(job: ContainerJob, signal?: AbortSignal): Promise<number> {
  return runBatchMode(
    job,
    signal,
    { name: 'passk', onStop: 'stopping the shards (a restart resumes each from its results file)' },
    async ({ running, stopping }) => {
      const plan = readPlan(job);
      const index = hostIndex(job);
      const mine = plan.shards.filter((s) => s.host === index);
      fs.mkdirSync(path.join(job.runDir, PASSK_DIR), { recursive: true });
      if (index === 0)
        fs.writeFileSync(path.join(job.runDir, PASSK_PLAN_FILE), `${JSON.stringify(plan, null, 2)}\n`);
      const runInfo = {
        ...job.runInfo,
        kind: 'passk',
        campaign: plan.campaignId,
        hostIndex: index,
        shards: mine.map((s) => s.index),
      };
      fs.writeFileSync(job.runInfoFile, `${JSON.stringify(runInfo, null, 2)}\n`);
      await prepareCode(job);
      placeDatasets(job, plan);
      const localize = shardLocalizer(job, localizer(job));
      const problem = prepareView(
        localize(plan.model.containerPath),
        localize(plan.model.modelPath),
        job.say,
        'model',
      );
      if (problem) throw new JobFailure(`the model cannot be loaded: ${problem}`);
      const pythonpath = pythonPath(job, plan);
      const c: Campaign = {
        job,
        plan,
        localize,
        running,
        stopping,
        env: { ...job.env, ...(pythonpath ? { PYTHONPATH: pythonpath } : {}), PYTHONUNBUFFERED: '1' },
        failed: [],
        segmenters: new Set(),
      };
      // A stop seals what each shard has complete at once: SageMaker may end the job before the scripts exit.
      const sealNow = () => {
        for (const s of c.segmenters)
          try {
            s.flush();
          } catch (e) {
            job.say(`could not seal a segment at the stop: ${(e as Error).message}`);
          }
      };
      if (signal?.aborted) sealNow();
      signal?.addEventListener('abort', sealNow);
      job.say(
        `passk: ${mine.length} shard(s) of ${plan.shards.length} on this host (${mine.map((s) => `${s.index}→gpu${s.gpu}`).join(', ')})`,
      );
      // Every shard ends before the job does: one that throws (a full disk) stops the others.
      const ended = await Promise.allSettled(
        mine.map((s) =>
          stopping()
            ? undefined
            : runShard(c, s).catch((err: unknown) => {
                for (const p of running) signalGroup(p, 'SIGTERM');
                throw err;
              }),
        ),
      );
      signal?.removeEventListener('abort', sealNow);
      const thrown = ended.find((e): e is PromiseRejectedResult => e.status === 'rejected');
      if (thrown) throw thrown.reason;
      if (stopping()) {
        job.say('stopped: the finished prompts are in the run folder');
        return 0;
      }
      if (c.failed.length > 0)
        throw new JobFailure(`${c.failed.length} of ${mine.length} shard(s) failed: ${c.failed.join('; ')}`);
      job.say(`passk: ${mine.length} shard(s) done`);
      return 0;
    },
  );
}
