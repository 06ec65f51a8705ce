import * as fs from 'node:fs';
import * as path from 'node:path';
import type { JobContext } from '../aws';
import { listJobs, summarizeCheckpoints, type CheckpointSummary, type JobRow } from '../operate';
import { isObject, mapLimited, writeFileAtomic } from '../util';
import { pastRuntimeLine, type LiveProgress } from '../forecast';
import { RUN_FOLDER } from '../layout';
import { JOB_FACTS, listRunIds, runDocs, runFiles, type JobFacts, type RunDocs } from './runs';

/*
 * The jobs view: every job we launched — SageMaker's listing (when AWS is reachable) joined with the run
 * folders of the results folder (downloaded, synced, or run with --local) — with the incidents we know
 * flagged: Completed without checkpoints (the post-job check `rlvr jobs` makes), Failed, and stalled (a
 * running job whose trace has not grown for `stallMinutes`).
 */

export interface JobView {
  readonly name: string;
  readonly source: 'sagemaker' | 'local' | 'sagemaker+local';
  readonly status: string;
  readonly secondaryStatus?: string;
  readonly instance: string;
  readonly started: string | undefined;
  readonly elapsedSeconds: number | undefined;
  readonly cost: number | undefined;
  readonly costFinal: boolean;
  readonly description: string | undefined;
  readonly config: string | undefined;
  readonly sweep: string | undefined;
  readonly overrides: string | undefined;
  /** Checkpoint folders in the local run folder. */
  readonly localCheckpoints: number | undefined;
  /** Checkpoints in S3 (SageMaker jobs): how many steps, the latest, whether a final one is there. */
  readonly s3Checkpoints: { count: number; latestStep: number | undefined; final: boolean } | undefined;
  /** Whether the run folder has a trace the run view can show. */
  readonly hasTrace: boolean;
  readonly traceBytes: number | undefined;
  /** When the trace last grew (ms since epoch). */
  readonly traceGrewAt: number | undefined;
  readonly latestStep: number | undefined;
  readonly latestReward: number | undefined;
  /** A running SageMaker job: step N of M, its rate, ETA and cost at finish (from its trace in S3). */
  readonly progress?: LiveProgress;
  readonly flags: string[];
}

export interface RunProgress {
  readonly latestStep: number | undefined;
  readonly latestReward: number | undefined;
}

function localCheckpoints(dir: string): number | undefined {
  const c = path.join(dir, 'checkpoints');
  try {
    return fs.readdirSync(c, { withFileTypes: true }).filter((e) => e.isDirectory()).length;
  } catch {
    return undefined;
  }
}

/** A local run's status when SageMaker does not tell: the facts the dashboard kept, else its files. */
function localStatus(dir: string, docs: RunDocs): string {
  if (docs.facts.status) return docs.facts.status;
  if (fs.existsSync(path.join(dir, RUN_FOLDER.failure))) return 'Failed';
  const info = isObject(docs.runInfo) ? docs.runInfo : {};
  if (typeof info.status === 'string') return info.status;
  if (typeof info.end === 'object' && info.end) return 'Completed';
  return fs.existsSync(path.join(dir, RUN_FOLDER.localRunLog)) ? 'Local' : 'Downloaded';
}

function flagsOf(
  status: string,
  problem: string | undefined,
  grewAt: number | undefined,
  stallMs: number,
  now: number,
): string[] {
  const flags: string[] = [];
  if (problem) flags.push(problem);
  if (status === 'Failed') flags.push('failed');
  if (status === 'InProgress' && grewAt !== undefined && now - grewAt > stallMs)
    flags.push(`stalled: no trace growth for ${Math.round((now - grewAt) / 60000)} min`);
  return flags;
}

export interface JobsOptions {
  readonly resultsDir: string;
  readonly context?: JobContext;
  readonly stallMinutes: number;
  readonly limit?: number;
  readonly jobLogPath?: string;
  /** The latest step and reward of a run (from its index). */
  readonly progress: (id: string) => Promise<RunProgress | undefined>;
  /** When the live sync last saw a job's trace grow (ms); else the local trace's mtime is used. */
  readonly grewAt?: (job: string) => number | undefined;
  readonly now?: number;
}

/** Keeps what SageMaker said of a job in its local folder, for views without AWS (sweep, overrides). */
function keepFacts(dir: string, row: JobRow, tags: { sweep?: string; overrides?: string }): void {
  const facts: JobFacts = {
    status: row.status,
    instanceType: row.instanceType,
    instanceCount: row.instanceCount,
    sweep: tags.sweep,
    overrides: tags.overrides,
    description: row.description,
    config: row.config,
  };
  const file = path.join(dir, JOB_FACTS);
  try {
    writeFileAtomic(file, JSON.stringify(facts, null, 1));
  } catch {
    // a read-only results folder still shows the view
  }
}

