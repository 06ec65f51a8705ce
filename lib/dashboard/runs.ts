import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { RUN_FOLDER } from '../layout';
import { isObject, isRegularFile, readRegularText, walkTree } from '../util';
import { INDEX_DIR } from './trace-index';

/*
 * The runs a results folder holds: each `results/<job>/` (downloaded, synced or run locally) is a run;
 * its trace is the newest `traces/trace*.jsonl` in it or in a trainer's own run folder under it. Ids are
 * folder names checked against the results folder, so no request names a file outside it (server.ts).
 */

/** Facts about a job the dashboard saw in SageMaker (status, tags), kept for when AWS is not reachable. */
export const JOB_FACTS = '.rlvr-job.json';
export const NOTES_FILE = 'NOTES.md';

export interface JobFacts {
  readonly status?: string;
  readonly instanceType?: string;
  readonly instanceCount?: number;
  readonly sweep?: string;
  readonly overrides?: string;
  readonly description?: string;
  readonly config?: string;
}

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
    if (e.isDirectory()) return e.name !== INDEX_DIR && !e.name.startsWith('.') && e.name !== 'checkpoints';
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

export interface RunDocs {
  readonly config: string | undefined;
  readonly runInfo: unknown;
  readonly results: string | undefined;
  readonly notes: string | undefined;
  readonly facts: JobFacts;
}

/** The most of a run document the dashboard reads; a bigger one (or a symlink, FIFO, device) is not shown. */
export const MAX_DOC_BYTES = 4 * 1024 * 1024;

function docText(dir: string, name: string): string | undefined {
  return readRegularText(path.join(dir, name), MAX_DOC_BYTES);
}

function docJson<T>(dir: string, name: string, fallback: T): T {
  const text = docText(dir, name);
  try {
    return text === undefined ? fallback : (JSON.parse(text) as T);
  } catch {
    return fallback;
  }
}

/** The run's documents, each read only if it is a regular file in the run folder (no symlink out of it). */
export function runDocs(dir: string): RunDocs {
  const facts = docJson<JobFacts>(dir, JOB_FACTS, {});
  return {
    config: docText(dir, RUN_FOLDER.config),
    runInfo: docJson<unknown>(dir, RUN_FOLDER.runInfo, undefined),
    results: docText(dir, RUN_FOLDER.results),
    notes: docText(dir, NOTES_FILE),
    facts: isObject(facts) ? facts : {},
  };
}

/** Leaf values of a parsed config as `a.b.c` → value text. */
function leaves(v: unknown, prefix: string, out: Map<string, string>): void {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v)) leaves(x, prefix ? `${prefix}.${k}` : k, out);
  } else out.set(prefix, JSON.stringify(v));
}

/**
 * Names for runs by what differs between their configs (`lr=1e-6 beta=0.01`): a sweep's overrides
 * when SageMaker's tags gave them, else the config keys whose values differ among the runs compared.
 */
export function overrideLabels(
  runs: readonly { id: string; config: string | undefined; overrides?: string }[],
): Map<string, string> {
  const labels = new Map<string, string>();
  const flat = runs.map((r) => {
    const out = new Map<string, string>();
    try {
      leaves(r.config ? parseYaml(r.config) : undefined, '', out);
    } catch {
      // a config that does not parse differs in nothing we can name
    }
    return out;
  });
  const keys = new Set(flat.flatMap((f) => [...f.keys()]));
  const differing = [...keys].filter((k) => new Set(flat.map((f) => f.get(k) ?? '∅')).size > 1).sort();
  runs.forEach((r, i) => {
    if (r.overrides) {
      labels.set(r.id, r.overrides);
      return;
    }
    const parts = differing
      .slice(0, 4)
      .map((k) => `${k.split('.').slice(-2).join('.')}=${flat[i].get(k) ?? '∅'}`);
    labels.set(r.id, parts.length && runs.length > 1 ? parts.join(' ') : r.id);
  });
  return labels;
}
