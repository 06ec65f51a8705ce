import { checkCurriculum } from '../../lib/curriculum/order-check';
import { UserError } from '../../lib/errors';
import { buildOrder, curriculumConfigLines, describeOrder, naturalCompare } from '../../lib/passk/curriculum';
import { mergeShards, type MergedPasskResults, type PasskCampaign } from '../../lib/passk-records';
import { passkPlan } from '../helpers/passk';

/** Results of one campaign: [id, n, c] per prompt, in the order read. */
function results(
  prompts: readonly [string, number, number][],
  campaign: Partial<PasskCampaign> | null = {},
  source = 'run-a',
): MergedPasskResults {
  return {
    source,
    ...(campaign
      ? {
          campaign: {
            dataset: 'gsm8k',
            split: 'train',
            n: 8,
            sampling: { temperature: '1.0' },
            model: { label: 'qwen3-1.7b', id: 'Qwen/Qwen3-1.7B-Base', from: 'hub' },
            trainer: 'rlvr-experiments',
            ...campaign,
          },
        }
      : {}),
    shardsRead: [0],
    missingShards: [],
    prompts: prompts.map(([promptId, n, c]) => ({
      promptId,
      n,
      c,
      passRate: n ? c / n : 0,
      firstCorrect: c ? 0 : -1,
      shard: 0,
    })),
    duplicates: 0,
    badLines: [],
    passAtK: [],
  };
}

const thrown = (f: () => unknown): UserError => {
  try {
    f();
  } catch (e) {
    return e as UserError;
  }
  throw new Error('did not throw');
};

