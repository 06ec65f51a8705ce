import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  PASSK_PLAN_FILE,
  mergeShards,
  passkMarkdown,
  readPasskFolder,
  shardFiles,
  type PasskJobPlan,
} from '../../lib/passk-records';
import { unbiasedPassAtK } from '../../lib/passk-records/estimator';
import { tempDir } from '../helpers/fixtures';

/** One line as their script writes it (completions included). */
function record(promptId: string, scores: number[]): string {
  const c = scores.filter((s) => s > 0).length;
  return JSON.stringify({
    prompt_id: promptId,
    num_completions: scores.length,
    num_correct: c,
    pass_rate: scores.length ? c / scores.length : 0,
    scores,
    completions: scores.map((score, i) => ({
      text: `answer ${i}`,
      finish_reason: 'stop',
      num_tokens: 3,
      score,
    })),
  });
}

function plan(shards: number, files?: Partial<PasskJobPlan['files']>): PasskJobPlan {
  return {
    version: 1,
    campaign: {
      dataset: 'gsm8k',
      split: 'test',
      n: 4,
      sampling: { temperature: '1.0' },
      model: { label: 'qwen3-1.7b', id: 'Qwen/Qwen3-1.7B', from: 'hf' },
      trainer: 'rlvr',
    },
    campaignId: 'abc123',
    shards: Array.from({ length: shards }, (_, index) => ({ index, host: 0, gpu: index, argv: [] })),
    files: {
      shardFolder: 'shard_{shard}',
      results: 'verification_results.jsonl',
      completions: 'completions.jsonl',
      summary: 'summary.json',
      ...files,
    },
    model: { containerPath: '/opt/ml/input/data/model', modelPath: '/opt/ml/input/data/model' },
    resumeArgs: [],
    datasetCaches: [],
    importRoots: [],
  };
}

async function* slowly(lines: string[]): AsyncGenerator<string> {
  for (const l of lines) {
    await new Promise((r) => setImmediate(r));
    yield l;
  }
}

