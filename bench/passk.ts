/**
 * `rlvr passk results` on a campaign the size of theirs (GSM8K train, 7,473 prompts, n = 128, each line
 * carrying its completions' text, 8 shards) against the way their merge reads the same files: Python's
 * json.loads of every line, held in a list, then the unbiased estimator (scripts/merge_pass512.py).
 * Both must give the same pass@k; ours must not be slower and must not hold the campaign in memory.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { medianPair, MIB, run } from './measure';
import type { BenchContext, Row } from './row';

const ROOT = path.resolve(__dirname, '..');
const PROMPTS = 7473;
const N = 128;
const SHARDS = 8;

/** Their merge's way of reading, written here as a baseline (their file is not copied). */
const BASELINE = `
import json, math, sys
from pathlib import Path
rows = []
for d in sorted(Path(sys.argv[1]).glob("shard_*")):
    with open(d / "verification_results.jsonl") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
n = rows[0]["num_completions"]
out, k = {}, 1
while k <= n:
    out[str(k)] = sum(1.0 if n - r["num_correct"] < k else 1.0 - math.comb(n - r["num_correct"], k) / math.comb(n, k) for r in rows) / len(rows)
    k *= 2
print(json.dumps(out))
`;

/** A campaign folder as their script leaves it (json.dumps' spacing), with a seeded mix of pass rates. */
function writeCampaign(dir: string): number {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const per = Math.ceil(PROMPTS / SHARDS);
  let bytes = 0;
  for (let s = 0; s < SHARDS; s++) {
    const folder = path.join(dir, `shard_${s}`);
    fs.mkdirSync(folder, { recursive: true });
    const fd = fs.openSync(path.join(folder, 'verification_results.jsonl'), 'w');
    for (let i = s * per; i < Math.min(PROMPTS, (s + 1) * per); i++) {
      const scores = Array.from({ length: N }, () => (rand() < 0.5 ? '1.0' : '0.0'));
      const c = scores.filter((x) => x === '1.0').length;
      const completions = scores
        .map(
          (score, j) =>
            `{"text": "${'Let me think step by step. '.repeat(6)}${j}", "finish_reason": "stop", "num_tokens": 60, "score": ${score}}`,
        )
        .join(', ');
      const line = `{"prompt_id": "gsm8k_${i}", "num_completions": ${N}, "num_correct": ${c}, "pass_rate": ${c / N}, "scores": [${scores.join(', ')}], "completions": [${completions}]}\n`;
      bytes += fs.writeSync(fd, line);
    }
    fs.closeSync(fd);
  }
  return bytes;
}

export async function passkRows({ work, log }: BenchContext): Promise<Row[]> {
  const dir = path.join(work, 'passk-campaign');
  const bytes = writeCampaign(dir);
  const script = path.join(work, 'their-merge.py');
  fs.writeFileSync(script, BASELINE);
  const env = { ...process.env, PYTHONHASHSEED: '0' };
  const pair = await medianPair(
    () => run('python3', [script, dir], env, { time: true }),
    () =>
      run(
        process.execPath,
        [path.join(ROOT, 'bin/rlvr.js'), 'passk', 'results', dir, '--format', 'json'],
        env,
        { time: true },
      ),
    3,
  );
  const ours = (JSON.parse(pair.ours.stdout) as { passAtK: { k: number; unbiased: number }[] }[])[0].passAtK;
  const theirs = JSON.parse(pair.baseline.stdout) as Record<string, number>;
  const worst = Math.max(...ours.map((p) => Math.abs(p.unbiased - theirs[String(p.k)])));
  const oursRss = (pair.ours.maxRssKb ?? NaN) / 1024;
  const theirRss = (pair.baseline.maxRssKb ?? NaN) / 1024;
  log.push(
    `passk results: ${(bytes / MIB).toFixed(0)} MiB of results (${PROMPTS} prompts × ${N}, ${SHARDS} shards); ${pair.spread.replaceAll('aws', 'their merge')}; peak RSS ${oursRss.toFixed(0)} MiB vs ${theirRss.toFixed(0)} MiB; largest pass@k difference ${worst.toExponential(1)}`,
  );
  const ratio = pair.ours.seconds / pair.baseline.seconds;
  return [
    {
      name: `pass@k merge of a ${(bytes / MIB).toFixed(0)} MiB campaign (${PROMPTS} prompts × ${N}), vs their merge's json.loads of every line (peak RSS ${oursRss.toFixed(0)} vs ${theirRss.toFixed(0)} MiB)`,
      ours: `${pair.ours.seconds.toFixed(2)} s`,
      baseline: `${pair.baseline.seconds.toFixed(2)} s`,
      ratio,
      target: '≤ 1.0×, the same pass@k, memory below the file size',
      pass: ratio <= 1 && worst < 1e-12 && oursRss * MIB < bytes,
    },
  ];
}
