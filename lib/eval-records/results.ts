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
import { parseUnitFileName, UNIT_FILES, type Harness, type UnitRecord } from './job-plan';
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

/** A unit record's text read: the record, or what is wrong with it. */
export type UnitRecordRead = { readonly record: UnitRecord } | { readonly problem: string };

type Check = (v: unknown) => string | undefined;
const shown = (v: unknown) => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};
const must =
  (ok: (v: unknown) => boolean, what: string): Check =>
  (v) =>
    ok(v) ? undefined : `${shown(v)} is not ${what}`;
const isString = (v: unknown): v is string => typeof v === 'string';
const isInt = (v: unknown) => Number.isInteger(v);
const HARNESSES: readonly Harness[] = ['lm_eval', 'olmes'];

/*
 * The schema of a unit record, one check per field. Hand-written rather than zod: the job's own program
 * (lib/container) reads these records and its bundle stays free of zod. Typed by UnitRecord's keys, so a
 * field added to the record and not here does not compile.
 */
const UNIT_RECORD_SCHEMA: { readonly [K in keyof UnitRecord]-?: { check: Check; optional?: true } } = {
  id: { check: must(isString, 'a string') },
  checkpoint: {
    check: must(
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        ['label', 'id', 'from'].every((k) => isString((v as Record<string, unknown>)[k])),
      'an object of strings label, id and from',
    ),
  },
  task: { check: must((v) => isString(v) && v.length > 0, 'a task name') },
  numFewshot: { check: must((v) => isInt(v) && (v as number) >= 0, 'a whole number ≥ 0') },
  harness: { check: must((v) => HARNESSES.includes(v as Harness), HARNESSES.join(' or ')) },
  argv: { check: must((v) => Array.isArray(v) && v.every(isString), 'a list of strings') },
  deviations: { check: must((v) => Array.isArray(v) && v.every(isString), 'a list of strings') },
  host: { check: must(isString, 'a string') },
  gpu: { check: must((v) => isInt(v) && (v as number) >= 0, 'a whole number ≥ 0') },
  startedAt: { check: must(isString, 'a string') },
  wallS: { check: must((v) => typeof v === 'number' && Number.isFinite(v), 'a number') },
  exitCode: { check: must((v) => v === null || isInt(v), 'a whole number or null') },
  failure: { check: must(isString, 'a string'), optional: true },
};

/**
 * The one place a unit record's text becomes a record: JSON, then every field checked, so no reader
 * meets a record missing what its type promises.
 */
