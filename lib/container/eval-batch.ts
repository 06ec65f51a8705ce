/**
 * The image's eval mode (`RLVR_MODE=eval`): a batch evaluation job. No Ray, no trainer:
 * each host takes its share of the plan's units (by its place among the job's hosts), and each of its
 * GPUs runs its units in turn with `CUDA_VISIBLE_DEVICES` set to that GPU. Every unit writes its result
 * folder into the run folder as soon as it ends, so results stream to S3 while the job runs; a failing
 * unit is recorded with its log and does not stop the others; the job fails at the end naming them.
 * A restarted job (spot, retries) skips the units whose records came back with its checkpoints.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { folderVerdict, localCheckpointFiles } from '../checkpoints';
import {
  buildTable,
  EVAL_PLAN_FILE,
  harnessResultsFile,
  listFilesUnder,
  parseUnitRecord,
  readLocalResults,
  tableMarkdown,
  UNIT_FILES,
  type EvalJobPlan,
  type PlannedCheckpoint,
  type PlannedUnit,
  type UnitRecord,
} from '../eval-records';
import { CONTAINER, RUN_FOLDER } from '../layout';
import { readJsonFile, readTextFile, writeFileAtomic } from '../util';
import { runBatchMode } from './batch-mode';
import { shellQuote, startProcess, type Started } from './process';
import { JobFailure, type ContainerJob } from './setup';

/** Hosts in their natural order (`algo-2` before `algo-10`): host i of the plan is the i-th. */
export function hostIndex(job: Pick<ContainerJob, 'cluster' | 'host'>): number {
  if (!job.cluster) return 0;
  const natural = [...job.cluster.hosts].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  return natural.indexOf(job.host);
}

/** A container path as this process sees it (tests run the entrypoint with other roots). */
export function localizer(job: ContainerJob): (text: string) => string {
  const to = new Map<string, string>([
    [CONTAINER.checkpointsDir, job.runDir],
    [CONTAINER.dataDir, job.dataDir],
    ['/tmp/', `${job.tmpRoot.replace(/\/$/, '')}/`],
  ]);
  // One pass: a replacement is never replaced again (a stand-in root may itself be under /tmp).
  const pattern = new RegExp([...to.keys()].map((k) => k.replace(/[/.]/g, '\\$&')).join('|'), 'g');
  return (text) => text.replace(pattern, (m) => to.get(m)!);
}

/**
 * A checkpoint's view: a folder of links to its files, with the known index trap (one file saved as
 * `model.safetensors` while the index names `model-00001-of-00001.safetensors`) fixed in the view,
 * never in the channel or S3. Returns the problem when the folder is not loadable.
 */
export function prepareView(
  folder: string,
  view: string,
  say: (line: string) => void,
  label: string,
): string | undefined {
  if (!fs.existsSync(folder)) return `its folder ${folder} is not in the job`;
  fs.rmSync(view, { recursive: true, force: true });
  fs.mkdirSync(view, { recursive: true });
  for (const entry of fs.readdirSync(folder))
    fs.symlinkSync(path.join(folder, entry), path.join(view, entry));
  const verdict = folderVerdict(localCheckpointFiles(view));
  if (verdict.loadable) return undefined;
  if (!verdict.fix) return verdict.why;
  const { from, to } = verdict.fix.rename;
  fs.renameSync(path.join(view, from), path.join(view, to));
  say(`${label}: ${from} is linked as ${to}, the name its index gives it (in the job's view only)`);
  const after = folderVerdict(localCheckpointFiles(view));
  return after.loadable ? undefined : after.why;
}

interface Batch {
  readonly job: ContainerJob;
  readonly plan: EvalJobPlan;
  readonly localize: (text: string) => string;
  readonly running: Set<Started>;
  readonly stopping: () => boolean;
  /** Checkpoints that cannot be loaded: why. */
  readonly unloadable: Map<string, string>;
  readonly failed: string[];
  readonly counts: { ran: number; skipped: number };
}

