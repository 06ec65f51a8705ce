import { ID_RULES } from '../curriculum';
import { UserError } from '../errors';
import { parseS3Uri } from '../layout';
import type { MergedPasskResults } from '../passk-records';
import { orderKeyLabel, passAtKAsTheirCsv, pyFixed6Micros, RATE_KEY, type OrderKey } from './order-key';

/*
 * A curriculum (an order file: one prompt id per line, the form `load_mixed` reads, S/data.py:1276-1280)
 * made from pass@k results: the prompts sorted by how often the model solved them.
 *
 * The ids are written exactly as the results give them. That is right only where the pass@k script's
 * loader numbers the prompts as the trainer's loader does (their scripts/eval_pass_at_k.py against
 * src/rlvr_experiments/data.py, read for this):
 * - gsm8k: both `gsm8k_<row index>` over the same copy (_load_hf_gsm8k; load_gsm8k): the same ids.
 * - math: both `math_<type lower>_<index within type>`, counted after the `level` filter (_load_hf_math is
 *   a copy of load_math): the same ids for the same `level`, so the level is part of what must match and
 *   the config has to repeat it.
 * - deepscaler, mbpp, humaneval, if_multi_constraints, allenai_rlvr: the script calls the trainer's own
 *   loader (its Ray fallback, _load_dataset_items_no_ray): the same ids.
 * - ifeval: refused. The script's _load_hf_ifeval reads google/IFEval (541 prompts) and the trainer's
 *   load_ifeval reads allenai/RLVR-IFeval (14,973), both numbered `ifeval_<i>`: every id exists in the
 *   trainer's copy and names another prompt, so the pre-flight would pass an order file that trains on
 *   the wrong prompts.
 * - aime, beyondaime, ifbench: refused; no trainer loader reads them (DATASET_LOADERS, S/data.py:1150).
 */

export type OrderKind = 'easy-first' | 'hard-first' | 'band';

export interface BuildOrderOptions {
  readonly order: OrderKind;
  /**
   * What the prompts are sorted by (and what min/max bound): the pooled pass rate (default), or the
   * unbiased pass@K of the pooled counts written to 6 decimals as their CSV held it (see order-key.ts).
   */
  readonly key?: OrderKey;
  /** Lowest key value kept (inclusive). Band default 0; other orders keep all unless given. */
  readonly min?: number;
  /** Key values kept are below this (exclusive). Band default 0.5; other orders keep all unless given. */
  readonly max?: number;
  /** The dataset copy's ids in row order, when known: names prompts without a result, breaks ties. */
  readonly datasetIds?: readonly string[];
  /**
   * Where prompts without a result go. Their trainer trains only on the ids in the order file, so a
   * campaign with gaps (a missing shard, a cut line, dataset prompts no result measured) is refused
   * unless this says: at the start, at the end (in the dataset's row order), or left out.
   */
  readonly missing?: MissingPlacement;
}

export type MissingPlacement = 'first' | 'last' | 'drop';
export const MISSING_PLACEMENTS: readonly MissingPlacement[] = ['first', 'last', 'drop'];

/** What the results could not give: each missing shard, cut or bad line, and duplicate, by source. */
export interface CampaignGaps {
  readonly missingShards: readonly { readonly source: string; readonly shards: readonly number[] }[];
  readonly badLines: readonly { readonly source: string; readonly count: number; readonly first: string }[];
  readonly duplicates: readonly { readonly source: string; readonly count: number }[];
}

/** Campaign settings that differ between the pooled results: their rates were pooled anyway. */
export interface OrderConflict {
  /** `model`, `n`, `trainer` or `sampling.<flag>`. */
  readonly what: string;
  readonly values: readonly string[];
}

