import type { IS3 } from '../aws';
import { copyName, type DatasetCopy } from './dataset-ids';
import type { ResolvedIdRule } from './id-rules';
import { checkCurriculum, type CurriculumCheck, type CurriculumCheckOptions } from './order-check';
import { readDatasetIds, type DatasetIds, type DatasetIdsOptions } from './read-ids';

/* One order file of a config against the dataset copy its job will receive: the pre-flight's check. */

/** One `order` reference: where the order file is, and the dataset entry it orders. */
export interface OrderReference {
  readonly order: { readonly bucket: string; readonly key: string };
  /** The copy the loader reads (`datasets/<folder>/` under the job's prefix). */
  readonly copy: DatasetCopy;
  readonly rule: ResolvedIdRule;
  readonly count?: number;
  readonly mode?: string;
}

export type OrderCheckResult =
  | {
      readonly kind: 'checked';
      readonly check: CurriculumCheck;
      /** The copy's name for messages (`gsm8k_train`). */
      readonly copy: string;
      readonly dataset: Extract<DatasetIds, { ok: true }>;
    }
  | {
      /** Not checked: warn "could not be checked" with `reason`, never pass silently. */
      readonly kind: 'unchecked';
      readonly loader: string;
      readonly reason: string;
    };

/**
 * Reads the order file and the copy's ids (cached) and compares them. The caller has already
 * checked that the order file exists (the pre-flight's presence check).
 */
export async function checkOrderReference(
  s3: IS3,
  ref: OrderReference,
  options: DatasetIdsOptions & Pick<CurriculumCheckOptions, 'firstN'> = {},
): Promise<OrderCheckResult> {
  const { rule } = ref;
  if (!rule.checkable) return { kind: 'unchecked', loader: rule.loader, reason: rule.reason };
  const [orderText, dataset] = await Promise.all([
    // The bytes as the trainer's open() reads them: a byte-order mark stays (getObjectText drops it).
    s3
      .getObjectRange(ref.order.bucket, ref.order.key, 0)
      .then((bytes) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes)),
    readDatasetIds(s3, ref.copy, rule, options),
  ]);
  if (!dataset.ok) return { kind: 'unchecked', loader: rule.loader, reason: dataset.reason };
  const check = checkCurriculum(orderText, dataset.ids, {
    count: ref.count,
    mode: ref.mode,
    firstN: options.firstN,
  });
  return { kind: 'checked', check, copy: copyName(ref.copy), dataset };
}