function record(
  b: Batch,
  unit: PlannedUnit,
  fields: Partial<UnitRecord> & Pick<UnitRecord, 'exitCode' | 'wallS' | 'startedAt'>,
): void {
  const ck = b.plan.checkpoints.find((c) => c.label === unit.checkpoint)!;
  const rec: UnitRecord = {
    id: unit.id,
    checkpoint: { label: ck.label, id: ck.id, from: ck.from },
    task: unit.task,
    numFewshot: unit.numFewshot,
    harness: b.plan.harness,
    argv: unit.argv,
    deviations: b.plan.deviations,
    host: b.job.host,
    gpu: unit.gpu,
    ...fields,
  };
  const dir = b.localize(path.posix.join(CONTAINER.checkpointsDir, unit.folder));
  // A failure (a reason) is a failed record whatever the exit code (a harness can exit 0 having done nothing).
  const file = fields.failure === undefined ? UNIT_FILES.done(unit.id) : UNIT_FILES.failed(unit.id);
  // Written whole, then renamed: a record in S3 is never half a file.
  writeFileAtomic(path.join(dir, file), `${JSON.stringify(rec, null, 2)}\n`);
}

async function runUnit(b: Batch, unit: PlannedUnit): Promise<void> {
  const { job } = b;
  const dir = b.localize(path.posix.join(CONTAINER.checkpointsDir, unit.folder));
  const name = `gpu${unit.gpu} ${unit.checkpoint}/${unit.task}`;
  const earlier = readTextFile(path.join(dir, UNIT_FILES.done(unit.id)));
  if (earlier !== undefined) {
    const read = parseUnitRecord(earlier);
    if ('record' in read) {
      b.counts.skipped++;
      job.say(`${name}: done in an earlier attempt, skipped`);
      return;
    }
    // A record that is not one proves nothing was done: the unit runs again and rewrites it.
    job.say(`${name}: its record from an earlier attempt is unreadable (${read.problem}); running it again`);
    fs.rmSync(path.join(dir, UNIT_FILES.done(unit.id)), { force: true });
  }
  fs.mkdirSync(dir, { recursive: true });
  fs.rmSync(path.join(dir, UNIT_FILES.failed(unit.id)), { force: true });
  const startedAt = new Date();
  const unloadable = b.unloadable.get(unit.checkpoint);
  if (unloadable) {
    record(b, unit, {
      exitCode: null,
      wallS: 0,
      startedAt: startedAt.toISOString(),
      failure: `checkpoint not loadable: ${unloadable}`,
    });
    b.failed.push(`${unit.checkpoint} × ${unit.task} (checkpoint not loadable: ${unloadable})`);
    return;
  }
  const argv = unit.argv.map(b.localize);
  const env = { ...unit.env, CUDA_VISIBLE_DEVICES: String(unit.gpu) };
  const command = argv.map(shellQuote).join(' ');
  fs.writeFileSync(
    path.join(dir, UNIT_FILES.command),
    `${Object.entries(env)
      .map(([k, v]) => `${k}=${shellQuote(v)}`)
      .join(' ')} ${command}\n`,
  );
  // A run cut off earlier (SIGTERM, spot) may have left part of its output: this one starts clean.
  fs.rmSync(path.join(dir, UNIT_FILES.harness), { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, UNIT_FILES.harness), { recursive: true });
  job.say(`${name}: started`);
  const started = startProcess({
    name,
    command: `exec ${command}`,
    cwd: dir,
    env: { ...job.env, ...env },
    logFile: path.join(dir, UNIT_FILES.log),
    out: job.out,
  });
  b.running.add(started);
  const { code, signal } = await started.exited;
  b.running.delete(started);
  const wallS = Math.round((Date.now() - startedAt.getTime()) / 100) / 10;
  if (b.stopping() && code !== 0) {
    job.say(`${name}: stopped (it runs again when the job restarts)`);
    return;
  }
  b.counts.ran++;
  // Done means a results file: a harness that exits 0 without one has not evaluated anything.
  const wrote = harnessResultsFile(
    listFilesUnder(path.join(dir, UNIT_FILES.harness)).map((f) => `${UNIT_FILES.harness}/${f}`),
  );
  if (code === 0 && wrote) {
    record(b, unit, { exitCode: 0, wallS, startedAt: startedAt.toISOString() });
    job.say(`${name}: done in ${wallS} s`);
    return;
  }
  const why =
    code === 0
      ? `exit 0 but no results file in ${UNIT_FILES.harness}/`
      : `exit ${code ?? signal}: ${started.tail.get().slice(-3).join(' / ') || 'no output'}`;
  record(b, unit, { exitCode: code, wallS, startedAt: startedAt.toISOString(), failure: why });
  b.failed.push(`${unit.checkpoint} × ${unit.task} (${why.slice(0, 200)})`);
  job.say(`${name}: FAILED (${why}); the other units go on`);
}

