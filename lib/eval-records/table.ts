/**
 * Batch evaluation's results table: checkpoint × benchmark, with the metric each task is
 * judged by, the delta to a baseline row, and the standard error where the harness gives one; as
 * Markdown (terminal, RESULTS.md), CSV or JSON. Pure: reading the files is results.ts's.
 */

import { isObject } from '../util';

/** A metric the team judges a task by: lm_eval's `<metric>,<filter>` key (first found of `keys`). */
interface JudgedMetric {
  readonly keys: readonly string[];
  readonly label: string;
}

const m = (label: string, ...keys: string[]): JudgedMetric => ({ keys, label });
const GSM8K = [m('strict', 'exact_match,strict-match'), m('flex', 'exact_match,flexible-extract')];
const PASS_AT_1 = [m('pass@1', 'pass_at_1,none', 'pass@1,none')];

/**
 * The one table of which metric judges which task (their eval_benchmarks.py key_metrics). A task of a
 * family (`minerva_math_algebra`) takes its family's; any other task shows its first metric.
 */
export const JUDGED_BY: Readonly<Record<string, readonly JudgedMetric[]>> = {
  gsm8k: GSM8K,
  gsm8k_cot: GSM8K,
  gsm8k_cot_zeroshot: GSM8K,
  minerva_math: [m('exact_match', 'exact_match,none'), m('math_verify', 'math_verify,none')],
  hendrycks_math: [m('exact_match', 'exact_match,none')],
  ifeval: [
    m('prompt_strict', 'prompt_level_strict_acc,none'),
    m('inst_strict', 'inst_level_strict_acc,none'),
  ],
  mbpp: PASS_AT_1,
  humaneval: PASS_AT_1,
};

/** One value the table shows. */
export interface MetricValue {
  readonly metric: string;
  readonly value: number;
  readonly stderr?: number;
}

/** One (checkpoint, task) result, from any source. */
export interface ResultRow {
  /** The row's identity across sources: `<job>:step20` for a job's checkpoint, else its location. */
  readonly checkpointId: string;
  /** How the row is shown (an eval's label, else the id). */
  readonly label: string;
  readonly task: string;
  readonly numFewshot: number;
  readonly metrics: readonly MetricValue[];
  /** Where it came from: `eval job X`, `watcher of job Y`, a local folder. */
  readonly source: string;
  /** Deviations from the standard it ran with (`seed=123`). */
  readonly deviations?: readonly string[];
  /** The unit failed: its reason (no metrics). */
  readonly failed?: string;
  readonly wallS?: number;
  /** What a reader should know about this row: its record could not be read (naming the file). */
  readonly warning?: string;
}

type Json = Record<string, unknown>;

/** The metrics a task is judged by, from the results of lm_eval's results JSON (`results` or `groups`). */
export function judgedMetrics(task: string, harnessJson: unknown): MetricValue[] {
  if (!isObject(harnessJson)) return [];
  const scores = [harnessJson.results, harnessJson.groups]
    .filter(isObject)
    .map((s) => s[task])
    .find(isObject);
  if (scores) return pickMetrics(task, scores);
  // OLMES: a metrics file per task, `{task_name, metrics: {primary_score, …}}`.
  if (isObject(harnessJson.metrics) && typeof harnessJson.metrics.primary_score === 'number')
    return [{ metric: 'primary_score', value: harnessJson.metrics.primary_score }];
  return [];
}

function judgedFor(task: string): readonly JudgedMetric[] | undefined {
  if (JUDGED_BY[task]) return JUDGED_BY[task];
  const family = Object.keys(JUDGED_BY)
    .filter((k) => task.startsWith(`${k}_`))
    .sort((a, b) => b.length - a.length)[0];
  return family ? JUDGED_BY[family] : undefined;
}

function pickMetrics(task: string, scores: Json): MetricValue[] {
  const stderrOf = (key: string) => {
    const [name, filter] = key.split(',');
    const s = scores[`${name}_stderr,${filter}`];
    return typeof s === 'number' && Number.isFinite(s) ? s : undefined;
  };
  const value = (key: string, metric: string): MetricValue | undefined => {
    const v = scores[key];
    if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
    const stderr = stderrOf(key);
    return { metric, value: v, ...(stderr !== undefined ? { stderr } : {}) };
  };
  const judged = judgedFor(task);
  if (judged)
    return judged.flatMap((j) => {
      for (const k of j.keys) {
        const found = value(k, j.label);
        if (found) return [found];
      }
      return [];
    });
  const first = Object.keys(scores).find(
    (k) => k.includes(',') && !k.split(',')[0].endsWith('_stderr') && typeof scores[k] === 'number',
  );
  const found = first && value(first, first.replace(/,none$/, ''));
  return found ? [found] : [];
}