export function parseUnitRecord(text: string): UnitRecordRead {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: `not JSON (${(err as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { problem: `not a JSON object but ${shown(value)}` };
  const fields = value as Record<string, unknown>;
  const missing: string[] = [];
  const wrong: string[] = [];
  for (const [key, rule] of Object.entries(UNIT_RECORD_SCHEMA) as [
    string,
    { check: Check; optional?: true },
  ][]) {
    if (fields[key] === undefined) {
      if (!rule.optional) missing.push(key);
      continue;
    }
    const problem = rule.check(fields[key]);
    if (problem) wrong.push(`${key}: ${problem}`);
  }
  if (missing.length === 0 && wrong.length === 0) return { record: value as UnitRecord };
  const problems = [...wrong, ...(missing.length ? [`${missing.join(', ')}: missing`] : [])];
  return { problem: `not a unit record (${problems.join('; ')})` };
}

/**
 * The row of a unit whose record could not be read: a failed cell where what the record does say puts
 * it, else where its folder (`evals/<label>/<task>_<n>shot`) does — in the row of `known`, the
 * checkpoint the readable records of the same label folder name — and a warning naming the file
 * (`file`: a path or an S3 URI).
 */
export function rowOfUnreadableUnit(
  unitFolder: string,
  text: string | undefined,
  problem: string,
  file: string,
  source: string,
  known?: UnitRecord['checkpoint'],
): ResultRow {
  let partial: Record<string, unknown> = {};
  try {
    const v: unknown = text === undefined ? undefined : JSON.parse(text);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) partial = v as Record<string, unknown>;
  } catch {
    // not JSON: the folder alone places the cell
  }
  const ck = (typeof partial.checkpoint === 'object' && partial.checkpoint) || {};
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
  const key = RESULT_KEY.exec(path.posix.basename(unitFolder));
  const folderLabel = path.posix.basename(path.posix.dirname(unitFolder));
  const label = str((ck as { label?: unknown }).label) ?? known?.label ?? folderLabel;
  const numFewshot = key ? Number(key[2]) : isInt(partial.numFewshot) ? (partial.numFewshot as number) : 0;
  return {
    checkpointId: str((ck as { id?: unknown }).id) ?? known?.id ?? label,
    label,
    task: key?.[1] ?? str(partial.task) ?? 'unknown task',
    numFewshot,
    source,
    metrics: [],
    failed: `unreadable unit record: ${problem}`,
    warning: `unit record ${file} is unreadable, its unit shown as failed: ${problem}`,
  };
}

/** The checkpoint each label folder's readable records name, by the folder (`…/evals/<label>`). */
export function checkpointsByLabelFolder(
  reads: readonly { readonly unitFolder: string; readonly read: UnitRecordRead }[],
): Map<string, UnitRecord['checkpoint']> {
  const out = new Map<string, UnitRecord['checkpoint']>();
  for (const r of reads)
    if ('record' in r.read) out.set(path.posix.dirname(r.unitFolder), r.read.record.checkpoint);
  return out;
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

interface LocalRead {
  readonly unitDir: string;
  readonly unitFolder: string;
  readonly shownFile: string;
  readonly text: string | undefined;
  readonly read: UnitRecordRead;
}

/** A local unit folder's record (its successful one, else its failed one), parsed. */
function readLocalRecord(unitDir: string, id: string, shownDir: string): LocalRead | undefined {
  const name = [UNIT_FILES.done(id), UNIT_FILES.failed(id)].find((f) => fs.existsSync(path.join(unitDir, f)));
  if (!name) return undefined;
  const base = {
    unitDir,
    unitFolder: unitDir.split(path.sep).join('/'),
    shownFile: path.join(shownDir, name),
  };
  try {
    const text = fs.readFileSync(path.join(unitDir, name), 'utf8');
    return { ...base, text, read: parseUnitRecord(text) };
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return { ...base, text: undefined, read: { problem: `cannot be read (${why})` } };
  }
}

function rowOfLocalRead(u: LocalRead, source: string, known?: UnitRecord['checkpoint']): ResultRow {
  if ('problem' in u.read)
    return rowOfUnreadableUnit(u.unitFolder, u.text, u.read.problem, u.shownFile, source, known);
  const harness = harnessResultsFile(
    listFilesUnder(u.unitDir).filter((f) => f.startsWith(`${UNIT_FILES.harness}/`)),
  );
  return rowOfUnit(
    u.read.record,
    harness ? readJsonFile(path.join(u.unitDir, harness), undefined) : undefined,
    source,
  );
}

/**
 * The row of a local unit folder (its successful record, else its failed one); a record that cannot be
 * read or is not one is a failed row with a warning naming the file where `shownDir` (default: the
 * folder itself) puts it.
 */
export function readLocalUnit(
  unitDir: string,
  id: string,
  source: string,
  shownDir = unitDir,
): ResultRow | undefined {
  const u = readLocalRecord(unitDir, id, shownDir);
  return u && rowOfLocalRead(u, source);
}

/**
 * The rows a local run folder holds: its eval units and its watcher summaries. `shownDir` is how
 * warnings name the folder (a path the reader knows it by); the folder's own path by default.
 */
export function readLocalResults(
  runDir: string,
  source: string,
  job = path.basename(runDir),
  shownDir = runDir,
): ResultRow[] {
  // A unit with both records (failed, then done in a later attempt) is one unit: read once.
  const seen = new Set<string>();
  const reads = localUnitRecords(runDir).flatMap((u) => {
    if (seen.has(`${u.folder}\u0000${u.id}`)) return [];
    seen.add(`${u.folder}\u0000${u.id}`);
    const read = readLocalRecord(path.join(runDir, u.folder), u.id, path.join(shownDir, u.folder));
    return read ? [read] : [];
  });
  const known = checkpointsByLabelFolder(reads);
  const rows = reads.map((u) => rowOfLocalRead(u, source, known.get(path.posix.dirname(u.unitFolder))));
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
