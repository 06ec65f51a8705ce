import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  buildSftSet,
  PyRandom,
  pyFloat,
  pyJsonDumps,
  readSftShards,
  type SftInput,
} from '../../lib/passk/sft';
import { tempDir } from '../helpers/fixtures';
import { itWithPeer } from '../helpers/moto';
import { hostPython, pythonAvailable } from '../helpers/python';

/*
 * The SFT set by their build_sft_from_pass_at_k.py's rule. The generator's values below were printed by
 * CPython 3.11's random.Random; the last test runs their selection loop (copied from the script) in Python
 * on the same folder and compares the bytes.
 */

describe('PyRandom is CPython’s random.Random', () => {
  it('seed 42: getrandbits(32) then choice of 10', () => {
    const r = new PyRandom(42);
    expect(r.getrandbits(32)).toBe(2746317213);
    expect(r.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])).toBe(1);
  });

  it('a seed wider than 32 bits, shuffle and randrange', () => {
    const r = new PyRandom(2n ** 40n + 7n);
    const a = Array.from({ length: 20 }, (_, i) => i);
    r.shuffle(a);
    expect(a).toEqual([17, 0, 10, 3, 1, 2, 9, 12, 7, 13, 5, 11, 14, 6, 16, 4, 8, 15, 18, 19]);
    expect(r.randbelow(1000003)).toBe(143919);
  });
});

describe('json.dumps as Python writes it', () => {
  it('floats by repr', () => {
    const xs = [0.5, 1 / 3, 1e-5, 1.5e-5, 1e16, 123456789012345.6, 0, 0.015625, 1, 2.5e-4, 1e-4];
    expect(xs.map(pyFloat)).toEqual([
      '0.5',
      '0.3333333333333333',
      '1e-05',
      '1.5e-05',
      '1e+16',
      '123456789012345.6',
      '0.0',
      '0.015625',
      '1.0',
      '0.00025',
      '0.0001',
    ]);
  });

  it('ensure_ascii (DEL and astral characters escaped) and its separators', () => {
    expect(pyJsonDumps({ a: 'é😀\n"\u007f', b: [1, 2.5, null, true], c: {}, r: 0 }, new Set(['r']))).toBe(
      '{"a": "\\u00e9\\ud83d\\ude00\\n\\"\\u007f", "b": [1, 2.5, null, true], "c": {}, "r": 0.0}',
    );
  });
});

const prompt = (id: string) => ({ prompt: `Q: ${id}?\nA:`, problem: { answer: '1', prompt_id: id } });

