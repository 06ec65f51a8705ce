import {
  mergeShards,
  passAtKCsv,
  passkCsv,
  passkJson,
  passkMarkdown,
  type MergedPasskResults,
} from '../../lib/passk-records';
import { firstKNote } from '../../lib/passk-records/format';
import { passAtKTable } from '../../lib/passk-records/estimator';
import { type PromptResult } from '../../lib/passk-records/merged';

function prompt(promptId: string, n: number, c: number, firstCorrect: number, shard = 0): PromptResult {
  return { promptId, n, c, passRate: c / n, firstCorrect, shard };
}

const planned: MergedPasskResults = (() => {
  const prompts = [prompt('gsm8k_1', 4, 1, 3), prompt('gsm8k_2', 4, 4, 0), prompt('a|b, "c"', 4, 0, -1, 2)];
  return {
    source: 'passk-qwen-0101',
    campaign: {
      dataset: 'math',
      split: 'test',
      level: '3,4,5',
      n: 4,
      sampling: {},
      model: { label: 'qwen3-1.7b, step 20', id: 'x', from: 'hf' },
      trainer: 'rlvr',
    },
    shardsExpected: 4,
    shardsRead: [0, 2, 3],
    missingShards: [1],
    prompts,
    duplicates: 2,
    badLines: [{ shard: 3, line: 17, why: 'cut off: the file’s last line is not whole JSON' }],
    passAtK: passAtKTable(prompts),
  };
})();

const bare: MergedPasskResults = {
  source: '/tmp/their-output',
  shardsRead: [0],
  missingShards: [],
  prompts: [prompt('p', 2, 1, 1)],
  duplicates: 0,
  badLines: [],
  passAtK: passAtKTable([prompt('p', 2, 1, 1)]),
};

describe('passkMarkdown', () => {
  it('says per source what was read, missing and dropped, then pass@k by both estimators in percent', () => {
    const md = passkMarkdown([planned, bare]);
    const lines = md.split('\n');
    expect(lines).toContain('### passk-qwen-0101');
    const header = lines.find((l) => l.startsWith('model '));
    expect(header).toBe(
      'model qwen3-1.7b, step 20 · dataset math/test (levels 3,4,5) · n=4 · 3 prompts · shards 3 of 4 read · ' +
        'missing shards: 1 · 2 duplicates dropped (first record kept) · ' +
        '1 bad line (shard 3 line 17: cut off: the file’s last line is not whole JSON)',
    );
    expect(lines).toContain('| k | pass@k (unbiased) | first-k | prompts |');
    // k=2: (1/2 + 1 + 0)/3 unbiased; first two hold a correct one for gsm8k_2 only.
    expect(lines).toContain('| 2 | 50.00% | 33.33% | 3 |');
    expect(lines).toContain('| 1 | 41.67% | 33.33% | 3 |');
    expect(lines).toContain('| 4 | 66.67% | 66.67% | 3 |');
    // The bare folder: no plan, n from its prompts.
    expect(md).toContain('no plan (their script’s folder) · n=2 · 1 prompt · 1 shard read');
    expect(lines).toContain('| 2 | 100.00% | 100.00% | 1 |');
    // No per-prompt table unless asked.
    expect(md).not.toContain('| prompt_id |');
  });

  it('adds a per-prompt table when asked, its cells escaped', () => {
    const md = passkMarkdown([planned], { prompts: true });
    expect(md).toContain('| prompt_id | n | c | pass rate |');
    expect(md).toContain('| gsm8k_1 | 4 | 1 | 25.00% |');
    expect(md).toContain('| a\\|b, "c" | 4 | 0 | 0.00% |');
  });

  it('says when a source has no prompts instead of an empty table', () => {
    const md = passkMarkdown([{ ...bare, prompts: [], passAtK: [], shardsRead: [] }]);
    expect(md).toContain('No prompt results read.');
    expect(md).not.toContain('| k |');
  });
});

describe('CSV', () => {
  it('has one row per (source, prompt), fields with commas or quotes quoted', () => {
    const rows = passkCsv([planned, bare]).trimEnd().split('\n');
    expect(rows).toEqual([
      'source,model,dataset,split,prompt_id,n,c,pass_rate',
      'passk-qwen-0101,"qwen3-1.7b, step 20",math,test,gsm8k_1,4,1,0.25',
      'passk-qwen-0101,"qwen3-1.7b, step 20",math,test,gsm8k_2,4,4,1',
      'passk-qwen-0101,"qwen3-1.7b, step 20",math,test,"a|b, ""c""",4,0,0',
      '/tmp/their-output,,,,p,2,1,0.5',
    ]);
  });

  it('has one row per (source, k) for pass@k', () => {
    const rows = passAtKCsv([planned, bare]).trimEnd().split('\n');
    expect(rows[0]).toBe('source,model,dataset,split,k,pass_at_k_unbiased,first_k,prompts');
    expect(rows).toHaveLength(1 + 3 + 2);
    expect(rows[2]).toBe('passk-qwen-0101,"qwen3-1.7b, step 20",math,test,2,0.5,0.3333333333333333,3');
    expect(rows[5]).toBe('/tmp/their-output,,,,2,1,1,1');
  });
});

describe('passkJson', () => {
  it('keeps everything, prompts included', () => {
    const parsed = JSON.parse(passkJson([planned, bare])) as MergedPasskResults[];
    // Everything, with a note where first-k departs from their script's figure (duplicates here).
    expect(parsed).toEqual([{ ...planned, firstKNote: firstKNote(planned) }, bare]);
    expect(parsed[0].prompts).toHaveLength(3);
  });
});

describe('first-k beside their script', () => {
  const line = (id: string, scores: number[]) => JSON.stringify({ prompt_id: id, scores });

  it('says where first-k is not the figure their script prints, and why; says nothing on a clean campaign', async () => {
    const clean = await mergeShards({
      source: 'clean',
      shards: [{ index: 0, lines: [line('a', [0, 1]), line('b', [1, 0])] }],
    });
    expect(firstKNote(clean)).toBeUndefined();
    expect(passkMarkdown([clean])).not.toMatch(/not the figure their script prints/);
    const dup = await mergeShards({
      source: 'dup',
      shards: [{ index: 0, lines: [line('a', [0, 1]), line('b', [1, 0]), line('a', [1, 1])] }],
    });
    expect(passkMarkdown([dup])).toContain(
      'Note: first-k is not the figure their script prints for this folder: it counts the 1 duplicate record dropped here (a prompt written twice counts twice).',
    );
    const unequal = await mergeShards({
      source: 'unequal',
      shards: [{ index: 0, lines: [line('a', [1]), line('b', [0, 0, 0, 0])] }],
    });
    expect(firstKNote(unequal)).toMatch(
      /divides every k by all records, where this divides each k by the prompts with n ≥ k/,
    );
    expect(JSON.parse(passkJson([unequal]))[0].firstKNote).toBe(firstKNote(unequal));
  });
});
