/*
 * An order file against its dataset's ids, as the trainer will use it: each line stripped, empty lines
 * skipped (S/data.py:1276-1280); ids the dataset lacks dropped without an error (S/data.py:1281);
 * in `mode: sequential`, the first `count` of the ids kept (S/data.py:1293-1296); each id processed
 * once however often it is listed (DataIterator's status per prompt_id, S/data.py:1196-1200).
 * Pure: the pre-flight and `rlvr lint` turn the result into problems and a plan line.
 */

export interface OrderLine {
  readonly id: string;
  /** 1-based line number in the order file. */
  readonly line: number;
}

/**
 * Python's whitespace (`str.isspace()`), which `str.strip()` removes. Unlike JavaScript's `trim()`, it
 * keeps U+FEFF: an order file saved with a byte-order mark gives the trainer a first id that starts
 * with it, which no dataset has.
 */
const PY_SPACE =
  '[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const PY_STRIP = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, 'g');

/**
 * The ids an order file lists, with their line numbers, as the trainer reads it (S/data.py:1279-1280:
 * `open(order, "r")`, its lines with universal newlines, each `line.strip()`, blank ones skipped).
 */
export function parseOrderFile(text: string): OrderLine[] {
  const out: OrderLine[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    const id = lines[i].replace(PY_STRIP, '');
    if (id) out.push({ id, line: i + 1 });
  }
  return out;
}

export interface CurriculumCheckOptions {
  /** The entry's `count`, when it has one. */
  readonly count?: number;
  /** `load_mixed`'s mode (default `weighted`): `count` is applied in `sequential` mode only. */
  readonly mode?: string;
  /** How many missing ids and duplicates to name (default 10). */
  readonly firstN?: number;
}

export interface CurriculumCheck {
  /** Non-empty lines of the order file. */
  readonly ids: number;
  /** Distinct ids among them. */
  readonly distinctIds: number;
  /** Distinct ids the dataset has: its prompts. */
  readonly datasetPrompts: number;
  /** Order-file ids the dataset does not have (each listing counted), and the first of them. */
  readonly missing: {
    readonly count: number;
    readonly distinct: number;
    readonly first: readonly OrderLine[];
  };
  /** Ids listed more than once: how many such ids, and the first with all their lines. */
  readonly duplicates: {
    readonly count: number;
    readonly first: readonly { readonly id: string; readonly lines: readonly number[] }[];
  };
  /** Distinct dataset ids the training will use (present in the order file, cut by `count`). */
  readonly used: number;
  /** Dataset prompts the order file does not list. */
  readonly leftOut: number;
  /** `count` against what the order file leaves: too large when it asks for more prompts than remain. */
  readonly count?: {
    readonly requested: number;
    /** Distinct present ids in the order file. */
    readonly available: number;
    readonly tooLarge: boolean;
    /** true when the mode is not `sequential`: the trainer ignores `count`. */
    readonly ignored: boolean;
  };
  /** A few of the dataset's ids, to show what they look like. */
  readonly datasetExamples: readonly string[];
  /** Missing ids that look like the dataset's (same prefix, a number) but lie past its highest number. */
  readonly beyondEnd: number;
  /** No missing ids. Duplicates and an ignored or too-large count are warnings. */
  readonly ok: boolean;
}

/** Splits `gsm8k_12` into `gsm8k_` and 12. */
function numbered(id: string): { prefix: string; n: number } | undefined {
  const m = /^(.*?)(\d+)$/.exec(id);
  return m ? { prefix: m[1], n: Number(m[2]) } : undefined;
}

export function checkCurriculum(
  orderText: string,
  datasetIds: Iterable<string>,
  options: CurriculumCheckOptions = {},
): CurriculumCheck {
  const firstN = options.firstN ?? 10;
  const lines = parseOrderFile(orderText);
  const dataset = datasetIds instanceof Set ? (datasetIds as ReadonlySet<string>) : new Set(datasetIds);

  const missing: OrderLine[] = [];
  const missingDistinct = new Set<string>();
  const seen = new Map<string, number[]>();
  const kept: string[] = []; // the present ids in file order, repeats included: what the trainer keeps
  for (const l of lines) {
    const at = seen.get(l.id);
    if (at) at.push(l.line);
    else seen.set(l.id, [l.line]);
    if (dataset.has(l.id)) kept.push(l.id);
    else {
      missing.push(l);
      missingDistinct.add(l.id);
    }
  }
  const repeated = [...seen].filter(([, at]) => at.length > 1);
  const presentDistinct = seen.size - missingDistinct.size;

  const sequential = options.mode === 'sequential';
  const cut = sequential && options.count !== undefined ? kept.slice(0, Math.max(0, options.count)) : kept;
  const used = new Set(cut).size;

  // How the dataset's own ids are numbered, to tell "past its end" from "another naming".
  const maxByPrefix = new Map<string, number>();
  const examples: string[] = [];
  for (const id of dataset) {
    if (examples.length < 3) examples.push(id);
    const p = numbered(id);
    if (p) maxByPrefix.set(p.prefix, Math.max(maxByPrefix.get(p.prefix) ?? -1, p.n));
  }
  let beyondEnd = 0;
  for (const id of missingDistinct) {
    const p = numbered(id);
    const max = p && maxByPrefix.get(p.prefix);
    if (p && max !== undefined && p.n > max) beyondEnd++;
  }

  return {
    ids: lines.length,
    distinctIds: seen.size,
    datasetPrompts: dataset.size,
    missing: { count: missing.length, distinct: missingDistinct.size, first: missing.slice(0, firstN) },
    duplicates: {
      count: repeated.length,
      first: repeated.slice(0, firstN).map(([id, at]) => ({ id, lines: at })),
    },
    used,
    leftOut: dataset.size - used,
    count:
      options.count === undefined
        ? undefined
        : {
            requested: options.count,
            available: presentDistinct,
            tooLarge: options.count > presentDistinct,
            ignored: !sequential,
          },
    datasetExamples: examples,
    beyondEnd,
    ok: missing.length === 0,
  };
}