/** Reads and checks the plan the launcher wrote. */
function readPlan(job: ContainerJob): EvalJobPlan {
  const file = path.join(job.configChannel, EVAL_PLAN_FILE);
  const plan = readJsonFile<EvalJobPlan | undefined>(file, undefined);
  if (!plan || plan.version !== 1 || !Array.isArray(plan.units) || !Array.isArray(plan.checkpoints))
    throw new JobFailure(`${file} is missing or not an eval plan of version 1 (submit with rlvr eval)`);
  return plan;
}

export function runEvalBatch(job: ContainerJob, signal?: AbortSignal): Promise<number> {
  return runBatchMode(
    job,
    signal,
    { name: 'eval', onStop: 'stopping the running units (they run again if the job restarts)' },
    async ({ running, stopping }) => {
      const plan = readPlan(job);
      const index = hostIndex(job);
      const mine = plan.units.filter((u) => u.host === index);
      fs.mkdirSync(job.runDir, { recursive: true });
      const runInfo = { ...job.runInfo, kind: 'eval', hostIndex: index, units: mine.length };
      fs.writeFileSync(job.runInfoFile, `${JSON.stringify(runInfo, null, 2)}\n`);
      const localize = localizer(job);
      const b: Batch = {
        job,
        plan,
        localize,
        running,
        stopping,
        unloadable: new Map(),
        failed: [],
        counts: { ran: 0, skipped: 0 },
      };
      const used = new Set(mine.map((u) => u.checkpoint));
      for (const ck of plan.checkpoints.filter((c: PlannedCheckpoint) => used.has(c.label))) {
        const problem = prepareView(localize(ck.containerPath), localize(ck.modelPath), job.say, ck.label);
        if (problem) b.unloadable.set(ck.label, problem);
      }
      const gpus = [...new Set(mine.map((u) => u.gpu))].sort((x, y) => x - y);
      job.say(
        `eval: ${mine.length} unit(s) of ${plan.units.length} on this host, over GPU(s) ${gpus.join(', ') || 'none'}`,
      );
      await Promise.all(
        gpus.map(async (gpu) => {
          for (const unit of mine.filter((u) => u.gpu === gpu)) {
            if (stopping()) break;
            await runUnit(b, unit);
          }
        }),
      );
      writeResultsMd(job);
      if (stopping()) {
        job.say(`stopped: ${b.counts.ran} unit(s) ran, ${b.counts.skipped} skipped`);
        return 0;
      }
      if (b.failed.length > 0)
        throw new JobFailure(
          `${b.failed.length} of ${mine.length} eval unit(s) failed: ${b.failed.join('; ')}`,
        );
      job.say(`eval: ${b.counts.ran} unit(s) ran, ${b.counts.skipped} skipped (done earlier); all succeeded`);
      return 0;
    },
  );
}

/** The results of the units this host has in its run folder, as the table (RESULTS.md; a worker's own name). */
function writeResultsMd(job: ContainerJob): void {
  const rows = readLocalResults(job.runDir, job.host);
  const table = buildTable(rows);
  // Records another host or attempt left unreadable: the table shows them failed, the log says which.
  for (const w of table.warnings) job.say(`warning: ${w}`);
  const title = `# Evaluation results (${job.runInfo.job as string}, ${job.host})\n\n`;
  fs.writeFileSync(path.join(job.runDir, job.own(RUN_FOLDER.results)), title + tableMarkdown(table));
}
