/**
 * Batch evaluation, what the command line names: checkpoint references and benchmarks.
 * Parsing only (pure); mapping a reference to S3 and checking it is complete come later.
 *
 * `--checkpoints [label=]<ref>`, where `<ref>` is
 * - `<job>`: the job's final checkpoint;
 * - `<job>:step20,step40,final` or `<job>:all`;
 * - `s3://bucket/prefix/` (one checkpoint folder);
 * - a model name (`Qwen/Qwen3-1.7B-Base`: mapped as submit maps models);
 * - a local folder (`./…`, `../…`, `/…`, `~/…`: local runs).
 *
 * `--benchmarks task:num_fewshot,…` (`gsm8k_cot:8,minerva_math:4,ifeval:0`).
 */

import type { SourceLocation } from '../errors';

export type CheckpointRef =
  | { readonly kind: 'job'; readonly job: string; readonly select: 'final' | 'all' | readonly string[] }
  | { readonly kind: 's3'; readonly uri: string }
  | { readonly kind: 'model'; readonly name: string }
  | { readonly kind: 'local'; readonly path: string };

export interface LabelledRef {
  /** The column the results table gives it: the label, else the reference as written. */
  readonly label: string;
  readonly ref: CheckpointRef;
  /** As the user wrote it (for messages). */
  readonly given: string;
  /** Where an eval config wrote it: problems found later (in S3) point there. */
  readonly source?: { readonly where: string; readonly location: SourceLocation };
}

export interface Benchmark {
  readonly task: string;
  readonly numFewshot: number;
}

export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

/** More shots than this do not fit the standard's 4096-token context with any task we run. */
export const MAX_FEWSHOT = 64;

const JOB_NAME = /^[A-Za-z0-9](-*[A-Za-z0-9]){0,62}$/;
const STEP = /^(step\d+|final)$/;
const LABEL = /^[A-Za-z0-9][\w.-]{0,63}$/;
const MODEL = /^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/;
const TASK = /^[A-Za-z0-9][\w.-]*$/;

function fail<T>(problem: string): Parsed<T> {
  return { ok: false, problem };
}

/** One `--checkpoints` value. */
export function parseCheckpointRef(given: string): Parsed<LabelledRef> {
  const text = given.trim();
  const eq = text.indexOf('=');
  // A label is `name=` before anything with a slash or colon in it.
  const labelled = eq > 0 && !/[/:]/.test(text.slice(0, eq));
  const label = labelled ? text.slice(0, eq) : undefined;
  const body = labelled ? text.slice(eq + 1) : text;
  if (label !== undefined && !LABEL.test(label))
    return fail(
      `"${label}" is not a label: letters, digits, "_", "." and "-", e.g. base=Qwen/Qwen3-1.7B-Base`,
    );
  const ref = parseRefBody(body);
  if (!ref.ok) return ref;
  return { ok: true, value: { label: label ?? body, ref: ref.value, given: text } };
}

function parseRefBody(body: string): Parsed<CheckpointRef> {
  if (body === '') return fail('an empty checkpoint reference');
  if (body.startsWith('s3://')) {
    if (!/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]\/.+/.test(body))
      return fail(`${body} is not an S3 folder: s3://<bucket>/<prefix>/`);
    return { ok: true, value: { kind: 's3', uri: body.endsWith('/') ? body : `${body}/` } };
  }
  if (/^(\.{1,2}\/|\/|~\/)/.test(body)) return { ok: true, value: { kind: 'local', path: body } };
  if (MODEL.test(body)) return { ok: true, value: { kind: 'model', name: body } };
  const colon = body.indexOf(':');
  const job = colon < 0 ? body : body.slice(0, colon);
  if (!JOB_NAME.test(job))
    return fail(
      `"${body}" is neither a job name, an s3:// folder, a model name (org/name) nor a local folder (./…, /…)`,
    );
  if (colon < 0) return { ok: true, value: { kind: 'job', job, select: 'final' } };
  const list = body.slice(colon + 1);
  if (list === 'all') return { ok: true, value: { kind: 'job', job, select: 'all' } };
  const steps = list.split(',').map((s) => s.trim());
  const bad = steps.filter((s) => !STEP.test(s));
  if (steps.length === 0 || bad.length > 0)
    return fail(
      `${job}:${list}: ${bad.map((b) => `"${b}"`).join(', ') || 'nothing'} is not a checkpoint: stepN or final, comma-separated, or all`,
    );
  return { ok: true, value: { kind: 'job', job, select: [...new Set(steps)] } };
}

/** One `--benchmarks` value: `task:num_fewshot` items, comma-separated. */
export function parseBenchmarks(given: string): Parsed<Benchmark[]> {
  const items = given
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) return fail('no benchmarks: e.g. gsm8k_cot:8,minerva_math:4,ifeval:0');
  const out: Benchmark[] = [];
  for (const item of items) {
    const m = /^([^:]+):(\d+)$/.exec(item);
    if (!m || !TASK.test(m[1]))
      return fail(`"${item}" is not task:num_fewshot (e.g. gsm8k_cot:8; ifeval:0 for zero-shot)`);
    const b = { task: m[1], numFewshot: Number(m[2]) };
    if (b.numFewshot > MAX_FEWSHOT)
      return fail(
        `${item}: ${b.numFewshot} shots; at most ${MAX_FEWSHOT} (the standard's 4096-token context holds no more)`,
      );
    const same = out.find((o) => o.task === b.task);
    if (same)
      return fail(
        same.numFewshot === b.numFewshot
          ? `${b.task} is listed twice`
          : `${b.task} is listed with ${same.numFewshot} and ${b.numFewshot} shots: one per run`,
      );
    out.push(b);
  }
  return { ok: true, value: out };
}