/** A column of the table: a task (with its shots) and one of its metrics. */
interface Column {
  readonly task: string;
  readonly numFewshot: number;
  readonly metric: string;
}

export interface ResultsTable {
  readonly columns: readonly Column[];
  readonly rows: readonly {
    readonly label: string;
    readonly checkpointId: string;
    readonly cells: readonly (
      | { readonly value: number; readonly stderr?: number; readonly delta?: number }
      | { readonly failed: string }
      | undefined
    )[];
    readonly sources: readonly string[];
    readonly deviations: readonly string[];
  }[];
  readonly baseline?: string;
  /** Results read more than once for the same cell (the later source's kept). */
  readonly duplicates: number;
  /** The rows' warnings (unit records that could not be read, each naming its file), once each. */
  readonly warnings: readonly string[];
}

/**
 * Rows: one per checkpoint, in first-seen order. Columns: every (task, shots, metric) seen, tasks in
 * first-seen order. A later result for the same cell replaces an earlier one (a re-run). `baseline` is
 * a row's label or id; each other row's cells get the difference to it.
 */
export function buildTable(results: readonly ResultRow[], baseline?: string): ResultsTable {
  const columns: Column[] = [];
  const colIndex = new Map<string, number>();
  const rows = new Map<
    string,
    {
      label: string;
      cells: Map<number, ResultsTable['rows'][number]['cells'][number]>;
      sources: Set<string>;
      deviations: Set<string>;
    }
  >();
  let duplicates = 0;
  const warnings = new Set<string>();
  const columnOf = (task: string, numFewshot: number, metric: string) => {
    const key = `${task}\u0000${numFewshot}\u0000${metric}`;
    let i = colIndex.get(key);
    if (i === undefined) {
      i = columns.length;
      columns.push({ task, numFewshot, metric });
      colIndex.set(key, i);
    }
    return i;
  };
  for (const r of results) {
    let row = rows.get(r.checkpointId);
    if (!row) {
      row = { label: r.label, cells: new Map(), sources: new Set(), deviations: new Set() };
      rows.set(r.checkpointId, row);
    }
    // An eval's label names the row better than an id from the watcher.
    if (row.label === r.checkpointId && r.label !== r.checkpointId) row.label = r.label;
    row.sources.add(r.source);
    if (r.warning !== undefined) warnings.add(r.warning);
    for (const d of r.deviations ?? []) row.deviations.add(`${r.task}: ${d}`);
    if (r.failed !== undefined) {
      const judged = judgedFor(r.task)?.[0]?.label ?? 'failed';
      const i = columnOf(r.task, r.numFewshot, judged);
      if (!row.cells.has(i)) row.cells.set(i, { failed: r.failed });
      continue;
    }
    for (const mv of r.metrics) {
      const i = columnOf(r.task, r.numFewshot, mv.metric);
      if (row.cells.has(i) && !('failed' in (row.cells.get(i) ?? {}))) duplicates++;
      row.cells.set(i, { value: mv.value, ...(mv.stderr !== undefined ? { stderr: mv.stderr } : {}) });
    }
  }
  // Columns grouped by task (first seen), metrics in the judged order.
  const order = columns
    .map((c, i) => ({ c, i }))
    .sort((a, b) => firstOfTask(columns, a.c) - firstOfTask(columns, b.c) || a.i - b.i);
  const base = baseline
    ? [...rows.entries()].find(([id, r]) => r.label === baseline || id === baseline)?.[1]
    : undefined;
  return {
    columns: order.map((o) => o.c),
    rows: [...rows.entries()]
      .sort(([a], [b]) => compareIds(a, b))
      .map(([checkpointId, r]) => ({
        label: r.label,
        checkpointId,
        sources: [...r.sources],
        deviations: [...r.deviations],
        cells: order.map(({ i }) => {
          const cell = r.cells.get(i);
          const b = base?.cells.get(i);
          if (!cell || 'failed' in cell || !base || base === r || !b || 'failed' in b) return cell;
          return { ...cell, delta: cell.value - b.value };
        }),
      })),
    ...(base ? { baseline } : {}),
    duplicates,
    warnings: [...warnings],
  };
}

