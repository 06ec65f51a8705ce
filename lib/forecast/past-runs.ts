import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CONTAINER, RUN_FOLDER } from '../layout';
import { listRunIds, runFiles } from '../results';
import { isMap, type YamlMap } from '../trainers';
import { isObject, readRegularText } from '../util';
import { readShape, shapeOf, type RunShape } from './shape';
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
}

/** What looking at a results folder found. */
export interface RunsSeen {
  readonly runs: PastRun[];
  /** Run folders looked at. */
  readonly seen: number;
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

/**
 * A run folder's shape: the one its job recorded in run.json (`forecast.shape`), else told from run.json
 * (trainer, instance, hosts, GPU split) and the run's config when that names its model by a path the
 * model's folder name can be read from (a job's resolved config names only the channel's mount point).
 */
export function runFolderShape(dir: string): RunShape | undefined {
  const runInfo = readDoc(dir, RUN_FOLDER.runInfo, JSON.parse);
  if (!isObject(runInfo)) return undefined;
  const recorded = isObject(runInfo.forecast) ? readShape(runInfo.forecast.shape) : undefined;
  if (recorded) return recorded;
  const config = readDoc(dir, RUN_FOLDER.config, parseYaml);
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
  let seen = 0;
  let unknownShape = 0;
  const others: { id: string; shape: RunShape }[] = [];
  for (const id of listRunIds(resultsDir)) {
    const files = runFiles(resultsDir, id);
    if (!files) continue;
    seen++;
    const shape = runFolderShape(files.dir);
    if (!shape) {
      unknownShape++;
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
    for (const trace of traces) {
      let timing;
      try {
        timing = traceTiming(trace);
      } catch {
        continue; // a trace that vanished or is not a regular file
      }
      intervals.push(...timing.intervals);
      if (firstStepTs === undefined) firstStepTs = timing.firstStepTs;
    }
    if (intervals.length > 0) runs.push({ id, source: 'results', shape, intervals, firstStepTs });
  }
  return { runs, seen, unknownShape, others };
}

/** Two sources' runs as one: a job both downloaded and in SageMaker counts once (its folder has its whole trace). */
export function mergeRuns(local: RunsSeen, more: RunsSeen | undefined): RunsSeen {
  if (!more) return local;
  const localIds = new Set(local.runs.map((r) => r.id));
  return {
    runs: [...local.runs, ...more.runs.filter((r) => !localIds.has(r.id))],
    others: [...local.others, ...more.others.filter((r) => !localIds.has(r.id))],
    seen: local.seen + more.seen,
    unknownShape: local.unknownShape + more.unknownShape,
  };
}