const n = (x: number) => x.toLocaleString('en-US');
const plural = (x: number, one: string, many = `${one}s`) => `${n(x)} ${x === 1 ? one : many}`;

/**
 * The plan's line: "curriculum: 4,691 ids, all in gsm8k_train (7,473 prompts; 2,782 not in the
 * curriculum)", or with what is wrong.
 */
export function formatCurriculumLine(check: CurriculumCheck, copy: string): string {
  const where = check.missing.count ? `${n(check.missing.count)} not in ${copy}` : `all in ${copy}`;
  const extra: string[] = [];
  if (check.duplicates.count)
    extra.push(plural(check.duplicates.count, 'id listed more than once', 'ids listed more than once'));
  if (check.count?.tooLarge && !check.count.ignored) {
    extra.push(`count ${n(check.count.requested)} > ${n(check.count.available)} usable`);
  }
  if (check.count?.ignored) extra.push(`count ${n(check.count.requested)} ignored (mode is not sequential)`);
  const tail = extra.length ? `; ${extra.join('; ')}` : '';
  return `curriculum: ${plural(check.ids, 'id')}, ${where} (${plural(check.datasetPrompts, 'prompt')}; ${n(check.leftOut)} not in the curriculum${tail})`;
}

/** The lines of the first missing ids: "line 12: gsm8k_9001". */
function missingList(check: CurriculumCheck): string {
  const more = check.missing.count - check.missing.first.length;
  const shown = check.missing.first.map((m) => `line ${m.line}: ${m.id}`).join(', ');
  return more > 0 ? `${shown}, … (${n(more)} more)` : shown;
}

export interface CurriculumMessage {
  readonly message: string;
  readonly hint?: string;
}

/**
 * The problem for missing ids (exit 2, unless acknowledged with --allow-missing-order-ids), or
 * undefined when every id is there.
 */
export function missingIdsProblem(
  check: CurriculumCheck,
  order: string,
  copy: string,
): CurriculumMessage | undefined {
  if (check.ok) return undefined;
  const why =
    check.beyondEnd > 0
      ? ` ${plural(check.beyondEnd, 'of them is', 'of them are')} past the dataset's last id (another split or a bigger copy?).`
      : '';
  // With none left the trainer stops at start-up ("has no valid prompt_ids", S/data.py:1282-1283).
  const effect =
    check.missing.count === check.ids
      ? 'the trainer would stop at start-up with no valid prompt_ids'
      : 'the trainer would skip them without an error';
  return {
    message:
      `${plural(check.missing.count, 'id')} of the ${n(check.ids)} in ${order} ${check.missing.count === 1 ? 'is' : 'are'} not in ${copy} ` +
      `(${n(check.datasetPrompts)} prompts): ${effect}. ${missingList(check)}.${why}`,
    hint:
      `${copy}'s ids look like ${check.datasetExamples.join(', ') || '(none: the copy is empty)'}. ` +
      'Fix the order file or the dataset, or pass --allow-missing-order-ids to train on the ids that are there.',
  };
}

/** Warnings: duplicates, a count larger than what remains, a count the mode ignores. */
export function curriculumWarnings(check: CurriculumCheck, order: string): CurriculumMessage[] {
  const out: CurriculumMessage[] = [];
  if (check.duplicates.count) {
    const shown = check.duplicates.first.map((d) => `${d.id} (lines ${d.lines.join(', ')})`).join(', ');
    const more = check.duplicates.count - check.duplicates.first.length;
    out.push({
      message: `${order} lists ${plural(check.duplicates.count, 'id')} more than once: ${shown}${more > 0 ? `, … (${n(more)} more)` : ''}`,
      hint: 'Each prompt is trained on once: the repeats do not add steps.',
    });
  }
  const c = check.count;
  if (c && !c.ignored && c.tooLarge) {
    out.push({
      message: `count ${n(c.requested)} asks for more prompts than ${order} leaves in the dataset (${n(c.available)})`,
      hint: `The trainer takes ${n(c.available)}; set count to at most that, or add ids.`,
    });
  }
  if (c?.ignored) {
    out.push({
      message: `count ${n(c.requested)} has no effect: the trainer applies count in mode: sequential only`,
    });
  }
  return out;
}

/** The warning for an order file whose ids could not be checked, and why. */
export function uncheckedWarning(order: string, loader: string, reason: string): CurriculumMessage {
  return {
    message: `the ids in ${order} could not be checked against the ${loader} dataset: ${reason}`,
    hint: 'Make sure every id exists: the trainer skips unknown ids without an error.',
  };
}
