/** Stand-ins for the pass@k tests: a campaign's plan, and the estimator counted out by hand. */
import type { PasskCampaign, PasskJobPlan } from '../../lib/passk-records';

/** 1 − C(n−c, k) / C(n, k), the binomials multiplied out (no library code on the path). */
export function passAtKByHand(n: number, c: number, k: number): number {
  const choose = (a: number, b: number): number => {
    if (b < 0 || b > a) return 0;
    let r = 1;
    for (let i = 1; i <= b; i++) r = (r * (a - b + i)) / i;
    return r;
  };
  return 1 - choose(n - c, k) / choose(n, k);
}

/** A campaign's plan as `rlvr passk` writes it (`passk-plan.json`), `shards` shards on one host. */
export function passkPlan(shards: number, campaign: Partial<PasskCampaign> = {}): PasskJobPlan {
  return {
    version: 1,
    campaign: {
      dataset: 'gsm8k',
      split: 'train',
      n: 8,
      sampling: { max_tokens: '1024', temperature: '1.0' },
      model: { label: 'base', id: 's3://b/models/base/', from: 's3://b/models/base/' },
      trainer: 'grpo-sft',
      ...campaign,
    },
    campaignId: 'c0ffee',
    shards: Array.from({ length: shards }, (_, index) => ({ index, host: 0, gpu: index, argv: [] })),
    files: {
      shardFolder: 'shard_{shard}',
      results: 'verification_results.jsonl',
      completions: 'completions.jsonl',
      summary: 'summary.json',
    },
    model: { containerPath: '/opt/ml/input/data/model', modelPath: '/tmp/rlvr-passk-model' },
    resumeArgs: ['--resume-from', '1'],
    datasetCaches: [],
    importRoots: ['src'],
  };
}
