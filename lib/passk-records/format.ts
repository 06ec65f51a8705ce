/**
 * Merged pass@k results as Markdown (terminal, a report), CSV (one table per file: the prompts, or the
 * pass@k figures) and JSON (everything). Pure: reading the shards is read-folder.ts's.
 */
import type { MergedPasskResults } from './merged';

function percent(x: number): string {
  return `${(x * 100).toFixed(2)}%`;
}

/** A Markdown table cell: a `|` would end the cell, a newline the row. */
function cell(s: string): string {
  return s
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n|\r/g, ' ');
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** n as the plan gave it, else as the prompts have it (a range when they differ). */
function nOf(r: MergedPasskResults): string {
  if (r.campaign) return String(r.campaign.n);
  if (r.prompts.length === 0) return '?';
  let lo = Infinity;
  let hi = -Infinity;
  for (const p of r.prompts) {
    lo = Math.min(lo, p.n);
    hi = Math.max(hi, p.n);
  }
  return lo === hi ? String(lo) : `${lo}–${hi}`;
}

function datasetOf(r: MergedPasskResults): string | undefined {
  const c = r.campaign;
  if (!c) return undefined;
  return `${c.dataset}/${c.split}${c.level ? ` (levels ${c.level})` : ''}`;
}

/** What a reader must know before trusting the table: what was read, what is missing, what was dropped. */
function headerLine(r: MergedPasskResults): string {
  const parts = [
    r.campaign ? `model ${r.campaign.model.label}` : 'no plan (their script’s folder)',
    ...(r.campaign ? [`dataset ${datasetOf(r)}`] : []),
    `n=${nOf(r)}`,
    plural(r.prompts.length, 'prompt'),
    r.shardsExpected !== undefined
      ? `shards ${r.shardsRead.length} of ${r.shardsExpected} read`
      : `${plural(r.shardsRead.length, 'shard')} read`,
  ];
  if (r.missingShards.length > 0)
    parts.push(
      r.shardsExpected !== undefined
        ? `missing shards: ${r.missingShards.join(', ')}`
        : `missing shards: ${r.missingShards.join(', ')} (gaps in the numbers; without a plan, shards after the highest read cannot be seen)`,
    );
  if (r.duplicates > 0) parts.push(`${plural(r.duplicates, 'duplicate')} dropped (first record kept)`);
  if (r.badLines.length > 0) {
    const shown = r.badLines
      .slice(0, 3)
      .map((b) => `shard ${b.shard} line ${b.line}: ${b.why}`)
      .join('; ');
    const more = r.badLines.length > 3 ? `; ${r.badLines.length - 3} more` : '';
    parts.push(`${plural(r.badLines.length, 'bad line')} (${shown}${more})`);
  }
  return parts.join(' · ');
}

function kList(ks: readonly number[]): string {
  const named = ks.map((k) => `pass@${k}`);
  return named.length <= 1 ? named.join('') : `${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
}

/**
 * What a reader must know when n differs across prompts: the rows of larger k average over fewer
 * prompts (those with n ≥ k), so pass@k may fall as k grows. Undefined when n is the same for all.
 */
export function unequalNNote(r: Pick<MergedPasskResults, 'unequalN'>): string | undefined {
  const u = r.unequalN;
  if (!u) return undefined;
  const spread = `n differs across prompts (${u.minN}–${u.maxN})`;
  if (u.fewerPromptsAtK.length === 0) return `${spread}: every row is over all ${u.prompts} prompts`;
  return `${spread}: ${kList(u.fewerPromptsAtK)} average over fewer prompts than the ${u.prompts} read (those with n ≥ k; see the prompts column), so rows of different k are not of the same prompts`;
}

/**
 * Where the first-k column is not the figure their script prints, and why: it keeps every record of a
 * prompt written twice and divides each k by all records; the merge keeps a prompt's first record and,
 * when n differs, divides each k by the prompts with n ≥ k. Undefined where the two agree.
 */
export function firstKNote(r: Pick<MergedPasskResults, 'duplicates' | 'unequalN'>): string | undefined {
  const why = [
    ...(r.duplicates > 0
      ? [
          `it counts the ${plural(r.duplicates, 'duplicate record')} dropped here (a prompt written twice counts twice)`,
        ]
      : []),
    ...(r.unequalN?.fewerPromptsAtK.length
      ? [`it divides every k by all records, where this divides each k by the prompts with n ≥ k`]
      : []),
  ];
  return why.length
    ? `first-k is not the figure their script prints for this folder: ${why.join('; ')}`
    : undefined;
}

/**
 * Per source: a header line, then pass@k by both estimators; with `prompts`, each prompt's n, c and rate.
 */
export function passkMarkdown(
  results: readonly MergedPasskResults[],
  options: { readonly prompts?: boolean } = {},
): string {
  const sections = results.map((r) => {
    const out = [`### ${cell(r.source)}`, '', cell(headerLine(r)), ''];
    if (r.prompts.length === 0) out.push('No prompt results read.');
    else {
      out.push('| k | pass@k (unbiased) | first-k | prompts |', '|---:|---:|---:|---:|');
      for (const p of r.passAtK)
        out.push(`| ${p.k} | ${percent(p.unbiased)} | ${percent(p.firstK)} | ${p.prompts} |`);
      out.push(
        '',
        'first-k: the share of prompts with a correct completion among their first k, as their script counts.',
      );
      const note = unequalNNote(r);
      if (note) out.push('', `Note: ${cell(note)}.`);
      const firstK = firstKNote(r);
      if (firstK) out.push('', `Note: ${cell(firstK)}.`);
      if (options.prompts) {
        out.push('', '| prompt_id | n | c | pass rate |', '|---|---:|---:|---:|');
        for (const p of r.prompts)
          out.push(`| ${cell(p.promptId)} | ${p.n} | ${p.c} | ${percent(p.passRate)} |`);
      }
    }
    return out.join('\n');
  });
  return `${sections.join('\n\n')}\n`;
}

/** RFC 4180: a field with a quote, comma or line break is quoted, its quotes doubled. */
function csvField(v: string | number | undefined): string {
  if (v === undefined) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function csv(header: readonly string[], rows: readonly (readonly (string | number | undefined)[])[]): string {
  return `${[header, ...rows].map((row) => row.map(csvField).join(',')).join('\n')}\n`;
}

function described(r: MergedPasskResults): (string | undefined)[] {
  return [r.source, r.campaign?.model.label, r.campaign?.dataset, r.campaign?.split];
}

/** One row per (source, prompt). */
export function passkCsv(results: readonly MergedPasskResults[]): string {
  return csv(
    ['source', 'model', 'dataset', 'split', 'prompt_id', 'n', 'c', 'pass_rate'],
    results.flatMap((r) => r.prompts.map((p) => [...described(r), p.promptId, p.n, p.c, p.passRate])),
  );
}

/** One row per (source, k): both estimators, as fractions. */
export function passAtKCsv(results: readonly MergedPasskResults[]): string {
  return csv(
    ['source', 'model', 'dataset', 'split', 'k', 'pass_at_k_unbiased', 'first_k', 'prompts'],
    results.flatMap((r) => r.passAtK.map((p) => [...described(r), p.k, p.unbiased, p.firstK, p.prompts])),
  );
}

/** Everything merged, prompts included: an array, one entry per source. */
export function passkJson(results: readonly MergedPasskResults[]): string {
  const withNotes = results.map((r) => {
    const note = firstKNote(r);
    return note ? { ...r, firstKNote: note } : r;
  });
  return `${JSON.stringify(withNotes, null, 2)}\n`;
}
