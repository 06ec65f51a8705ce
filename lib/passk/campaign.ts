/**
 * What a campaign measures, and its identity: two runs of the same campaign on the same shard count give
 * each shard the same prompts, so one may continue the other and their rates compare.
 */
import { createHash } from 'node:crypto';
import type { ResolvedCheckpoint } from '../eval';
import type { PasskCampaign } from '../passk-records';
import type { PasskRequest } from './input';

/** Settings that change neither which prompts a shard gets nor what its results mean. */
const NOT_MEASURED = ['split', 'level', 'n', 'verifier_workers', 'batch_size'];

export function campaignOf(request: PasskRequest, model: ResolvedCheckpoint, trainer: string): PasskCampaign {
  return {
    dataset: request.dataset,
    split: request.settings.split ?? 'train',
    ...(request.settings.level ? { level: request.settings.level } : {}),
    n: Number(request.settings.n),
    sampling: Object.fromEntries(Object.entries(request.settings).filter(([k]) => !NOT_MEASURED.includes(k))),
    model: {
      label: model.label,
      id: model.id,
      from: model.s3 ? `s3://${model.s3.bucket}/${model.s3.key}` : (model.local ?? model.given),
    },
    trainer,
  };
}

/** A setting as the script parses it: `1`, `1.0` and `1.00` are one temperature. */
const settingValue = (v: string) => (v.trim() !== '' && Number.isFinite(Number(v)) ? String(Number(v)) : v);

/**
 * The campaign's id: dataset, split, MATH levels (as a set: the script filters by membership), n, every
 * sampling setting by value, the model's identity (not its label) and the shard count (ceil(prompts /
 * shards) per shard). The batch size and verifier workers change none of what a shard measures.
 */
export function campaignId(c: PasskCampaign, shards: number): string {
  const levels = c.level
    ? [...new Set(c.level.split(',').map((l) => Number(l)))].sort((a, b) => a - b).join(',')
    : null;
  const identity = {
    d: c.dataset,
    s: c.split,
    l: levels,
    n: c.n,
    sampling: Object.fromEntries(
      Object.keys(c.sampling)
        .sort()
        .map((k) => [k, settingValue(c.sampling[k])]),
    ),
    model: c.model.id,
    shards,
  };
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 16);
}
