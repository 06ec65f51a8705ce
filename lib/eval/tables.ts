/**
 * The results table a command ends with: of jobs and local run folders (`rlvr eval results`), of an
 * eval job waited for (`rlvr eval --wait`), of a local eval run (`rlvr eval --local`, with the units it
 * skipped read where they ran).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeAwsError, requireLayout, type JobContext } from '../aws';
import { RlvrError, RuntimeFailure, UserError } from '../errors';
import {
  buildTable,
  readLocalResults,
  readLocalUnit,
  type ResultRow,
  type ResultsTable,
} from '../eval-records';
import { waitForJob } from '../operate';
import type { ProgressListener } from '../progress';
import type { EvalPlan } from './plan';
import { ObjectCache, readJobResults, recordLearnedDurations, type ReadStats } from './s3-results';

export interface ResultsOfJobs {
  readonly table: ResultsTable;
  /** Result files read, and how many of them came from S3 (the rest from the local cache); undefined without S3. */
  readonly stats: ReadStats | undefined;
}

/**
 * `rlvr eval results`: each name that is a folder here is a local run folder, every other one a job
 * (eval or training) read from S3 through one context, opened only when one is named. The rows'
 * durations teach the packing of later evaluations. A `baseline` that names no row is bad input.
 */
export async function resultsOfJobs(
  names: readonly string[],
  options: {
    readonly cwd: string;
    readonly baseline?: string;
    readonly openContext: () => Promise<JobContext>;
    /**
     * Told each warning (a unit record that could not be read, naming its file) once, for the caller
     * to show apart from the table (which lists them too, under its notes).
     */
    readonly warn?: (warning: string) => void;
  },
): Promise<ResultsOfJobs> {
  const rows: ResultRow[] = [];
  const isLocal = (name: string) => fs.existsSync(path.resolve(options.cwd, name));
  // Local files named as the user named their folder: a path they can open from where they are.
  for (const name of names.filter(isLocal))
    rows.push(...readLocalResults(path.resolve(options.cwd, name), `local ${name}`, undefined, name));
  const remote = names.filter((n) => !isLocal(n));
  let stats: ReadStats | undefined;
  if (remote.length > 0) {
    const context = await options.openContext();
    try {
      const layout = requireLayout(context);
      const cache = new ObjectCache(context.aws.s3);
      for (const job of remote) {
        try {
          rows.push(...(await readJobResults(context.aws.s3, layout, job, cache)));
        } catch (err) {
          if (err instanceof RlvrError) throw err;
          throw new RuntimeFailure(
            `Could not read the results of ${job}: ${describeAwsError(err)}`,
            'AwsFailure',
            {
              cause: err,
            },
          );
        }
      }
      stats = cache.stats;
    } finally {
      context.close();
    }
  }
  recordLearnedDurations(rows);
  const table = buildTable(rows, options.baseline);
  if (options.baseline && !table.baseline)
    throw new UserError(
      `--baseline ${options.baseline}: no such row (rows: ${table.rows.map((r) => r.label).join(', ') || 'none'})`,
      'NoSuchBaseline',
    );
  for (const w of table.warnings) options.warn?.(w);
  return { table, stats };
}

/** `rlvr eval --wait`: the job followed until it ends (events to the listener), then its table. */
export async function waitForEvalJob(
  context: JobContext,
  jobName: string,
  options: { readonly pollMs?: number; readonly listener?: ProgressListener },
): Promise<{ readonly status: string; readonly table: ResultsTable }> {
  const waited = await waitForJob(context, jobName, {
    pollMs: options.pollMs ?? 15_000,
    onEvent: options.listener,
  });
  const rows = await readJobResults(
    context.aws.s3,
    requireLayout(context),
    jobName,
    new ObjectCache(context.aws.s3),
  );
  return { status: waited.status, table: buildTable(rows) };
}

/** A local eval run's table: the units it skipped, read where they ran, and those it ran. */
export function localRunTable(plan: EvalPlan, runDir: string): ResultsTable {
  const skipped = plan.skipped.flatMap((d) => {
    const row = 'dir' in d.location ? readLocalUnit(d.location.dir, d.id, `local ${d.where}`) : undefined;
    return row ? [row] : [];
  });
  return buildTable([...skipped, ...readLocalResults(runDir, 'local run')]);
}
