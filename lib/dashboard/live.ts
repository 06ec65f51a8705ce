import * as fs from 'node:fs';
import type { JobContext } from '../aws';
import { syncTraces } from '../transfers';
import { listRunIds, runFiles } from './runs';

/*
 * Live: the server keeps running jobs' traces current with the incremental sync `rlvr sync-traces` uses
 * (lib/transfers/sync-traces.ts: only the bytes a trace grew by), and tells open pages when a run's trace
 * changed — whether the sync grew it, a local run is writing it, or a download replaced it.
 */

export interface LiveOptions {
  readonly resultsDir: string;
  readonly context?: JobContext;
  /** Seconds between syncs of running jobs. */
  readonly pollSeconds: number;
  /** Milliseconds between looks at the local traces' sizes. @default 2000 */
  readonly watchMs?: number;
  /** The running jobs to sync (from the latest jobs listing). */
  readonly running: () => readonly string[];
  readonly notify: (event: 'run' | 'jobs', id?: string) => void;
}

export interface Live {
  /** When a job's trace last grew, as the sync saw it (ms since epoch). */
  grewAt(job: string): number | undefined;
  /** Looks at the local traces now (tests; the timer does it every watchMs). */
  check(): void;
  /** Syncs the running jobs' traces now (tests; the timer does it every pollSeconds). */
  syncNow(): Promise<void>;
  stop(): void;
}

export function startLive(o: LiveOptions): Live {
  const sizes = new Map<string, number>();
  const grew = new Map<string, number>();
  let known = new Set(listRunIds(o.resultsDir));
  let stopped = false;
  let syncing = false;

  const check = (): void => {
    const ids = listRunIds(o.resultsDir);
    if (ids.length !== known.size || ids.some((id) => !known.has(id))) {
      known = new Set(ids);
      o.notify('jobs');
    }
    for (const id of ids) {
      const trace = runFiles(o.resultsDir, id)?.trace;
      if (!trace) continue;
      let size: number;
      try {
        size = fs.statSync(trace).size;
      } catch {
        continue;
      }
      const before = sizes.get(id);
      sizes.set(id, size);
      if (before !== undefined && before !== size) {
        grew.set(id, Date.now());
        o.notify('run', id);
      }
    }
  };

  const sync = async (): Promise<void> => {
    if (!o.context || syncing || stopped) return;
    syncing = true;
    try {
      for (const job of o.running()) {
        if (stopped) break;
        try {
          const { stats } = await syncTraces(o.context, { target: job, resultsDir: o.resultsDir });
          if (stats.changes > 0) grew.set(job, Date.now());
        } catch {
          // the next poll tries again; the jobs view shows the job's state
        }
      }
    } finally {
      syncing = false;
    }
    check();
  };

  check();
  const watch = setInterval(check, o.watchMs ?? 2000);
  const poll = setInterval(() => void sync(), o.pollSeconds * 1000);
  watch.unref();
  poll.unref();
  void sync();
  return {
    grewAt: (job) => grew.get(job),
    check,
    syncNow: sync,
    stop() {
      stopped = true;
      clearInterval(watch);
      clearInterval(poll);
    },
  };
}
