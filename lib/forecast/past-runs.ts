import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CONTAINER, RUN_FOLDER } from '../layout';
import { listRunIds, runFiles } from '../transfers';
import { isMap, type YamlMap } from '../trainers';
import { isObject, readRegularText } from '../util';
import { maxStepsOf, readShape, shapeOf, type RunShape } from './shape';
import { traceTiming } from './step-clock';

/** One run the launcher can see, with its steps' seconds. */
export interface PastRun {
  /** The job's name (its folder in the results folder). */
  readonly id: string;
  /** Where it was seen: a run folder in the results folder, or SageMaker's record of the job. */
  readonly source: 'results' | 'sagemaker';
  readonly shape: RunShape;
  /** Seconds of its steps (the recent ones of each trace). */
  readonly intervals: readonly number[];
  /** Seconds from the trace's start to its first step's end (model load, vLLM start, the first step). */
  readonly firstStepTs: number | undefined;
  /** Seconds from the container's start to the trainer's (run.json's first attempt; undefined: not recorded). */
  readonly setupSeconds?: number;
  /** Steps it trained (the highest its trace shows). */
  readonly steps?: number;
  /** Steps its config asked for (undefined: not known). */
  readonly plannedSteps?: number;
  /** Checkpoints it wrote (undefined: not known). */
  readonly checkpoints?: number;
  /** How its job ended (`Completed`, `Stopped`, `Failed`; undefined: not recorded). */
  readonly ended?: string;
  /**
   * Seconds of the run that were not steps, measured whole: from the container's start to its first
   * step's end, and from its last step's end to its trainer's exit (the final checkpoint). Known for a
   * completed run of one attempt whose run.json recorded both ends.
   */
  readonly outsideSeconds?: number;
}

/** What a run's own records say of it beside its steps' seconds (run.json, its summary, its trace). */
export type RunMeasure = Pick<
  PastRun,
  'setupSeconds' | 'steps' | 'plannedSteps' | 'checkpoints' | 'ended' | 'outsideSeconds'
>;

const count = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;

/**
 * A run's measure from its run.json, the checkpoints it wrote (undefined: not known), the steps its
 * config asked for, and its trace's steps: `span` is the first and last step's end in one trace
 * (undefined when its steps are in several traces or not all read).
 */
export function runMeasure(input: {
  readonly runInfo: unknown;
  readonly status?: string;
  readonly checkpoints: number | undefined;
  readonly plannedSteps: number | undefined;
  readonly steps: number | undefined;
  readonly span: { readonly first: number; readonly last: number } | undefined;
}): RunMeasure {
  const info = isObject(input.runInfo) ? input.runInfo : {};
  const recorded = isObject(info.forecast) ? count(info.forecast.maxSteps) : undefined;
  const plannedSteps = recorded || input.plannedSteps;
  const ended = typeof info.status === 'string' ? info.status : input.status;
  const setupSeconds = setupSecondsOf(info);
  let outsideSeconds: number | undefined;
  const attempts = Array.isArray(info.attempts) ? info.attempts : [];
  const only: unknown = attempts.length === 1 ? attempts[0] : undefined;
  if (ended === 'Completed' && input.span && isObject(only) && typeof only.startedAt === 'string') {
    const end = typeof only.trainerEndedAt === 'string' ? Date.parse(only.trainerEndedAt) : NaN;
    const whole = (end - Date.parse(only.startedAt)) / 1000;
    const outside = whole - (input.span.last - input.span.first);
    if (Number.isFinite(outside) && outside >= 0) outsideSeconds = outside;
  }
  return {
    ...(setupSeconds !== undefined ? { setupSeconds } : {}),
    ...(input.steps !== undefined ? { steps: input.steps } : {}),
    ...(plannedSteps !== undefined ? { plannedSteps } : {}),
    ...(input.checkpoints !== undefined ? { checkpoints: input.checkpoints } : {}),
    ...(ended !== undefined ? { ended } : {}),
    ...(outsideSeconds !== undefined ? { outsideSeconds } : {}),
  };
}