export interface CurriculumOrder {
  /** The trainer's loader name the ids belong to (`gsm8k`). */
  readonly dataset: string;
  /** The split the results measured, when their plan says. */
  readonly split?: string;
  /** MATH levels the results measured (`3,4,5`), when their plan gives any. */
  readonly level?: string;
  readonly ids: string[];
  /** One id per line, a newline after the last. */
  readonly text: string;
  /** What the ids were sorted by: `rate` or `pass@K`. */
  readonly key: string;
  /** The bounds applied to the key's value (min ≤ value < max); null where none was. */
  readonly band: { readonly min: number | null; readonly max: number | null };
  /** Pooled pass rate per id, for the ids written. */
  readonly rates: ReadonlyMap<string, number>;
  /** The sort key's value per id written (for pass@K: 6 decimals, as their CSV held it). */
  readonly keyValues: ReadonlyMap<string, number>;
  /** What the results could not give (named whatever --missing says). */
  readonly gaps: CampaignGaps;
  /** Where prompts without a result went, when the user said. */
  readonly missing?: MissingPlacement;
  /** Prompts without a result written at the start or the end (--missing first|last). */
  readonly placed: readonly string[];
  readonly excluded: {
    /** Dataset prompts no result measured, in row order (only when the dataset's ids were given). */
    readonly noResult: string[];
    /** Prompts measured whose key value is outside [min, max). */
    readonly outsideBand: number;
  };
  readonly conflicts: OrderConflict[];
  /** Prompts measured by more than one of the results (their counts summed). */
  readonly pooled: number;
}

/** The script's datasets whose ids the trainer's loader shares (see the note at the top). */
const SAME_IDS = new Set([
  'gsm8k',
  'math',
  'deepscaler',
  'mbpp',
  'humaneval',
  'if_multi_constraints',
  'allenai_rlvr',
]);

const REFUSED: Readonly<Record<string, string>> = {
  ifeval:
    "their pass@k script's ifeval loader reads google/IFEval (541 prompts) and the trainer's reads " +
    'allenai/RLVR-IFeval (14,973), both numbering them ifeval_<i>: the same ids name different prompts, so ' +
    'an order file made from these results would pass the id check and train on the wrong prompts',
  aime: 'no trainer loader reads aime (the trainer has no dataset these ids belong to)',
  beyondaime: 'no trainer loader reads beyondaime (the trainer has no dataset these ids belong to)',
  ifbench: 'no trainer loader reads ifbench (the trainer has no dataset these ids belong to)',
};

/** The script's dataset an id belongs to, by the prefix its loader gives (for results without a plan). */
export function datasetOfId(id: string): string | undefined {
  if (/^gsm8k_\d+$/.test(id)) return 'gsm8k';
  if (/^math_.+_\d+$/.test(id)) return 'math';
  if (/^HumanEval\/\d+$/.test(id)) return 'humaneval';
  if (/^if_multi_\d+$/.test(id)) return 'if_multi_constraints';
  if (/^allenai_.+_\d+$/.test(id)) return 'allenai_rlvr';
  const m = /^(beyondaime|aime|ifeval|ifbench|mbpp|deepscaler)_\d+$/.exec(id);
  return m?.[1];
}

const few = (ids: readonly string[], n = 5) =>
  ids.length > n
    ? `${ids.slice(0, n).join(', ')}, … (${ids.length.toLocaleString('en-US')} in all)`
    : ids.join(', ');

/** Levels as a set: `load_math` tests membership, so `5,3,4` and `3,4,5` keep the same rows. */
function normalLevel(level: string | undefined): string | undefined {
  if (level === undefined || level.trim() === '') return undefined;
  const parts = level
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return [...new Set(parts)].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b)).join(',');
}

interface Measured {
  readonly dataset: string;
  readonly split?: string;
  readonly level?: string;
  readonly source: string;
}

/** Which dataset, split and level each result measured; several of them → UserError naming them. */
function whatWasMeasured(results: readonly MergedPasskResults[]): Measured {
  const each: Measured[] = results.map((r) => {
    if (r.campaign) {
      return {
        dataset: r.campaign.dataset,
        split: r.campaign.split,
        level: normalLevel(r.campaign.level),
        source: r.source,
      };
    }
    // A bare folder of the script's shards: the ids say which loader made them.
    const found = new Set<string>();
    const unknown: string[] = [];
    for (const p of r.prompts) {
      const d = datasetOfId(p.promptId);
      if (d) found.add(d);
      else if (unknown.length < 3) unknown.push(p.promptId);
    }
    if (unknown.length || found.size !== 1) {
      throw new UserError(
        `${r.source} has no campaign plan and its ids do not say which dataset they are of ` +
          `(${unknown.length ? `e.g. ${unknown.join(', ')}` : [...found].join(', ') || 'no prompts'})`,
      );
    }
    return { dataset: [...found][0], source: r.source };
  });
  const describe = (m: Measured) =>
    `${m.source}: ${m.dataset}${m.split ? ` ${m.split}` : ''}${m.level ? ` level ${m.level}` : ''}`;
  const datasets = new Set(each.map((m) => m.dataset));
  // Split and level are known from a plan only (a bare folder's ids do not say); no level is a value too.
  const planned = each.filter((_, i) => results[i].campaign);
  const splits = new Set(planned.map((m) => m.split));
  const levels = new Set(planned.map((m) => m.level ?? ''));
  if (datasets.size > 1 || splits.size > 1 || levels.size > 1) {
    throw new UserError(
      `the results measure different prompts and cannot make one order file: ${each.map(describe).join('; ')}` +
        (levels.size > 1 ? ' (the MATH level filter changes which prompt each id names)' : ''),
    );
  }
  const first = planned[0] ?? each[0];
  return { dataset: first.dataset, split: first.split, level: first.level, source: first.source };
}