describe('buildOrder', () => {
  it('sorts easy-first and hard-first by rate; ties by natural id order without the dataset', () => {
    const r = results([
      ['gsm8k_10', 8, 4],
      ['gsm8k_2', 8, 4],
      ['gsm8k_1', 8, 8],
      ['gsm8k_3', 8, 0],
    ]);
    const easy = buildOrder([r], { order: 'easy-first' });
    expect(easy.ids).toEqual(['gsm8k_1', 'gsm8k_2', 'gsm8k_10', 'gsm8k_3']);
    expect(easy.text).toBe('gsm8k_1\ngsm8k_2\ngsm8k_10\ngsm8k_3\n');
    expect(easy.dataset).toBe('gsm8k');
    const hard = buildOrder([r], { order: 'hard-first' });
    // Ties keep the same id order in both directions: only the rates are reversed.
    expect(hard.ids).toEqual(['gsm8k_3', 'gsm8k_2', 'gsm8k_10', 'gsm8k_1']);
  });

  it("breaks ties by the dataset's row order when its ids are given, and names the prompts with no result", () => {
    // A math copy whose row order is not the ids' natural order.
    const datasetIds = [
      'math_algebra_0',
      'math_geometry_0',
      'math_algebra_1',
      'math_geometry_1',
      'math_algebra_2',
    ];
    const r = results(
      [
        ['math_algebra_1', 4, 2],
        ['math_geometry_0', 4, 2],
        ['math_algebra_0', 4, 1],
      ],
      { dataset: 'math' },
    );
    // Prompts without a result leave training only when the user says so.
    expect(thrown(() => buildOrder([r], { order: 'easy-first', datasetIds })).message).toMatch(
      /the results do not cover the prompts: 2 dataset prompts have no result: math_geometry_1, math_algebra_2\. Their trainer trains only on the ids in the order file.*--missing first, --missing last .* or --missing drop/,
    );
    const order = buildOrder([r], { order: 'easy-first', datasetIds, missing: 'drop' });
    expect(order.ids).toEqual(['math_geometry_0', 'math_algebra_1', 'math_algebra_0']);
    expect(order.excluded.noResult).toEqual(['math_geometry_1', 'math_algebra_2']);
    expect(describeOrder(order)).toContain('left out, no result: math_geometry_1, math_algebra_2');
    // Placed first or last, in the dataset's row order.
    const last = buildOrder([r], { order: 'easy-first', datasetIds, missing: 'last' });
    expect(last.ids).toEqual([
      'math_geometry_0',
      'math_algebra_1',
      'math_algebra_0',
      'math_geometry_1',
      'math_algebra_2',
    ]);
    expect(describeOrder(last)).toContain(
      'placed last (--missing last), no result: math_geometry_1, math_algebra_2',
    );
    expect(buildOrder([r], { order: 'easy-first', datasetIds, missing: 'first' }).ids.slice(0, 2)).toEqual([
      'math_geometry_1',
      'math_algebra_2',
    ]);
    // Without the dataset: natural order of the ids.
    expect(buildOrder([r], { order: 'easy-first' }).ids).toEqual([
      'math_algebra_1',
      'math_geometry_0',
      'math_algebra_0',
    ]);
  });

  it('pools several campaigns of the same dataset as Σc/Σn, and says what differed between them', () => {
    const a = results([
      ['gsm8k_0', 8, 8],
      ['gsm8k_1', 8, 0],
    ]);
    const b = results(
      [
        ['gsm8k_0', 56, 0],
        ['gsm8k_1', 56, 28],
        ['gsm8k_2', 8, 2],
      ],
      { n: 56, model: { label: 'other', id: 'Qwen/Qwen3-4B', from: 'hub' } },
      'run-b',
    );
    const order = buildOrder([a, b], { order: 'easy-first' });
    // Pooled: gsm8k_0 8/64, gsm8k_1 28/64, gsm8k_2 2/8. The mean of each campaign's rate would put
    // gsm8k_0 first (0.5) and tie the other two (0.25): each completion weighs the same, not each campaign.
    expect(order.ids).toEqual(['gsm8k_1', 'gsm8k_2', 'gsm8k_0']);
    expect(order.rates.get('gsm8k_0')).toBe(8 / 64);
    expect(order.rates.get('gsm8k_1')).toBe(28 / 64);
    expect(order.pooled).toBe(2);
    expect(order.conflicts).toEqual([
      { what: 'model', values: ['Qwen/Qwen3-1.7B-Base', 'Qwen/Qwen3-4B'] },
      { what: 'n', values: ['8', '56'] },
    ]);
    expect(describeOrder(order)).toContain(
      'pooled across different model: Qwen/Qwen3-1.7B-Base, Qwen/Qwen3-4B',
    );
    expect(buildOrder([a, b], { order: 'hard-first' }).ids).toEqual(['gsm8k_0', 'gsm8k_2', 'gsm8k_1']);
  });

  it('band keeps min ≤ rate < max (their SFT script’s convention), easiest first; defaults 0 and 0.5', () => {
    const r = results([
      ['gsm8k_0', 4, 0], // 0: in [0, 0.5)
      ['gsm8k_1', 4, 2], // 0.5: out (max is exclusive)
      ['gsm8k_2', 4, 1], // 0.25: in
      ['gsm8k_3', 4, 4], // 1: out
    ]);
    const band = buildOrder([r], { order: 'band' });
    expect(band.ids).toEqual(['gsm8k_2', 'gsm8k_0']);
    expect(band.excluded.outsideBand).toBe(2);
    expect(buildOrder([r], { order: 'band', min: 0.25, max: 1 }).ids).toEqual(['gsm8k_1', 'gsm8k_2']);
    // min/max also cut the other orders when given.
    expect(buildOrder([r], { order: 'hard-first', min: 0.5 }).ids).toEqual(['gsm8k_1', 'gsm8k_3']);
    expect(thrown(() => buildOrder([r], { order: 'band', min: 0.6, max: 0.9 })).message).toMatch(
      /no prompt of the 4 measured has a pass rate in \[0.6, 0.9\)/,
    );
    expect(thrown(() => buildOrder([r], { order: 'band', min: 0.5, max: 0.5 })).message).toMatch(/is empty/);
  });

  it('refuses results of different datasets, splits or MATH levels (exit 2), naming them', () => {
    const g = results([['gsm8k_0', 4, 1]]);
    const test = results([['gsm8k_0', 4, 1]], { split: 'test' }, 'run-test');
    const e = thrown(() => buildOrder([g, test], { order: 'easy-first' }));
    expect(e).toBeInstanceOf(UserError);
    expect(e.exitCode).toBe(2);
    expect(e.message).toBe(
      'the results measure different prompts and cannot make one order file: run-a: gsm8k train; run-test: gsm8k test',
    );
    const m = results([['math_algebra_0', 4, 1]], { dataset: 'math' }, 'm');
    expect(thrown(() => buildOrder([g, m], { order: 'band' })).message).toMatch(
      /run-a: gsm8k train; m: math train/,
    );
    // Levels are a set: 5,3,4 keeps the rows 3,4,5 keeps; no level keeps all and numbers them differently.
    const m345 = results([['math_algebra_0', 4, 1]], { dataset: 'math', level: '3,4,5' }, 'm345');
    const m534 = results([['math_algebra_1', 4, 1]], { dataset: 'math', level: '5,3,4' }, 'm534');
    const both = buildOrder([m345, m534], { order: 'easy-first' });
    expect(both.level).toBe('3,4,5');
    expect(thrown(() => buildOrder([m, m345], { order: 'easy-first' })).message).toMatch(
      /m: math train; m345: math train level 3,4,5 \(the MATH level filter changes which prompt each id names\)/,
    );
  });

  it('refuses ifeval (same ids, other prompts in the trainer) and datasets no trainer loader reads', () => {
    const ifeval = results([['ifeval_0', 4, 1]], { dataset: 'ifeval' });
    expect(thrown(() => buildOrder([ifeval], { order: 'easy-first' })).message).toMatch(
      /^cannot make an order file from ifeval results: their pass@k script's ifeval loader reads google\/IFEval .* allenai\/RLVR-IFeval/,
    );
    // A bare folder (no plan) is known by its ids: refused the same way.
    expect(
      thrown(() => buildOrder([results([['ifeval_3', 4, 1]], null)], { order: 'band' })).message,
    ).toMatch(/from ifeval results/);
    expect(
      thrown(() => buildOrder([results([['aime_0', 4, 1]], { dataset: 'aime' })], { order: 'band' })).message,
    ).toMatch(/no trainer loader reads aime/);
    // if_multi_constraints: the script calls the trainer's loader, the ids are the trainer's.
    const ifMulti = buildOrder([results([['if_multi_0', 4, 1]], null)], { order: 'easy-first' });
    expect([ifMulti.dataset, ifMulti.ids]).toEqual(['if_multi_constraints', ['if_multi_0']]);
  });

  it('refuses results whose ids the dataset copy lacks: the pre-flight would refuse the file', () => {
    const r = results([
      ['gsm8k_0', 4, 1],
      ['gsm8k_7473', 4, 1],
    ]);
    const datasetIds = Array.from({ length: 10 }, (_, i) => `gsm8k_${i}`);
    expect(thrown(() => buildOrder([r], { order: 'easy-first', datasetIds })).message).toMatch(
      /^1 of the 2 prompt ids in the results are not in the dataset copy \(10 prompts\): gsm8k_7473\./,
    );
  });

  it('writes an order the curriculum check accepts against the same ids', () => {
    const datasetIds = Array.from({ length: 50 }, (_, i) => `gsm8k_${i}`);
    const r = results(datasetIds.slice(0, 40).map((id, i) => [id, 8, i % 9]));
    const order = buildOrder([r], { order: 'hard-first', datasetIds, missing: 'drop' });
    const check = checkCurriculum(order.text, datasetIds);
    expect([check.ok, check.ids, check.duplicates.count, check.leftOut]).toEqual([true, 40, 0, 10]);
    expect(order.excluded.noResult).toHaveLength(10);
  });
});