/** What looking at a results folder found. */
export interface RunsSeen {
  readonly runs: PastRun[];
  /** Run folders looked at. */
  readonly seen: number;
  /** The ids of the runs looked at, and of those whose shape could not be told (to count a job seen twice once). */
  readonly seenIds: readonly string[];
  readonly unknownIds: readonly string[];
  /** Run folders whose shape could not be told (no run.json of ours, or a config without a model's name). */
  readonly unknownShape: number;
  /** Runs of other shapes (their traces not read). */
  readonly others: readonly { readonly id: string; readonly shape: RunShape }[];
}

/** A run folder's document, parsed (undefined: none, too big, not a regular file, or not parseable). */
function readDoc(dir: string, name: string, parse: (text: string) => unknown): unknown {
  const text = readRegularText(path.join(dir, name), 4 * 1024 * 1024);
  if (text === undefined) return undefined;
  try {
    return parse(text);
  } catch {
    return undefined;
  }
}

/** The checkpoints a run folder's job wrote, as its summary.json lists them (undefined: no summary). */
function checkpointsWritten(dir: string): number | undefined {
  const summary = readDoc(dir, RUN_FOLDER.summary, JSON.parse);
  return isObject(summary) && Array.isArray(summary.checkpoints) ? summary.checkpoints.length : undefined;
}

/** Seconds from the container's start to its trainer's, as run.json's first attempt records them. */
export function setupSecondsOf(runInfo: unknown): number | undefined {
  if (!isObject(runInfo) || !Array.isArray(runInfo.attempts)) return undefined;
  const first: unknown = runInfo.attempts[0];
  if (!isObject(first) || typeof first.startedAt !== 'string' || typeof first.trainerStartedAt !== 'string')
    return undefined;
  const s = (Date.parse(first.trainerStartedAt) - Date.parse(first.startedAt)) / 1000;
  return Number.isFinite(s) && s >= 0 ? s : undefined;
}

/**
 * A run folder's shape: the one its job recorded in run.json (`forecast.shape`), else told from run.json
 * (trainer, instance, hosts, GPU split) and the run's config when that names its model by a path the
 * model's folder name can be read from (a job's resolved config names only the channel's mount point).
 */
export function runFolderShape(dir: string): RunShape | undefined {
  return shapeOfDocs(runFolderDocs(dir));
}

/** A run folder's run.json and config, each parsed (undefined: absent or unreadable), read once. */
function runFolderDocs(dir: string): { readonly runInfo: unknown; readonly config: unknown } {
  return {
    runInfo: readDoc(dir, RUN_FOLDER.runInfo, JSON.parse),
    config: readDoc(dir, RUN_FOLDER.config, parseYaml),
  };
}

function shapeOfDocs({ runInfo, config }: ReturnType<typeof runFolderDocs>): RunShape | undefined {
  if (!isObject(runInfo)) return undefined;
  const recorded = isObject(runInfo.forecast) ? readShape(runInfo.forecast.shape) : undefined;
  if (recorded) return recorded;
  if (!isMap(config) || typeof runInfo.trainer !== 'string') return undefined;
  const model = isMap(config.model) ? config.model.path : undefined;
  if (typeof model !== 'string' || model.startsWith(`${CONTAINER.root}/`)) return undefined;
  return shapeOf({
    trainer: runInfo.trainer,
    model,
    instanceType: typeof runInfo.instanceType === 'string' ? runInfo.instanceType : 'local',
    instanceCount: Array.isArray(runInfo.hosts) && runInfo.hosts.length > 0 ? runInfo.hosts.length : 1,
    trainGpus: typeof runInfo.trainGpus === 'string' ? runInfo.trainGpus : '',
    evalGpus: typeof runInfo.evalGpus === 'string' ? runInfo.evalGpus : '',
    config: config as YamlMap,
  });
}