/** Campaign settings that differ between results, for the caller to show: their rates were pooled. */
function campaignConflicts(results: readonly MergedPasskResults[]): OrderConflict[] {
  const campaigns = results.flatMap((r) => (r.campaign ? [r.campaign] : []));
  if (campaigns.length < 2) return [];
  const facets = new Map<string, Set<string>>();
  const add = (what: string, value: string) => {
    let s = facets.get(what);
    if (!s) facets.set(what, (s = new Set()));
    s.add(value);
  };
  const flags = new Set(campaigns.flatMap((c) => Object.keys(c.sampling)));
  for (const c of campaigns) {
    add('model', c.model.id);
    add('n', String(c.n));
    add('trainer', c.trainer);
    for (const f of flags) add(`sampling.${f}`, c.sampling[f] ?? '(unset)');
  }
  return [...facets]
    .filter(([, values]) => values.size > 1)
    .map(([what, values]) => ({ what, values: [...values] }));
}

/** `gsm8k_2` before `gsm8k_10`: runs of digits compared as numbers, the rest as text. */
export function naturalCompare(a: string, b: string): number {
  const ca = a.match(/\d+|\D+/g) ?? [];
  const cb = b.match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) {
    const x = ca[i];
    const y = cb[i];
    if (x === y) continue;
    const dx = /^\d/.test(x);
    const dy = /^\d/.test(y);
    if (dx && dy) {
      // Compared as digit strings (no Number overflow): strip leading zeros, the longer is larger.
      const sx = x.replace(/^0+/, '');
      const sy = y.replace(/^0+/, '');
      if (sx.length !== sy.length) return sx.length - sy.length;
      if (sx !== sy) return sx < sy ? -1 : 1;
      continue; // 01 and 1: decided by the plain comparison at the end
    }
    return x < y ? -1 : 1;
  }
  if (ca.length !== cb.length) return ca.length - cb.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The order file for `results` (one or several campaigns of the same dataset, split and level).
 * A prompt's rate is pooled over the results: Σc / Σn, each completion weighing the same.
 * Ties are broken by the dataset's row order when `datasetIds` are given, else by `naturalCompare`.
 * `band` keeps min ≤ rate < max, half-open as their build_sft_from_pass_at_k.py's
 * `--min-pass-rate`/`--max-pass-rate` (defaults 0 and 0.5), easiest first.
 */
export function buildOrder(
  results: readonly MergedPasskResults[],
  options: BuildOrderOptions,
): CurriculumOrder {
  if (results.length === 0) throw new UserError('no pass@k results to make an order file from');
  const measured = orderableDataset(results);
  const { min, max } = bandOf(options);
  const sums = pooledCounts(results);
  const { rowOf, noResult } = againstDatasetIds(sums, options.datasetIds);
  const key = options.key ?? RATE_KEY;
  checkKeyFits(key, sums);
  const keyed = keyValuesOf(sums, key, { min, max });
  // Prompts no completion scored: no rate to sort by (named with the others when the dataset is known).
  if (!rowOf) noResult.push(...keyed.unscored);
  const gaps = gapsOf(results);
  refuseGapsUnlessPlaced(gaps, rowOf ? noResult : [], options.missing, rowOf !== undefined);

  const descending = options.order !== 'hard-first';
  const tie = rowOf ? (a: string, b: string) => rowOf.get(a)! - rowOf.get(b)! : naturalCompare;
  // Ties in row order whichever the direction, as Python's stable sort (reverse=True too) leaves them.
  const ids = [...keyed.rates.keys()].sort((a, b) => {
    const d = keyed.sortValue.get(a)! - keyed.sortValue.get(b)!;
    if (d !== 0) return descending ? -d : d;
    return tie(a, b);
  });
  if (ids.length === 0) {
    throw new UserError(
      `no prompt of the ${sums.size.toLocaleString('en-US')} measured has a ${key.kind === 'rate' ? 'pass rate' : orderKeyLabel(key)} in [${min}, ${max}): the order file would be empty`,
    );
  }

  const placed = options.missing === 'first' || options.missing === 'last' ? noResult : [];
  const written = options.missing === 'first' ? [...placed, ...ids] : [...ids, ...placed];
  return {
    dataset: measured.dataset,
    ...(measured.split !== undefined ? { split: measured.split } : {}),
    ...(measured.level !== undefined ? { level: measured.level } : {}),
    ids: written,
    text: written.join('\n') + '\n',
    key: orderKeyLabel(key),
    band: { min: Number.isFinite(min) ? min : null, max: Number.isFinite(max) ? max : null },
    rates: keyed.rates,
    keyValues: keyed.keyValues,
    gaps,
    ...(options.missing ? { missing: options.missing } : {}),
    placed,
    excluded: { noResult: placed.length ? [] : noResult, outsideBand: keyed.outsideBand },
    conflicts: campaignConflicts(results),
    pooled: [...sums.values()].filter((s) => s.seen > 1).length,
  };
}

