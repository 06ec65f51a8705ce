import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { RUN_FOLDER } from '../layout';
import { isObject, readRegularText } from '../util';

export { isRunId, listRunIds, runDir, runFiles, type RunFiles } from '../transfers';

/*
 * What the dashboard reads of a run folder besides its traces: its documents, the job facts it saw in
 * SageMaker, and names for runs by what differs between their configs. Finding the runs is lib/transfers'.
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