export async function jobViews(o: JobsOptions): Promise<{ jobs: JobView[]; aws: string }> {
  const now = o.now ?? Date.now();
  const stallMs = o.stallMinutes * 60_000;
  let remote: JobRow[] = [];
  let aws = 'not asked (--no-aws)';
  if (o.context) {
    try {
      remote = await listJobs(o.context, { limit: o.limit ?? 100, jobLogPath: o.jobLogPath });
      aws = 'ok';
    } catch (e) {
      aws = `SageMaker listing failed: ${(e as Error).message}`;
    }
  }
  // Checkpoints in S3 for every job (the listing read them for Completed ones): one listing each.
  const s3 = await mapLimited(remote, 4, async (row): Promise<CheckpointSummary | undefined> => {
    if (row.checkpoints || !o.context?.layout) return row.checkpoints;
    try {
      return await summarizeCheckpoints(o.context.aws.s3, o.context.layout, row.name);
    } catch {
      return undefined;
    }
  });
  const localIds = new Set(listRunIds(o.resultsDir));
  const views: JobView[] = [];
  for (const [i, row] of remote.entries()) {
    const ck = s3[i];
    const files = localIds.has(row.name) ? runFiles(o.resultsDir, row.name) : undefined;
    const tags = { sweep: row.tags['rlvr:sweep'], overrides: row.tags['rlvr:overrides'] };
    if (files) keepFacts(files.dir, row, tags);
    const trace = files?.trace ? fs.statSync(files.trace) : undefined;
    const grewAt = o.grewAt?.(row.name) ?? trace?.mtimeMs;
    const progress = files?.trace ? await o.progress(row.name) : undefined;
    views.push({
      name: row.name,
      source: files ? 'sagemaker+local' : 'sagemaker',
      status: row.status,
      secondaryStatus: row.secondaryStatus,
      instance: `${row.instanceCount}× ${row.instanceType}`,
      started: row.started?.toISOString(),
      elapsedSeconds: row.cost.elapsedSeconds,
      cost: row.cost.cost,
      costFinal: row.cost.final,
      description: row.description,
      config: row.config,
      sweep: tags.sweep,
      overrides: tags.overrides,
      localCheckpoints: files ? localCheckpoints(files.dir) : undefined,
      s3Checkpoints: ck ? { count: ck.count, latestStep: ck.latestStep, final: ck.final } : undefined,
      hasTrace: Boolean(files?.trace),
      traceBytes: trace?.size,
      traceGrewAt: grewAt,
      latestStep: progress?.latestStep,
      latestReward: progress?.latestReward,
      ...(row.progress ? { progress: row.progress } : {}),
      flags: [
        ...flagsOf(row.status, row.problem, grewAt, stallMs, now),
        ...(row.progress && row.progress.pastMaxRuntime ? [pastRuntimeLine(row.progress)!] : []),
      ],
    });
    localIds.delete(row.name);
  }
  for (const id of localIds) {
    const files = runFiles(o.resultsDir, id);
    if (!files) continue;
    const docs = runDocs(files.dir);
    const { facts } = docs;
    const status = localStatus(files.dir, docs);
    const trace = files.trace ? fs.statSync(files.trace) : undefined;
    const grewAt = o.grewAt?.(id) ?? trace?.mtimeMs;
    const progress = files.trace ? await o.progress(id) : undefined;
    const checkpoints = localCheckpoints(files.dir);
    views.push({
      name: id,
      source: 'local',
      status,
      instance: facts.instanceType ? `${facts.instanceCount ?? 1}× ${facts.instanceType}` : '-',
      started: undefined,
      elapsedSeconds: undefined,
      cost: undefined,
      costFinal: true,
      description: facts.description,
      config: facts.config,
      sweep: facts.sweep,
      overrides: facts.overrides,
      localCheckpoints: checkpoints,
      s3Checkpoints: undefined,
      hasTrace: Boolean(files.trace),
      traceBytes: trace?.size,
      traceGrewAt: grewAt,
      latestStep: progress?.latestStep,
      latestReward: progress?.latestReward,
      flags: flagsOf(
        status,
        // A local run (no SageMaker facts): its own folder is where its checkpoints are.
        !facts.status && status === 'Completed' && !checkpoints
          ? 'COMPLETED WITHOUT ANY CHECKPOINT'
          : undefined,
        grewAt,
        stallMs,
        now,
      ),
    });
  }
  views.sort((a, b) => (b.started ?? b.name).localeCompare(a.started ?? a.name));
  return { jobs: views, aws };
}
