/** What `rlvr curriculum` prints: the order file built (text or JSON), and the SFT set written. */
import { describeOrder, type buildSft, type CurriculumBuilt } from '../lib/passk';

type SftBuilt = Awaited<ReturnType<typeof buildSft>>;

export function curriculumJson(built: CurriculumBuilt, order: string) {
  return {
    ok: true,
    ids: built.order.ids.length,
    dataset: built.order.dataset,
    order,
    key: built.order.key,
    uri: built.uri ?? null,
    upload: built.upload,
    out: built.out ?? null,
    uploadCommand: built.uploadCommand ?? null,
    sidecar: {
      at: built.sidecar.at,
      written: built.sidecar.written,
      sha256: built.sidecar.record.sha256,
    },
    datasetIds: built.datasetIds,
    missing: built.order.missing ?? null,
    placed: built.order.placed.length,
    gaps: built.order.gaps,
    excluded: {
      noResult: built.order.excluded.noResult.length,
      outsideBand: built.order.excluded.outsideBand,
    },
    conflicts: built.order.conflicts,
    configLines: built.configLines,
  };
}

/** The order file, where it went, its build record and the config lines that use it. */
export function renderCurriculum(built: CurriculumBuilt, order: string, name: string): string {
  const out: string[] = [`Order file ${built.out ?? built.uri ?? name}  (${order}, by ${built.order.key})`];
  for (const line of describeOrder(built.order)) out.push(`  ${line}`);
  out.push(
    'datasetIds' in built && 'from' in built.datasetIds
      ? `  ties in the dataset's row order; every id is in ${built.datasetIds.from} (${built.datasetIds.prompts} prompts)`
      : `  ties by id: the dataset copy's ids were not read (${(built.datasetIds as { why: string }).why}); the submit's pre-flight checks them`,
  );
  const said = {
    created: 'uploaded',
    unchanged: 'already there with this content',
    replaced: 'replaced (--replace)',
    'dry-run': 'not written (--dry-run)',
    local: `written to ${built.out}, not uploaded (--out): jobs read order files from S3, so upload it first: ${built.uploadCommand}`,
    'no AWS': 'not uploaded (no AWS)',
  }[built.upload];
  out.push(`  ${said}`);
  out.push(
    `  build record (sources, key, band, gaps, sha256): ${built.sidecar.at}` +
      (built.sidecar.written === 'not written'
        ? ' (not written)'
        : built.sidecar.written === 'kept'
          ? ' (kept: of this content)'
          : ''),
  );
  out.push('', 'In a config:', ...built.configLines.map((l) => `  ${l}`), '');
  return out.join('\n');
}

export function sftJson(set: SftBuilt) {
  return {
    ok: true,
    out: set.out,
    examples: set.lines.length,
    skippedNoCorrect: set.skippedNoCorrect,
    skippedNoPrompt: set.skippedNoPrompt,
    badLines: set.badLines,
    notes: set.notes,
    ...(set.perDataset ? { perDataset: set.perDataset } : {}),
  };
}

export function renderSft(set: SftBuilt): string {
  return `wrote ${set.out}: ${set.lines.length} example(s)${set.perDataset ? ` (${set.perDataset.map((d) => `${d.dataset} ${d.examples}`).join(', ')})` : ''}; skipped ${set.skippedNoCorrect} with no correct completion, ${set.skippedNoPrompt} with no prompt\n`;
}

/** The set's notes and the shard lines skipped, each a line for stderr. */
export function sftWarnings(set: SftBuilt): string[] {
  return [
    ...set.notes.map((n) => `note: ${n}\n`),
    ...set.badLines.map((b) => `warning: ${b.file}${b.line ? `:${b.line}` : ''}: ${b.why}; skipped\n`),
  ];
}
