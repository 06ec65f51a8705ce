import * as fs from 'node:fs';
import * as path from 'node:path';
import { RUN_FOLDER } from '../layout';
import { isRegularFile, walkTree } from '../util';

/*
 * The runs a results folder holds: each `results/<job>/` (downloaded, synced or run locally) is a run;
 * its trace is the newest `traces/trace*.jsonl` in it or in a trainer's own run folder under it. Ids are
 * folder names checked against the results folder, so no request (the dashboard's) names a file outside it.
 */

export interface RunFiles {
  readonly id: string;
  readonly dir: string;
  /** The trace the dashboard shows (absolute), if any. */
  readonly trace: string | undefined;
  /** All trace files (relative to dir). */
  readonly traces: string[];
  readonly samples: string | undefined;
  readonly rollouts: string | undefined;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

/** A run id as a folder name: no separators, no dot-dot, nothing hidden. */
export function isRunId(id: string): boolean {
  return ID.test(id) && !id.includes('..');
}

/** The run's folder, if `id` names one directly under the results folder (symlinks resolved, then checked). */
export function runDir(resultsDir: string, id: string): string | undefined {
  if (!isRunId(id)) return undefined;
  const root = fs.realpathSync(resultsDir);
  const dir = path.join(root, id);
  let real: string;
  try {
    real = fs.realpathSync(dir);
  } catch {
    return undefined;
  }
  if (path.dirname(real) !== root || !fs.statSync(real).isDirectory()) return undefined;
  return real;
}

export function listRunIds(resultsDir: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(resultsDir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isDirectory() && isRunId(e.name))
    .map((e) => e.name)
    .sort();
}

/** A run's trace files: `traces/*.jsonl` at the top or in a trainer's run folder (depth ≤ 3). */
export function runFiles(resultsDir: string, id: string): RunFiles | undefined {
  const dir = runDir(resultsDir, id);
  if (!dir) return undefined;
  const traces: string[] = [];
  walkTree(dir, 3, (rel, e) => {
    if (e.isDirectory()) return !e.name.startsWith('.') && e.name !== 'checkpoints';
    if (
      e.isFile() &&
      rel.endsWith('.jsonl') &&
      path.posix.basename(path.posix.dirname(rel)) === RUN_FOLDER.traces
    )
      traces.push(rel);
    return false;
  });
  const mtime = (rel: string): number => fs.statSync(path.join(dir, rel)).mtimeMs;
  const mains = traces.filter((t) => /^trace[^/]*\.jsonl$/.test(path.posix.basename(t)));
  mains.sort((a, b) => mtime(b) - mtime(a) || a.localeCompare(b));
  const trace = mains[0];
  const beside = (name: string): string | undefined => {
    if (!trace) return undefined;
    const f = path.join(dir, path.posix.dirname(trace), name);
    return isRegularFile(f) ? f : undefined;
  };
  return {
    id,
    dir,
    trace: trace ? path.join(dir, trace) : undefined,
    traces: traces.sort(),
    samples: beside('samples.jsonl'),
    rollouts: beside('rollouts.jsonl'),
  };
}
