/**
 * Two run folders of pass@k campaigns (gsm8k, math) whose shards are written as their eval_pass_at_k.py
 * writes them (json.dumps: `, ` and `: `, floats as Python writes them), for `curriculum sft --datasets`
 * and the fixture their build_sft_from_pass_at_k.py made of the same files (test/fixtures/sft-both).
 * Deterministic: the fixture's inputs are these bytes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pyJsonDumps } from '../../lib/passk/sft';
import { passkPlan } from './passk';

const N = 8;

function idOf(dataset: string, i: number): string {
  if (dataset === 'math')
    return `math_${['algebra', 'geometry', 'number_theory'][i % 3]}_${Math.floor(i / 3)}`;
  return `${dataset}_${i}`;
}

/** `<dir>/passk-plan.json` and `<dir>/passk/shard_<s>/{completions,verification_results}.jsonl`. */
export function writeSftCampaign(
  dir: string,
  options: { readonly dataset: 'gsm8k' | 'math'; readonly shards: number; readonly perShard: number },
): string {
  const { dataset, shards, perShard } = options;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'passk-plan.json'),
    JSON.stringify(passkPlan(shards, { dataset, n: N, ...(dataset === 'math' ? { level: '3,4,5' } : {}) })),
  );
  const salt = dataset === 'math' ? 5 : 0;
  for (let s = 0; s < shards; s++) {
    const folder = path.join(dir, 'passk', `shard_${s}`);
    fs.mkdirSync(folder, { recursive: true });
    const completions: string[] = [];
    const results: string[] = [];
    for (let j = 0; j < perShard; j++) {
      const i = s * perShard + j;
      const id = idOf(dataset, i);
      const scores = Array.from({ length: N }, (_, k) =>
        (i * 7 + k * 3 + salt) % 11 < (i + salt) % 6 ? 1.0 : 0.0,
      );
      const comps = scores.map((_, k) => ({
        text: `${dataset} answer ${i}.${k} — é`,
        finish_reason: k === 7 ? 'length' : 'stop',
        num_tokens: 10 + k,
      }));
      const problem =
        dataset === 'math'
          ? {
              answer: `\\frac{${i}}{2}`,
              prompt_id: id,
              level: 3 + (i % 3),
              type: 'Algebra',
              verifier_type: 'math',
            }
          : { answer: String(i), prompt_id: id, verifier_type: 'gsm8k', dataset_name: 'gsm8k' };
      completions.push(
        pyJsonDumps({
          prompt_id: id,
          prompt: `Q (${dataset}): what is ${i}?\nA:`,
          problem,
          completions: comps,
        }),
      );
      const c = scores.filter((x) => x > 0).length;
      results.push(
        pyJsonDumps(
          {
            prompt_id: id,
            num_completions: N,
            num_correct: c,
            pass_rate: c / N,
            scores,
            completions: comps.map((x, k) => ({ ...x, score: scores[k] })),
          },
          new Set(['pass_rate', 'scores[]', 'completions[].score']),
        ),
      );
    }
    fs.writeFileSync(path.join(folder, 'completions.jsonl'), completions.map((l) => `${l}\n`).join(''));
    fs.writeFileSync(path.join(folder, 'verification_results.jsonl'), results.map((l) => `${l}\n`).join(''));
  }
  return dir;
}

/** The fixture's inputs: `<root>/gsm8k` (11 shards, so shard_10 sorts before shard_2) and `<root>/math`. */
export function writeSftBothInputs(root: string): { gsm8k: string; math: string } {
  return {
    gsm8k: writeSftCampaign(path.join(root, 'gsm8k'), { dataset: 'gsm8k', shards: 11, perShard: 3 }),
    math: writeSftCampaign(path.join(root, 'math'), { dataset: 'math', shards: 3, perShard: 7 }),
  };
}
