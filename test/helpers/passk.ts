/** Stand-ins for the pass@k tests: a campaign's plan and run folder, and the estimator counted out by hand. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PasskCampaign, PasskJobPlan } from '../../lib/passk-records';
import { tempDir } from './fixtures';

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

/**
 * A run folder of a gsm8k pass@k campaign as the job leaves it: its plan and, per shard, the script's
 * verification_results.jsonl and completions.jsonl. Prompt i (of `prompts`, split evenly over the shards)
 * has `correctOf(i)` of `n` completions correct.
 */
export function passkCampaignFolder(options: {
  readonly shards: number;
  readonly prompts: number;
  readonly n: number;
  readonly correctOf: (i: number) => number;
  readonly campaign?: Partial<PasskCampaign>;
}): string {
  const { shards, prompts, n, correctOf } = options;
  const dir = tempDir('rlvr-passk-run-');
  fs.writeFileSync(
    path.join(dir, 'passk-plan.json'),
    JSON.stringify(passkPlan(shards, { n, ...options.campaign })),
  );
  const per = Math.ceil(prompts / shards);
  for (let s = 0; s < shards; s++) {
    const folder = path.join(dir, 'passk', `shard_${s}`);
    fs.mkdirSync(folder, { recursive: true });
    const results: string[] = [];
    const completions: string[] = [];
    for (let i = s * per; i < Math.min(prompts, (s + 1) * per); i++) {
      const c = correctOf(i);
      const scores = [...Array(n - c).fill(0), ...Array(c).fill(1)];
      const texts = scores.map((x, k) => (x ? `#### ${i}` : `#### wrong ${k}`));
      results.push(
        JSON.stringify({
          prompt_id: `gsm8k_${i}`,
          num_completions: n,
          num_correct: c,
          pass_rate: c / n,
          scores,
          completions: texts.map((text, k) => ({
            text,
            finish_reason: 'stop',
            num_tokens: 3,
            score: scores[k],
          })),
        }),
      );
      completions.push(
        JSON.stringify({
          prompt_id: `gsm8k_${i}`,
          prompt: `Q: question ${i}\nA:`,
          problem: { answer: String(i), prompt_id: `gsm8k_${i}` },
          completions: texts.map((text) => ({ text, finish_reason: 'stop', num_tokens: 3 })),
        }),
      );
    }
    fs.writeFileSync(path.join(folder, 'verification_results.jsonl'), results.map((l) => `${l}\n`).join(''));
    fs.writeFileSync(path.join(folder, 'completions.jsonl'), completions.map((l) => `${l}\n`).join(''));
  }
  return dir;
}