describe('buildSftSet', () => {
  const input = (over: Partial<SftInput> = {}): SftInput => ({
    results: [
      {
        promptId: 'gsm8k_0',
        scores: [0, 0, 0, 0],
        completions: ['a', 'b', 'c', 'd'].map((text) => ({ text })),
        passRate: 0,
      },
      {
        promptId: 'gsm8k_1',
        scores: [0, 1, 0, 1],
        completions: ['a', 'b', 'c', 'd'].map((text) => ({ text })),
        passRate: 0.5,
      },
      {
        promptId: 'gsm8k_2',
        scores: [0, 1, 0, 0],
        completions: ['a', 'b', 'c', 'd'].map((text) => ({ text })),
        passRate: 0.25,
      },
      { promptId: 'gsm8k_3', scores: [1, 0, 0, 0], completions: [{ text: 'x' }], passRate: 0.25 },
      { promptId: 'gsm8k_4', scores: [1, 0, 0, 0], completions: [{ text: 'y' }], passRate: 0.25 },
    ],
    prompts: new Map(['gsm8k_0', 'gsm8k_1', 'gsm8k_2', 'gsm8k_3'].map((id) => [id, prompt(id)])),
    dataset: 'gsm8k',
    ...over,
  });

  it('keeps min ≤ pass_rate < max, one correct completion each; counts what it skipped', () => {
    const set = buildSftSet(input());
    // gsm8k_1 (0.5) is outside [0, 0.5); gsm8k_0 is in band with no correct completion; gsm8k_4 has no prompt.
    expect([set.skippedNoCorrect, set.skippedNoPrompt]).toEqual([1, 1]);
    const lines = set.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.prompt_id, l.completion]).sort()).toEqual([
      ['gsm8k_2', 'b'],
      ['gsm8k_3', 'x'],
    ]);
    // problem.setdefault: the prompt's own keys first, dataset_name added last; the rate as a float.
    expect(set.lines.find((l) => l.includes('"gsm8k_3"'))).toBe(
      '{"prompt_id": "gsm8k_3", "prompt": "Q: gsm8k_3?\\nA:", "problem": {"answer": "1", "prompt_id": "gsm8k_3", "dataset_name": "gsm8k"}, "completion": "x", "pass_rate": 0.25, "source": "gsm8k"}',
    );
    expect(buildSftSet(input({ maxPassRate: 0.6 })).lines).toHaveLength(3);
  });

  it('picks with random.Random(seed): another seed can pick another completion', () => {
    const many = {
      promptId: 'gsm8k_9',
      scores: Array(64).fill(1),
      completions: Array.from({ length: 64 }, (_, i) => ({ text: `c${i}` })),
      passRate: 0.1,
    };
    const pick = (seed: number) =>
      JSON.parse(
        buildSftSet({ ...input(), results: [many], prompts: new Map([['gsm8k_9', prompt('gsm8k_9')]]), seed })
          .lines[0],
      ).completion;
    // CPython: random.Random(42).choice(range(64)) is 14, random.Random(7).choice(range(64)) is 41.
    expect([pick(42), pick(7)]).toEqual(['c14', 'c41']);
  });
});