/** What the results measured, if the trainer's ids are known to be theirs; else why no order file. */
function orderableDataset(results: readonly MergedPasskResults[]): Measured {
  const measured = whatWasMeasured(results);
  const refused = REFUSED[measured.dataset];
  if (refused) throw new UserError(`cannot make an order file from ${measured.dataset} results: ${refused}`);
  if (!SAME_IDS.has(measured.dataset) || !ID_RULES[measured.dataset]) {
    throw new UserError(
      `cannot make an order file from ${measured.dataset} results: whether their ids are the trainer's is not known`,
    );
  }
  return measured;
}

/** The values kept, [min, max): band's defaults are their script's; the other orders keep all unless given. */
function bandOf(options: BuildOrderOptions): { min: number; max: number } {
  const band = options.order === 'band';
  const min = options.min ?? (band ? 0 : -Infinity);
  const max = options.max ?? (band ? 0.5 : Infinity);
  if (Number.isNaN(min) || Number.isNaN(max) || min >= max) {
    throw new UserError(
      `the pass-rate band [${options.min}, ${options.max}) is empty: min must be below max`,
    );
  }
  return { min, max };
}

type Pooled = Map<string, { c: number; n: number; seen: number }>;

/** Σc and Σn per prompt over the results, in the order first read; ids that cannot be written refused. */
function pooledCounts(results: readonly MergedPasskResults[]): Pooled {
  const sums: Pooled = new Map();
  for (const r of results) {
    for (const p of r.prompts) {
      const s = sums.get(p.promptId);
      if (s) {
        s.c += p.c;
        s.n += p.n;
        s.seen++;
      } else sums.set(p.promptId, { c: p.c, n: p.n, seen: 1 });
    }
  }
  // An id the trainer's line.strip() would change cannot be matched: it cannot be written either.
  const unwritable = [...sums.keys()].filter((id) => id === '' || /^\s|\s$|[\r\n]/.test(id));
  if (unwritable.length) {
    throw new UserError(
      `prompt ids with leading, trailing or inner line-breaking whitespace: ${few(unwritable.map((id) => JSON.stringify(id)))}`,
    );
  }
  return sums;
}

/**
 * With the dataset copy's ids: each id's row (for ties and placement), the copy's prompts no result
 * measured, and a refusal of results whose ids the copy does not have.
 */
function againstDatasetIds(
  sums: Pooled,
  datasetIds: readonly string[] | undefined,
): { rowOf?: Map<string, number>; noResult: string[] } {
  const noResult: string[] = [];
  if (!datasetIds) return { noResult };
  const rowOf = new Map<string, number>();
  datasetIds.forEach((id, i) => {
    if (!rowOf.has(id)) rowOf.set(id, i);
  });
  const foreign = [...sums.keys()].filter((id) => !rowOf.has(id));
  if (foreign.length) {
    // The pre-flight would refuse the file; these results are of another copy, split or level.
    throw new UserError(
      `${foreign.length.toLocaleString('en-US')} of the ${sums.size.toLocaleString('en-US')} prompt ids in the ` +
        `results are not in the dataset copy (${datasetIds.length.toLocaleString('en-US')} prompts): ` +
        `${few(foreign)}. The results measured another copy, split or level.`,
    );
  }
  for (const id of rowOf.keys()) {
    const s = sums.get(id);
    if (!s || s.n === 0) noResult.push(id);
  }
  return { rowOf, noResult };
}