describe('mergeShards', () => {
  it('reads shards in index order, keeps the first record of an id, and counts c as scores > 0', async () => {
    const merged = await mergeShards({
      source: 'job-1',
      plan: plan(2),
      shards: [
        { index: 1, lines: slowly([record('p3', [0, 0, 1, 1]), record('p1', [1, 1, 1, 1])]) },
        { index: 0, lines: [record('p1', [0, 0.5, 0, 0]), '', '   ', record('p2', [0, 0, 0, 0])] },
      ],
    });
    expect(merged.prompts.map((p) => [p.promptId, p.shard, p.n, p.c, p.firstCorrect])).toEqual([
      ['p1', 0, 4, 1, 1],
      ['p2', 0, 4, 0, -1],
      ['p3', 1, 4, 2, 2],
    ]);
    expect(merged.duplicates).toBe(1);
    expect(merged.badLines).toEqual([]);
    expect(merged.shardsRead).toEqual([0, 1]);
    expect(merged.shardsExpected).toBe(2);
    expect(merged.missingShards).toEqual([]);
    expect(merged.campaign?.model.label).toBe('qwen3-1.7b');
    // Only the counts are kept, never the completions.
    expect(Object.keys(merged.prompts[0]).sort()).toEqual(
      ['c', 'firstCorrect', 'n', 'passRate', 'promptId', 'shard'].sort(),
    );
    const k2 = merged.passAtK.find((p) => p.k === 2);
    expect(k2?.unbiased).toBeCloseTo((unbiasedPassAtK(4, 1, 2) + 0 + unbiasedPassAtK(4, 2, 2)) / 3, 14);
    expect(k2?.firstK).toBeCloseTo(1 / 3, 14);
  });

  it('keeps ids apart as their scripts key them: 1 and "1" are two prompts, 1.0 is the prompt 1', async () => {
    const merged = await mergeShards({
      source: 'folder',
      shards: [
        {
          index: 0,
          lines: [
            '{"prompt_id": 1, "scores": [1, 1]}',
            '{"prompt_id": "1", "scores": [0, 0]}',
            '{"prompt_id": 1.0, "scores": [0, 1]}',
          ],
        },
      ],
    });
    expect(merged.prompts.map((p) => [p.promptId, p.c])).toEqual([
      ['1', 2],
      ['1', 0],
    ]);
    expect(merged.duplicates).toBe(1);
  });

  it('lists a cut-off last line and records without an id as bad lines, with where and why', async () => {
    const whole = record('p2', [1, 0, 0, 0]);
    const merged = await mergeShards({
      source: 'job-2',
      shards: [
        {
          index: 0,
          lines: [record('p1', [1, 1, 0, 0]), JSON.stringify({ scores: [1] }), '[1, 2]', whole.slice(0, 40)],
        },
        { index: 1, lines: ['{not json', whole] },
      ],
    });
    expect(merged.prompts.map((p) => p.promptId)).toEqual(['p1', 'p2']);
    expect(merged.badLines.map((b) => [b.shard, b.line])).toEqual([
      [0, 2],
      [0, 3],
      [0, 4],
      [1, 1],
    ]);
    expect(merged.badLines[0].why).toBe('no prompt_id');
    expect(merged.badLines[1].why).toBe('not a JSON object');
    expect(merged.badLines[2].why).toMatch(/^cut off: the file's last line is not whole JSON/);
    // Not the last line: not called cut off.
    expect(merged.badLines[3].why).toMatch(/^not JSON \(/);
    // No plan: nothing expected, nothing missing.
    expect(merged.shardsExpected).toBeUndefined();
    expect(merged.campaign).toBeUndefined();
    expect(merged.missingShards).toEqual([]);
  });

  it("names the plan's shards that have no results", async () => {
    const merged = await mergeShards({
      source: 'job-3',
      plan: plan(4),
      shards: [
        { index: 2, lines: [record('a', [1])] },
        { index: 0, lines: [] },
      ],
    });
    expect(merged.shardsRead).toEqual([0, 2]);
    expect(merged.missingShards).toEqual([1, 3]);
    expect(merged.shardsExpected).toBe(4);
  });

  it('falls back to the completions’ scores, then to num_correct and num_completions', async () => {
    const line = (o: object) => JSON.stringify(o);
    const merged = await mergeShards({
      source: 'job-4',
      shards: [
        {
          index: 0,
          lines: [
            line({ prompt_id: 'from-completions', completions: [{ score: 0 }, { score: 0 }, { score: 1 }] }),
            line({ prompt_id: 'counts', num_completions: 8, num_correct: 3 }),
            line({ prompt_id: 'all-correct', num_completions: 2, num_correct: 2 }),
            line({ prompt_id: 'none-correct', num_completions: 2, num_correct: 0 }),
            line({ prompt_id: 7, num_completions: 2, num_correct: 5 }),
            line({ prompt_id: 'nothing' }),
            line({ prompt_id: 'bad-scores', scores: ['1'] }),
          ],
        },
      ],
    });
    expect(merged.prompts.map((p) => [p.promptId, p.n, p.c, p.passRate, p.firstCorrect])).toEqual([
      ['from-completions', 3, 1, 1 / 3, 2],
      // Which completion was correct is unknown: not counted in the first k.
      ['counts', 8, 3, 3 / 8, -1],
      ['all-correct', 2, 2, 1, 0],
      ['none-correct', 2, 0, 0, -1],
    ]);
    expect(merged.badLines.map((b) => [b.line, b.why])).toEqual([
      [5, 'num_correct 5 of num_completions 2 is not a count'],
      [6, 'no scores, nor num_correct and num_completions'],
      [7, 'scores is not a list of numbers'],
    ]);
  });

  it("reads Python's bare NaN and Infinity scores as their script judged them (nan > 0 is false)", async () => {
    const merged = await mergeShards({
      source: 'job-5',
      shards: [
        {
          index: 0,
          lines: [
            '{"prompt_id": "p", "scores": [NaN, Infinity, -Infinity, 0.0], "completions": [{"text": "NaN Infinity \\" NaN"}]}',
          ],
        },
      ],
    });
    expect(merged.badLines).toEqual([]);
    expect(merged.prompts.map((p) => [p.n, p.c, p.firstCorrect])).toEqual([[4, 1, 1]]);
  });
});

describe('mergeShards on lines as Python writes them', () => {
  /** json.dumps' own spacing (", " and ": "), the form their script writes. */
  const py = (id: string, scores: number[], text = 'x') =>
    `{"prompt_id": ${JSON.stringify(id)}, "num_completions": ${scores.length}, "num_correct": ${scores.filter((x) => x > 0).length}, "pass_rate": 0.5, "scores": [${scores.map((x) => x.toFixed(1)).join(', ')}], "completions": [${scores.map((x) => `{"text": ${JSON.stringify(text)}, "finish_reason": "stop", "num_tokens": 3, "score": ${x.toFixed(1)}}`).join(', ')}]}`;

  it('reads the counts from the head of each record, whatever the completions hold', async () => {
    const merged = await mergeShards({
      source: 'py',
      shards: [
        {
          index: 0,
          lines: [
            py('gsm8k_0', [0, 1, 1, 0]),
            // The key spelt inside a prompt id and inside a completion: the record is still read right.
            py('odd, "completions": [', [1, 0, 0, 0]),
            py('gsm8k_2', [0, 0, 0, 1], ', "completions": [ ]}'),
            // A NaN score (bare in Python's output): read as not correct.
            py('gsm8k_3', [1, 1, 0, 0]).replace('"scores": [1.0', '"scores": [NaN'),
            // Cut off inside its completions: not a whole record, listed as a bad line.
            py('gsm8k_4', [1, 1, 1, 1]).slice(0, 200),
          ],
        },
      ],
    });
    expect(merged.prompts.map((p) => [p.promptId, p.n, p.c, p.firstCorrect])).toEqual([
      ['gsm8k_0', 4, 2, 1],
      ['odd, "completions": [', 4, 1, 0],
      ['gsm8k_2', 4, 1, 3],
      ['gsm8k_3', 4, 1, 1],
    ]);
    expect(merged.badLines.map((b) => b.line)).toEqual([5]);
  });
});

describe('readPasskFolder', () => {
  function write(file: string, lines: string[], ending = '\n'): void {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, lines.map((l) => l + ending).join(''));
  }

  it('reads a run folder: the plan, and the shards under passk/', async () => {
    const dir = tempDir('passk-run-');
    fs.writeFileSync(path.join(dir, PASSK_PLAN_FILE), JSON.stringify(plan(3)));
    write(path.join(dir, 'passk', 'shard_0', 'verification_results.jsonl'), [
      record('a', [1, 0, 0, 0]),
      record('b', [0, 0, 0, 0]),
    ]);
    // A cut-off last line, no newline after it (the process stopped mid-write), and CRLF line ends.
    fs.mkdirSync(path.join(dir, 'passk', 'shard_2'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'passk', 'shard_2', 'verification_results.jsonl'),
      `${record('c', [1, 1, 1, 1])}\r\n${record('a', [0, 0, 0, 0])}\r\n${record('d', [1]).slice(0, 25)}`,
    );
    // A shard started but with no file yet, and folders that are not shards.
    fs.mkdirSync(path.join(dir, 'passk', 'shard_1'));
    fs.mkdirSync(path.join(dir, 'passk', 'shard_01'));
    write(path.join(dir, 'passk', 'shard_x', 'verification_results.jsonl'), [record('z', [1])]);

    expect(shardFiles(dir).map((s) => [s.index, path.relative(dir, s.file)])).toEqual([
      [0, path.join('passk', 'shard_0', 'verification_results.jsonl')],
      [2, path.join('passk', 'shard_2', 'verification_results.jsonl')],
    ]);
    const merged = await readPasskFolder(dir);
    expect(merged?.source).toBe(dir);
    expect(merged?.campaign?.dataset).toBe('gsm8k');
    expect(merged?.shardsExpected).toBe(3);
    expect(merged?.shardsRead).toEqual([0, 2]);
    expect(merged?.missingShards).toEqual([1]);
    expect(merged?.prompts.map((p) => [p.promptId, p.c])).toEqual([
      ['a', 1],
      ['b', 0],
      ['c', 4],
    ]);
    expect(merged?.duplicates).toBe(1);
    expect(merged?.badLines.map((b) => [b.shard, b.line, b.why.slice(0, 8)])).toEqual([[2, 3, 'cut off:']]);
  });

  it("uses the plan's file names", async () => {
    const dir = tempDir('passk-named-');
    fs.writeFileSync(
      path.join(dir, PASSK_PLAN_FILE),
      JSON.stringify(plan(2, { shardFolder: 'gpu-{shard}', results: 'results.jsonl' })),
    );
    write(path.join(dir, 'passk', 'gpu-1', 'results.jsonl'), [record('a', [1, 1])]);
    write(path.join(dir, 'passk', 'shard_0', 'verification_results.jsonl'), [record('b', [1, 1])]);
    const merged = await readPasskFolder(dir);
    expect(merged?.prompts.map((p) => p.promptId)).toEqual(['a']);
    expect(merged?.missingShards).toEqual([0]);
  });

  it("reads a bare folder of their script's shards, without a plan", async () => {
    const dir = tempDir('passk-bare-');
    write(path.join(dir, 'shard_10', 'verification_results.jsonl'), [record('late', [0, 1])]);
    write(path.join(dir, 'shard_2', 'verification_results.jsonl'), [record('early', [1, 0]), '']);
    fs.writeFileSync(path.join(dir, 'shard_2.log'), 'a log, not a shard\n');
    const merged = await readPasskFolder(dir);
    expect(merged?.campaign).toBeUndefined();
    expect(merged?.shardsExpected).toBeUndefined();
    // Numeric order: shard 2 before shard 10.
    expect(merged?.shardsRead).toEqual([2, 10]);
    expect(merged?.prompts.map((p) => [p.promptId, p.shard, p.firstCorrect])).toEqual([
      ['early', 2, 0],
      ['late', 10, 1],
    ]);
    expect(merged?.passAtK.map((p) => p.k)).toEqual([1, 2]);
    // The gaps below the highest shard are missing shards, said as such.
    expect(merged?.missingShards).toEqual([0, 1, 3, 4, 5, 6, 7, 8, 9]);
    expect(passkMarkdown([merged!])).toContain(
      'missing shards: 0, 1, 3, 4, 5, 6, 7, 8, 9 (gaps in the numbers; without a plan, shards after the highest read cannot be seen)',
    );
  });

  it('a bare folder with shards 0, 1 and 3: shard 2 is missing; a hostile shard number costs nothing', async () => {
    const dir = tempDir('passk-gap-');
    for (const i of [0, 1, 3])
      write(path.join(dir, `shard_${i}`, 'verification_results.jsonl'), [record(`p${i}`, [1])]);
    expect((await readPasskFolder(dir))?.missingShards).toEqual([2]);
    write(path.join(dir, 'shard_999999999', 'verification_results.jsonl'), [record('far', [1])]);
    const far = await readPasskFolder(dir);
    expect(far?.shardsRead).toEqual([0, 1, 3, 999999999]);
    expect(far?.missingShards.length).toBe(4096 - 3);
  });

  it('is undefined for a folder with neither shards nor a plan; a plan alone reads as all shards missing', async () => {
    const empty = tempDir('passk-none-');
    fs.mkdirSync(path.join(empty, 'passk'));
    fs.writeFileSync(path.join(empty, 'notes.txt'), 'x');
    expect(await readPasskFolder(empty)).toBeUndefined();
    expect(await readPasskFolder(path.join(empty, 'absent'))).toBeUndefined();

    const planned = tempDir('passk-planned-');
    fs.writeFileSync(path.join(planned, PASSK_PLAN_FILE), JSON.stringify(plan(2)));
    const merged = await readPasskFolder(planned);
    expect(merged?.prompts).toEqual([]);
    expect(merged?.missingShards).toEqual([0, 1]);
    expect(merged?.passAtK).toEqual([]);
  });

  it('does not follow a symlinked results file', async () => {
    const dir = tempDir('passk-link-');
    const elsewhere = path.join(tempDir('passk-elsewhere-'), 'secret.jsonl');
    fs.writeFileSync(elsewhere, `${record('secret', [1])}\n`);
    fs.mkdirSync(path.join(dir, 'shard_0'));
    fs.symlinkSync(elsewhere, path.join(dir, 'shard_0', 'verification_results.jsonl'));
    const merged = await readPasskFolder(dir);
    expect(merged?.prompts).toEqual([]);
    expect(merged?.shardsRead).toEqual([]);
  });
});