/**
 * The runs of a results folder whose shape `wanted` accepts, with their steps' seconds from their traces
 * (every trace file of the run: a restarted job has one per attempt). Traces of other runs are not read.
 */
export function resultsFolderRuns(resultsDir: string, wanted: (shape: RunShape) => boolean): RunsSeen {
  const runs: PastRun[] = [];
  const seenIds: string[] = [];
  const unknownIds: string[] = [];
  const others: { id: string; shape: RunShape }[] = [];
  for (const id of listRunIds(resultsDir)) {
    const files = runFiles(resultsDir, id);
    if (!files) continue;
    seenIds.push(id);
    const docs = runFolderDocs(files.dir);
    const shape = shapeOfDocs(docs);
    if (!shape) {
      unknownIds.push(id);
      continue;
    }
    if (!wanted(shape)) {
      others.push({ id, shape });
      continue;
    }
    const traces = files.traces
      .filter((t) => /^trace[^/]*\.jsonl$/.test(path.posix.basename(t)))
      .map((t) => path.join(files.dir, t));
    const intervals: number[] = [];
    let firstStepTs: number | undefined;
    let steps: number | undefined;
    const spans: { first: number; last: number }[] = [];
    for (const trace of traces) {
      let timing;
      try {
        timing = traceTiming(trace);
      } catch {
        continue; // a trace that vanished or is not a regular file
      }
      if (timing.firstStepTs === undefined) continue;
      intervals.push(...timing.intervals);
      if (firstStepTs === undefined) firstStepTs = timing.firstStepTs;
      const reached = timing.lastStep ?? timing.steps ?? timing.intervals.length + 1;
      steps = Math.max(steps ?? 0, reached);
      if (timing.lastStepTs !== undefined) spans.push({ first: timing.firstStepTs, last: timing.lastStepTs });
    }
    if (intervals.length === 0) continue;
    const { runInfo, config } = docs;
    runs.push({
      id,
      source: 'results',
      shape,
      intervals,
      firstStepTs,
      ...runMeasure({
        runInfo,
        checkpoints: checkpointsWritten(files.dir),
        plannedSteps: isMap(config) ? maxStepsOf(config as YamlMap) : undefined,
        steps,
        span: spans.length === 1 ? spans[0] : undefined,
      }),
    });
  }
  return { runs, seen: seenIds.length, unknownShape: unknownIds.length, seenIds, unknownIds, others };
}

/** Runs seen in both sources count once; unknown only when neither source could tell its shape. */
function countedOnce(
  a: RunsSeen,
  b: RunsSeen,
): Pick<RunsSeen, 'seen' | 'unknownShape' | 'seenIds' | 'unknownIds'> {
  const seenIds = [...new Set([...a.seenIds, ...b.seenIds])];
  const known = new Set(
    [...a.seenIds, ...b.seenIds].filter((id) => !a.unknownIds.includes(id) && !b.unknownIds.includes(id)),
  );
  for (const r of [...a.runs, ...a.others, ...b.runs, ...b.others]) known.add(r.id);
  const unknownIds = [...new Set([...a.unknownIds, ...b.unknownIds])].filter((id) => !known.has(id));
  return { seen: seenIds.length, unknownShape: unknownIds.length, seenIds, unknownIds };
}

/** Two sources' runs as one: a job both downloaded and in SageMaker counts once (its folder has its whole trace). */
export function mergeRuns(local: RunsSeen, more: RunsSeen | undefined): RunsSeen {
  if (!more) return local;
  const localIds = new Set(local.runs.map((r) => r.id));
  return {
    runs: [...local.runs, ...more.runs.filter((r) => !localIds.has(r.id))],
    others: [...local.others, ...more.others.filter((r) => !localIds.has(r.id))],
    ...countedOnce(local, more),
  };
}