/**
 * Their builder fell back to pass@16, or 0, for a column the CSV lacked: every prompt would tie.
 * pass@K of fewer than K completions is no estimate, so such a K is refused, not filled in.
 */
function checkKeyFits(key: OrderKey, sums: Pooled): void {
  if (key.kind !== 'pass@k') return;
  const short = [...sums.values()].filter((s) => s.n > 0 && s.n < key.k);
  if (short.length)
    throw new UserError(
      `--key pass@${key.k}: ${short.length.toLocaleString('en-US')} of the ${[...sums.values()].filter((s) => s.n > 0).length.toLocaleString('en-US')} prompts measured ` +
        `have fewer than ${key.k} completions (the smallest n is ${short.reduce((m, s) => Math.min(m, s.n), Infinity)}), and pass@K draws K of them. ` +
        `Use a K no larger than the smallest n, or --key rate.`,
      'BadFlag',
    );
}

/** Each scored prompt's rate and key value, those in [min, max) kept; the prompts no completion scored. */
function keyValuesOf(sums: Pooled, key: OrderKey, band: { min: number; max: number }) {
  const rates = new Map<string, number>();
  // What the ids are sorted by: for pass@K, whole millionths (exact integers compare exactly).
  const sortValue = new Map<string, number>();
  const keyValues = new Map<string, number>();
  const unscored: string[] = [];
  let outsideBand = 0;
  for (const [id, s] of sums) {
    if (s.n === 0) {
      unscored.push(id);
      continue;
    }
    const rate = s.c / s.n;
    const sorted = key.kind === 'rate' ? rate : pyFixed6Micros(passAtKAsTheirCsv(s.n, s.c, key.k));
    // float("0.123456") in their builder: the double nearest the decimal, which micros / 10^6 is.
    const value = key.kind === 'rate' ? rate : sorted / 1_000_000;
    if (value < band.min || value >= band.max) outsideBand++;
    else {
      rates.set(id, rate);
      sortValue.set(id, sorted);
      keyValues.set(id, value);
    }
  }
  return { rates, sortValue, keyValues, unscored, outsideBand };
}

/**
 * A campaign with gaps (missing shards, cut lines, dataset prompts without a result) is refused unless
 * --missing says where those prompts go; first and last need the copy's ids to place them.
 */
function refuseGapsUnlessPlaced(
  gaps: CampaignGaps,
  noResult: readonly string[],
  missing: MissingPlacement | undefined,
  idsKnown: boolean,
): void {
  const incomplete = [
    ...gaps.missingShards.map(
      (g) => `${g.source}: shard${g.shards.length > 1 ? 's' : ''} ${g.shards.join(', ')} missing`,
    ),
    ...gaps.badLines.map(
      (g) => `${g.source}: ${g.count} cut or bad line${g.count > 1 ? 's' : ''} (${g.first})`,
    ),
    ...(noResult.length
      ? [`${noResult.length.toLocaleString('en-US')} dataset prompts have no result: ${few(noResult)}`]
      : []),
  ];
  if (incomplete.length && missing === undefined)
    throw new UserError(
      `the results do not cover the prompts: ${incomplete.join('; ')}` +
        (gaps.duplicates.length
          ? ` (and ${gaps.duplicates.map((d) => `${d.source}: ${d.count} duplicate records, the first kept`).join('; ')})`
          : '') +
        `. Their trainer trains only on the ids in the order file, so prompts without a result would leave training unnoticed. ` +
        `Finish the campaign (rlvr passk --continue <job or folder>), or say where they go: --missing first, --missing last (both need the dataset copy's ids) or --missing drop.`,
      'IncompleteCampaign',
    );
  if ((missing === 'first' || missing === 'last') && incomplete.length && !idsKnown)
    throw new UserError(
      `--missing ${missing} places the prompts without a result by the dataset copy's ids, which were not read ` +
        `(${incomplete.join('; ')}): give the launcher AWS access to read the copy, or use --missing drop.`,
      'IncompleteCampaign',
    );
}

/** The gaps of each result: what the merge could not read. */
function gapsOf(results: readonly MergedPasskResults[]): CampaignGaps {
  return {
    missingShards: results
      .filter((r) => r.missingShards.length)
      .map((r) => ({ source: r.source, shards: r.missingShards })),
    badLines: results
      .filter((r) => r.badLines.length)
      .map((r) => {
        const b = r.badLines[0];
        return {
          source: r.source,
          count: r.badLines.length,
          first: `shard ${b.shard} line ${b.line}: ${b.why}`,
        };
      }),
    duplicates: results
      .filter((r) => r.duplicates > 0)
      .map((r) => ({ source: r.source, count: r.duplicates })),
  };
}