describe('a campaign with gaps: a missing shard, a cut line, a duplicate', () => {
  /** 60 prompts over 3 shards of 20; shard 2 missing, a cut last line in shard 1, a prompt twice in shard 0. */
  async function gappy() {
    const line = (i: number) => JSON.stringify({ prompt_id: `gsm8k_${i}`, scores: [i % 2, 1, 0, 0] });
    return mergeShards({
      source: 'campaign',
      plan: passkPlan(3, { dataset: 'gsm8k', n: 4 }),
      shards: [
        { index: 0, lines: [...Array.from({ length: 20 }, (_, i) => line(i)), line(3)] },
        {
          index: 1,
          lines: [...Array.from({ length: 19 }, (_, i) => line(20 + i)), '{"prompt_id": "gsm8k_39", "sco'],
        },
      ],
    });
  }
  const datasetIds = Array.from({ length: 60 }, (_, i) => `gsm8k_${i}`);

  it('is refused naming each gap, with or without the dataset copy (which also lists the prompts)', async () => {
    const r = await gappy();
    for (const ids of [undefined, datasetIds]) {
      const message = thrown(() =>
        buildOrder([r], { order: 'easy-first', ...(ids ? { datasetIds: ids } : {}) }),
      ).message;
      expect(message).toMatch(/campaign: shard 2 missing/);
      expect(message).toMatch(/campaign: 1 cut or bad line \(shard 1 line 20: cut off/);
      expect(message).toMatch(/campaign: 1 duplicate records, the first kept/);
      if (ids)
        expect(message).toMatch(
          /21 dataset prompts have no result: gsm8k_39, gsm8k_40, gsm8k_41, gsm8k_42, gsm8k_43, … \(21 in all\)/,
        );
    }
  });

  it('--missing last places the 21 prompts at the end; drop leaves them out and says so; first/last need the copy', async () => {
    const r = await gappy();
    const last = buildOrder([r], { order: 'easy-first', datasetIds, missing: 'last' });
    expect(last.ids).toHaveLength(60);
    expect(last.ids.slice(39)).toEqual(datasetIds.slice(39));
    expect(new Set(last.ids).size).toBe(60);
    expect(describeOrder(last)).toEqual(
      expect.arrayContaining([
        'read from campaign: shard(s) 2 missing',
        expect.stringMatching(/^read from campaign: 1 cut or bad line\(s\)/),
        'read from campaign: 1 duplicate record(s), the first kept',
      ]),
    );
    const dropped = buildOrder([r], { order: 'easy-first', missing: 'drop' });
    expect(dropped.ids).toHaveLength(39);
    expect(describeOrder(dropped)).toContain(
      'left out (--missing drop): the prompts of the missing shards and cut lines, not known without the dataset copy',
    );
    expect(thrown(() => buildOrder([r], { order: 'easy-first', missing: 'last' })).message).toMatch(
      /--missing last places the prompts without a result by the dataset copy's ids, which were not read/,
    );
  });
});

describe('naturalCompare', () => {
  it('orders digit runs by value', () => {
    const ids = ['gsm8k_10', 'gsm8k_2', 'gsm8k_1', 'math_algebra_11', 'math_algebra_9', 'gsm8k_01'];
    expect([...ids].sort(naturalCompare)).toEqual([
      'gsm8k_01',
      'gsm8k_1',
      'gsm8k_2',
      'gsm8k_10',
      'math_algebra_9',
      'math_algebra_11',
    ]);
    expect(naturalCompare('a_99999999999999999999', 'a_100000000000000000000')).toBeLessThan(0);
  });
});

describe('curriculumConfigLines', () => {
  it('writes their mixed-dataset form with the S3 URI our launcher maps to an order channel', () => {
    expect(curriculumConfigLines('s3://bucket/rlvr-experiments/curricula/gsm8k-easy.txt', 'gsm8k')).toEqual([
      'data:',
      '  dataset: mixed',
      '  datasets:',
      '    - name: gsm8k',
      '      order: "s3://bucket/rlvr-experiments/curricula/gsm8k-easy.txt"',
    ]);
  });

  it('repeats a split other than train and the MATH levels the ids were numbered under', () => {
    expect(curriculumConfigLines('/efs/curricula/m.txt', 'math', { split: 'test', level: '5,3,4' })).toEqual([
      'data:',
      '  dataset: mixed',
      '  datasets:',
      '    - name: math',
      '      split: "test"',
      '      level: [3, 4, 5]',
      '      order: "/efs/curricula/m.txt"',
    ]);
  });

  it('refuses a prefix, another scheme and a dataset the trainer has no loader for', () => {
    expect(() => curriculumConfigLines('s3://bucket/curricula/', 'gsm8k')).toThrow(/is a prefix/);
    expect(() => curriculumConfigLines('https://x/y.txt', 'gsm8k')).toThrow(/s3:\/\/ URI or a path/);
    expect(() => curriculumConfigLines('s3://b/k.txt', 'aime')).toThrow(/not one of the trainer's datasets/);
  });
});