/**
 * Rows: models and folders first (as seen), then each job's checkpoints in step order, `final` last
 * (a job's `step100` from its watcher and from an eval job sit together).
 */
function compareIds(a: string, b: string): number {
  const key = (id: string) => {
    const m = /^(.+):(?:step(\d+)|final)$/.exec(id);
    return m ? { job: m[1], step: m[2] === undefined ? Infinity : Number(m[2]) } : undefined;
  };
  const ka = key(a);
  const kb = key(b);
  if (!ka || !kb) return (ka ? 1 : 0) - (kb ? 1 : 0);
  return ka.job.localeCompare(kb.job) || ka.step - kb.step;
}

function firstOfTask(columns: readonly Column[], c: Column): number {
  return columns.findIndex((x) => x.task === c.task && x.numFewshot === c.numFewshot);
}

const pct = (v: number) => (v * 100).toFixed(1);
const signed = (v: number) => `${v >= 0 ? '+' : '−'}${Math.abs(v * 100).toFixed(1)}`;

/** Markdown: values in %, `± stderr`, `(+1.2)` against the baseline, `FAILED` for a failed unit. */
export function tableMarkdown(table: ResultsTable): string {
  const warned = table.warnings.length
    ? `\nWarnings:\n${table.warnings.map((w) => `- ${w}`).join('\n')}\n`
    : '';
  if (table.rows.length === 0) return `No evaluation results found.\n${warned}`;
  const header = ['checkpoint', ...table.columns.map((c) => `${c.task} (${c.numFewshot}-shot) ${c.metric}`)];
  const body = table.rows.map((row) => [
    row.label === table.baseline ? `${row.label} (baseline)` : row.label,
    ...row.cells.map((cell) => {
      if (!cell) return '–';
      if ('failed' in cell) return 'FAILED';
      let text = pct(cell.value);
      if (cell.stderr !== undefined) text += ` ± ${pct(cell.stderr)}`;
      if (cell.delta !== undefined) text += ` (${signed(cell.delta)})`;
      return text;
    }),
  ]);
  // Aligned as a terminal shows it (and as prettier would): labels left, numbers right.
  const widths = header.map((h, i) => Math.max(3, h.length, ...body.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  const lines = [
    `| ${header.map((h, i) => h.padEnd(widths[i])).join(' | ')} |`,
    `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`,
    ...body.map(line),
  ];
  const notes: string[] = [];
  for (const row of table.rows)
    if (row.deviations.length > 0)
      notes.push(`- ${row.label}: not the standard (${row.deviations.join('; ')})`);
  const failed = table.rows.flatMap((r) =>
    r.cells.flatMap((c, i) =>
      c && 'failed' in c ? [`- ${r.label} × ${table.columns[i].task}: ${c.failed}`] : [],
    ),
  );
  if (failed.length > 0) notes.push('Failed units:', ...failed);
  return `${lines.join('\n')}\n${notes.length ? `\n${notes.join('\n')}\n` : ''}${warned}`;
}

function csvField(v: string | number | undefined): string {
  if (v === undefined) return '';
  const s = String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** CSV, one line per cell (long form: what scripts want). */
export function tableCsv(table: ResultsTable): string {
  const out = ['checkpoint,checkpoint_id,task,num_fewshot,metric,value,stderr,delta,failed'];
  for (const row of table.rows)
    row.cells.forEach((cell, i) => {
      if (!cell) return;
      const c = table.columns[i];
      const v = 'failed' in cell ? undefined : cell;
      out.push(
        [
          row.label,
          row.checkpointId,
          c.task,
          c.numFewshot,
          c.metric,
          v?.value,
          v?.stderr,
          v?.delta,
          'failed' in cell ? cell.failed : undefined,
        ]
          .map(csvField)
          .join(','),
      );
    });
  return `${out.join('\n')}\n`;
}

export function tableJson(table: ResultsTable): string {
  return `${JSON.stringify(
    {
      baseline: table.baseline ?? null,
      columns: table.columns,
      rows: table.rows.map((r) => ({
        label: r.label,
        checkpointId: r.checkpointId,
        sources: r.sources,
        deviations: r.deviations,
        cells: r.cells.map((c) => c ?? null),
      })),
      warnings: table.warnings,
    },
    null,
    2,
  )}\n`;
}