/** The sort key as the user reads it. */
export function keyDescription(key: string): string {
  return key === 'rate'
    ? 'the pooled pass rate (Σc/Σn)'
    : `${key} (unbiased, of the pooled counts, to 6 decimals as their pass_at_k CSV held it)`;
}

/** What an order left out and what it pooled, as lines for the user. */
export function describeOrder(order: CurriculumOrder): string[] {
  const out = [
    `${order.ids.length.toLocaleString('en-US')} ${order.dataset} prompt ids, sorted by ${keyDescription(order.key)}`,
  ];
  for (const g of order.gaps.missingShards)
    out.push(`read from ${g.source}: shard(s) ${g.shards.join(', ')} missing`);
  for (const g of order.gaps.badLines)
    out.push(`read from ${g.source}: ${g.count} cut or bad line(s) (${g.first})`);
  for (const g of order.gaps.duplicates)
    out.push(`read from ${g.source}: ${g.count} duplicate record(s), the first kept`);
  if (order.placed.length)
    out.push(
      `placed ${order.missing === 'first' ? 'first' : 'last'} (--missing ${order.missing}), no result: ${few(order.placed)}`,
    );
  if (
    order.missing === 'drop' &&
    order.excluded.noResult.length === 0 &&
    (order.gaps.missingShards.length || order.gaps.badLines.length)
  )
    out.push(
      'left out (--missing drop): the prompts of the missing shards and cut lines, not known without the dataset copy',
    );
  if (order.excluded.noResult.length) out.push(`left out, no result: ${few(order.excluded.noResult)}`);
  if (order.excluded.outsideBand)
    out.push(
      `left out, ${order.key === 'rate' ? 'pass rate' : order.key} outside the band: ${order.excluded.outsideBand.toLocaleString('en-US')}`,
    );
  if (order.pooled) out.push(`pooled over several results: ${order.pooled.toLocaleString('en-US')} prompts`);
  for (const c of order.conflicts) out.push(`pooled across different ${c.what}: ${c.values.join(', ')}`);
  return out;
}

export interface CurriculumLoaderParams {
  /** The split the results measured: written when it is not the loaders' default `train`. */
  readonly split?: string;
  /** MATH levels (`3,4,5`): the ids are numbered after this filter, so the config must repeat it. */
  readonly level?: string;
}

/**
 * The config lines that train on the order file at `uri`, in their configs' form
 * (configs/qwen3-1.7B-gsm8k-grpo-stale0-curriculum.yaml: `data: dataset: mixed, datasets: [{name, order}]`).
 * The launcher takes `order` as an S3 URI of the file itself (a channel), an absolute path (mapped by its
 * name to the bucket's curricula/) or a path relative to the trainer's source (lib/training/inputs.ts).
 */
export function curriculumConfigLines(
  uri: string,
  dataset: string,
  params: CurriculumLoaderParams = {},
): string[] {
  if (!ID_RULES[dataset]) {
    throw new UserError(
      `"${dataset}" is not one of the trainer's datasets (${Object.keys(ID_RULES).join(', ')})`,
    );
  }
  const s3 = parseS3Uri(uri);
  if (s3 && (s3.key === '' || s3.key.endsWith('/'))) {
    throw new UserError(`"${uri}" is a prefix, not an order file: name the file itself`);
  }
  if (!s3 && /^[a-z][a-z0-9+.-]*:\/\//i.test(uri)) {
    throw new UserError(`"${uri}": an order file is an s3:// URI or a path`);
  }
  const lines = ['data:', '  dataset: mixed', '  datasets:', `    - name: ${dataset}`];
  if (params.split !== undefined && params.split !== 'train')
    lines.push(`      split: ${JSON.stringify(params.split)}`);
  const level = normalLevel(params.level);
  if (level !== undefined) {
    const values = level.split(',').map((l) => (/^\d+$/.test(l) ? l : JSON.stringify(l)));
    lines.push(`      level: [${values.join(', ')}]`);
  }
  // JSON's quoting is a YAML double-quoted scalar.
  lines.push(`      order: ${JSON.stringify(uri)}`);
  return lines;
}
