/**
 * Batch evaluation's results as rows, from the two kinds of files a run folder holds:
 * an eval job's unit records (`evals/<label>/<task>_<n>shot/unit-<id>.json` beside the harness's
 * output), and a training job's eval-watcher summaries (`evals/summary_*.json`, their
 * eval_benchmarks.py: `results.<checkpoint folder>.<task>_<n>shot` = lm_eval's results JSON). Pure on
 * what it is given; the local walk is here, the S3 reads in s3-results.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseCheckpointFolder, RUN_FOLDER } from '../layout';
import { readJsonFile, walkTree } from '../util';
import { parseUnitFileName, UNIT_FILES, type UnitRecord } from './job-plan';
import { judgedMetrics, type ResultRow } from './table';

const RESULT_KEY = /^(.+)_(\d+)shot$/;
const HARNESS_RESULTS = /(^|\/)(results_[^/]*\.json|[^/]*metrics\.json)$/;
export const WATCHER_SUMMARY = /^summary_[^/]*\.json$/;

/** The harness's results file among a unit folder's files (the newest lm_eval results_*.json). */
export function harnessResultsFile(relativeFiles: readonly string[]): string | undefined {
  return relativeFiles
    .filter((f) => f.startsWith(`${UNIT_FILES.harness}/`) && HARNESS_RESULTS.test(f))
    .sort()
    .at(-1);
}

/** The row of one unit record (with its harness results JSON, when it succeeded). */
export function rowOfUnit(record: UnitRecord, harnessJson: unknown, source: string): ResultRow {
  const base = {
    checkpointId: record.checkpoint.id,
    label: record.checkpoint.label,
    task: record.task,
    numFewshot: record.numFewshot,
    source,
    wallS: record.wallS,
    ...(record.deviations.length ? { deviations: record.deviations } : {}),
  };
  if (record.exitCode !== 0 || record.failure !== undefined)
    return { ...base, metrics: [], failed: record.failure ?? `exit code ${record.exitCode}` };
  const metrics = judgedMetrics(record.task, harnessJson);
  if (metrics.length === 0)
    return { ...base, metrics, failed: `no ${record.task} scores in the harness's results` };
  return { ...base, metrics };
}

/**
 * The rows of a watcher summary of training job `job`. A checkpoint folder `<run>_step20` is the row
 * `<job>:step20`, the id an eval job gives the same checkpoint, so the two merge.
 */
export function rowsOfWatcherSummary(summary: unknown, job: string, source: string): ResultRow[] {
  const results = (summary as { results?: unknown })?.results;
  if (typeof results !== 'object' || results === null) return [];
  const rows: ResultRow[] = [];
  for (const [folder, byKey] of Object.entries(results as Record<string, unknown>)) {
    if (typeof byKey !== 'object' || byKey === null) continue;
    const parsed = parseCheckpointFolder(folder);
    const id = parsed ? `${job}:${parsed.final ? 'final' : `step${parsed.step}`}` : `${job}:${folder}`;
    for (const [key, value] of Object.entries(byKey as Record<string, unknown>)) {
      const m = RESULT_KEY.exec(key);
      if (!m) continue;
      const task = m[1];
      const base = { checkpointId: id, label: id, task, numFewshot: Number(m[2]), source };
      const error = (value as { error?: unknown })?.error;
      if (typeof error === 'string') {
        rows.push({ ...base, metrics: [], failed: error.trim().split('\n').at(-1) ?? 'failed' });
        continue;
      }
      const metrics = judgedMetrics(task, value);
      if (metrics.length) rows.push({ ...base, metrics });
    }
  }
  return rows;
}

/** Every file under `dir`, relative, `/`-separated (depth-limited). */
export function listFilesUnder(dir: string, depth = 6): string[] {
  const out: string[] = [];
  walkTree(dir, depth, (rel, e) => {
    if (!e.isDirectory()) out.push(rel);
    return true;
  });
  return out;
}

/** The unit records of a local run folder: each with its folder (relative to the run folder). */
export function localUnitRecords(
  runDir: string,
): { folder: string; file: string; id: string; ok: boolean }[] {
  const evals = path.join(runDir, RUN_FOLDER.evals);
  return listFilesUnder(evals, 3).flatMap((rel) => {
    const parsed = parseUnitFileName(path.posix.basename(rel));
    return parsed
      ? [
          {
            folder: `${RUN_FOLDER.evals}/${path.posix.dirname(rel)}`,
            file: rel,
            id: parsed.id,
            ok: parsed.ok,
          },
        ]
      : [];
  });
}

/** The row of a local unit folder (its successful record, else its failed one). */
export function readLocalUnit(unitDir: string, id: string, source: string): ResultRow | undefined {
  const record =
    readJsonFile<UnitRecord | undefined>(path.join(unitDir, UNIT_FILES.done(id)), undefined) ??
    readJsonFile<UnitRecord | undefined>(path.join(unitDir, UNIT_FILES.failed(id)), undefined);
  if (!record) return undefined;
  const harness = harnessResultsFile(
    listFilesUnder(unitDir).filter((f) => f.startsWith(`${UNIT_FILES.harness}/`)),
  );
  return rowOfUnit(
    record,
    harness ? readJsonFile(path.join(unitDir, harness), undefined) : undefined,
    source,
  );
}

/** The rows a local run folder holds: its eval units and its watcher summaries. */
export function readLocalResults(runDir: string, source: string, job = path.basename(runDir)): ResultRow[] {
  const rows: ResultRow[] = [];
  for (const u of localUnitRecords(runDir)) {
    const row = readLocalUnit(path.join(runDir, u.folder), u.id, source);
    if (row) rows.push(row);
  }
  const evals = path.join(runDir, RUN_FOLDER.evals);
  const summaries = fs.existsSync(evals)
    ? fs
        .readdirSync(evals)
        .filter((f) => WATCHER_SUMMARY.test(f))
        .sort()
    : [];
  for (const f of summaries)
    rows.push(...rowsOfWatcherSummary(readJsonFile(path.join(evals, f), undefined), job, source));
  return rows;
}
