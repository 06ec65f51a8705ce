import type { YamlFile } from '../config';
import type { IS3 } from '../aws';
import type { Problem } from '../errors';
import {
  checkOrderReference,
  curriculumWarnings,
  formatCurriculumLine,
  missingIdsProblem,
  resolveIdRule,
  uncheckedWarning,
} from '../curriculum';
import type { DatasetLoader } from '../trainers';
import { s3Uri, type DatasetInput, type OrderFileInput } from './inputs';
import type { PreflightCheck } from './preflight-check';

/*
 * The curriculum pre-flight (the team's incident: 1,960 of 4,691 order ids missing, skipped in
 * silence, a deadlock at step 109): every id an order file names must be in the dataset copy the job
 * receives. Their loader keeps only the ids it finds (`load_mixed`: `ordered_ids = [pid for pid in
 * file_order if pid in row_by_id]`), so a missing id is an error here unless acknowledged.
 */

export interface CurriculumOptions {
  /** The trainer profile's loaders (where each loader's S3 copy is). */
  readonly loaders?: Readonly<Record<string, DatasetLoader>>;
  /** `--allow-missing-order-ids`: missing ids are a warning, recorded with the job. */
  readonly allowMissingOrderIds?: boolean;
  /** Where dataset id sets are cached by their S3 ETags (default: the user's cache folder). */
  readonly cacheDir?: string;
}

/** Missing ids the user acknowledged: recorded in the job log row and run.json. */
export interface MissingOrderIds {
  readonly order: string;
  readonly missing: number;
  readonly of: number;
  readonly dataset: string;
}

export interface CurriculumFindings {
  readonly checks: PreflightCheck[];
  readonly problems: Problem[];
  readonly warnings: Problem[];
  readonly acknowledged: MissingOrderIds[];
}

/** The copy an order file's loader reads: the job's dataset input of that folder. */
function copyOf(
  folder: string,
  datasets: readonly DatasetInput[],
): { bucket: string; prefix: string } | undefined {
  const d = datasets.find((x) => x.kind === 'folder' && x.folder === folder);
  return (
    d && {
      bucket: d.location.bucket,
      prefix: d.location.key.endsWith('/') ? d.location.key : `${d.location.key}/`,
    }
  );
}

/** One order file (present, checked by the pre-flight) against its dataset copy. */
export async function checkOrderIds(
  s3: IS3,
  o: OrderFileInput,
  datasets: readonly DatasetInput[],
  file: YamlFile,
  options: CurriculumOptions,
  out: CurriculumFindings,
): Promise<void> {
  const uri = s3Uri(o.location);
  const warn = (m: { message: string; hint?: string }) =>
    out.warnings.push(file.problem(o.referencedAt, m.message, m.hint));
  if (!o.orders)
    return void warn(uncheckedWarning(uri, 'mixed', 'the order file orders several datasets at once'));
  const rule = resolveIdRule(o.orders.loader, o.orders.params, options.loaders);
  const copy = rule.checkable ? copyOf(rule.folder, datasets) : undefined;
  if (rule.checkable && !copy)
    return void warn(uncheckedWarning(uri, rule.loader, `the job carries no copy of ${rule.folder}`));
  const result = rule.checkable
    ? await checkOrderReference(
        s3,
        { order: o.location, copy: copy!, rule, count: o.orders.count, mode: o.orders.mode },
        options.cacheDir ? { cacheDir: options.cacheDir } : {},
      )
    : { kind: 'unchecked' as const, loader: rule.loader, reason: rule.reason };
  if (result.kind === 'unchecked') return void warn(uncheckedWarning(uri, result.loader, result.reason));
  const { check } = result;
  out.checks.push({
    what: 'curriculum',
    target: uri,
    ok: check.ok,
    detail: formatCurriculumLine(check, result.copy),
  });
  for (const w of curriculumWarnings(check, uri)) warn(w);
  if (check.ids === 0) {
    // Their trainer stops at start-up with no valid prompt_ids: never worth paying for.
    out.problems.push(
      file.problem(
        o.referencedAt,
        `${uri} lists no prompt ids`,
        'An order file lists one prompt id per line.',
      ),
    );
    return;
  }
  const missing = missingIdsProblem(check, uri, result.copy);
  if (!missing) return;
  // None of its ids there: the trainer stops at start-up, so no flag lets that through.
  if (!options.allowMissingOrderIds || check.missing.count === check.ids) {
    out.problems.push(file.problem(o.referencedAt, missing.message, missing.hint));
    return;
  }
  warn({ message: `${missing.message} (allowed by --allow-missing-order-ids)` });
  out.acknowledged.push({ order: uri, missing: check.missing.count, of: check.ids, dataset: result.copy });
}