/** A folder as their script leaves it: shard_<i>/{completions,verification_results}.jsonl, as json.dumps writes. */
function writeShards(dir: string, shards: number, perShard: number): void {
  for (let s = 0; s < shards; s++) {
    const folder = path.join(dir, `shard_${s}`);
    fs.mkdirSync(folder, { recursive: true });
    const completions: string[] = [];
    const results: string[] = [];
    for (let j = 0; j < perShard; j++) {
      const i = s * perShard + j;
      const id = `gsm8k_${i}`;
      const n = 8;
      const scores = Array.from({ length: n }, (_, k) => ((i * 7 + k * 3) % 9 < i % 9 ? 1.0 : 0.0));
      const comps = scores.map((_, k) => ({
        text: `answer ${i}.${k} é`,
        finish_reason: 'stop',
        num_tokens: k,
      }));
      const problem = { answer: String(i), prompt_id: id, verifier_type: 'gsm8k', dataset_name: 'gsm8k' };
      completions.push(
        pyJsonDumps({ prompt_id: id, prompt: `Q: what is ${i}?\nA:`, problem, completions: comps }),
      );
      const c = scores.filter((x) => x > 0).length;
      results.push(
        pyJsonDumps(
          {
            prompt_id: id,
            num_completions: n,
            num_correct: c,
            pass_rate: c / n,
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
}

describe('readSftShards', () => {
  it('streams the shards in their merge’s order (sorted names) and keeps only the band’s prompts', async () => {
    const dir = tempDir('rlvr-sft-');
    writeShards(dir, 12, 3);
    // A cut-off last line, a NaN score (json.dumps writes it bare) and a repeated prompt.
    fs.appendFileSync(
      path.join(dir, 'shard_2', 'verification_results.jsonl'),
      '{"prompt_id": "gsm8k_9", "num_com\n',
    );
    fs.appendFileSync(
      path.join(dir, 'shard_3', 'verification_results.jsonl'),
      '{"prompt_id": "gsm8k_900", "num_completions": 2, "num_correct": 1, "pass_rate": 0.5, "scores": [NaN, 1.0], "completions": [{"text": "nan"}, {"text": "ok"}]}\n' +
        '{"prompt_id": "gsm8k_0", "num_completions": 1, "num_correct": 1, "pass_rate": 0.1, "scores": [1.0], "completions": [{"text": "again"}]}\n',
    );
    const read = await readSftShards(dir, { minPassRate: 0.1, maxPassRate: 0.6 });
    expect(read.shards.slice(0, 4)).toEqual(['shard_0', 'shard_1', 'shard_10', 'shard_11']);
    expect(read.badLines).toEqual([
      { file: path.join(dir, 'shard_2', 'verification_results.jsonl'), line: 4, why: expect.any(String) },
    ]);
    expect(read.duplicates).toBe(1);
    expect(read.resultsRead).toBe(12 * 3 + 2);
    const nan = read.results.find((r) => r.promptId === 'gsm8k_900')!;
    expect(nan.completions).toEqual([{ text: 'ok' }]); // NaN > 0 is false
    // Every result kept is in band, holds only its correct completions, and has its prompt.
    for (const r of read.results) {
      expect(r.passRate >= 0.1 && r.passRate < 0.6).toBe(true);
      expect(r.scores.every((s) => s > 0)).toBe(true);
    }
    expect([...read.prompts.keys()].sort()).toEqual(
      read.results
        .map((r) => r.promptId)
        .filter((id) => id !== 'gsm8k_900')
        .sort(),
    );
    expect(read.results.length).toBeGreaterThan(5);
  });

  itWithPeer('python3', pythonAvailable())(
    'gives the same bytes as their script’s selection loop run by CPython on the same folder',
    async () => {
      const dir = tempDir('rlvr-sft-');
      writeShards(dir, 12, 5);
      const read = await readSftShards(dir, { minPassRate: 0.1, maxPassRate: 0.6 });
      const ours = buildSftSet({
        results: read.results,
        prompts: read.prompts,
        dataset: 'gsm8k',
        minPassRate: 0.1,
        maxPassRate: 0.6,
      });
      // build_sft_examples' loop and main's shuffle from scripts/build_sft_from_pass_at_k.py; the results
      // read as their launch_pass_at_k.sh merges them (sorted shard folders).
      const program = `
import json, os, random, sys
from pathlib import Path
d = Path(sys.argv[1]); min_pass_rate, max_pass_rate = 0.1, 0.6; dataset_name = "gsm8k"
rng = random.Random(42)
prompts = {}
for sd in sorted(d.glob("shard_*")):
    for line in open(sd / "completions.jsonl"):
        if line.strip():
            item = json.loads(line); prompts[item["prompt_id"]] = {"prompt": item["prompt"], "problem": item.get("problem", {})}
results = [json.loads(l) for sd in sorted(d.glob("shard_*")) for l in open(sd / "verification_results.jsonl") if l.strip()]
examples = []
for item in results:
    pass_rate = item["pass_rate"]
    if pass_rate < min_pass_rate or pass_rate >= max_pass_rate:
        continue
    prompt_id = item["prompt_id"]
    if prompt_id not in prompts:
        continue
    correct_completions = [c for c, s in zip(item["completions"], item["scores"]) if s > 0]
    if not correct_completions:
        continue
    chosen = rng.choice(correct_completions)
    prompt_info = prompts[prompt_id]
    problem = dict(prompt_info.get("problem", {}))
    problem.setdefault("prompt_id", prompt_id)
    problem.setdefault("dataset_name", dataset_name)
    examples.append({"prompt_id": prompt_id, "prompt": prompt_info["prompt"], "problem": problem,
                     "completion": chosen["text"], "pass_rate": pass_rate, "source": dataset_name})
rng.shuffle(examples)
sys.stdout.write("".join(json.dumps(ex) + "\\n" for ex in examples))
`;
      const theirs = execFileSync(hostPython()!.executable, ['-c', program, dir], { encoding: 'utf8' });
      expect(ours.lines.length).toBeGreaterThan(10);
      expect(ours.lines.map((l) => `${l}\n`).join('')).toBe(theirs);
    },
  );
});
