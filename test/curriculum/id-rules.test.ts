import { ID_RULES, resolveIdRule } from '../../lib/curriculum';
import { type CopyColumns, type ResolvedIdRule } from '../../lib/curriculum/id-rules';
import { LOADERS } from '../../lib/trainers/rlvr-experiments';

type Checkable = Extract<ResolvedIdRule, { checkable: true }>;

function checkable(loader: string, params: Record<string, unknown> = {}): Checkable {
  const rule = resolveIdRule(loader, params);
  if (!rule.checkable) throw new Error(`${loader}: ${rule.reason}`);
  return rule;
}

function ids(rule: Checkable, copy: CopyColumns): string[] {
  const made = rule.ids(copy);
  if ('reason' in made) throw new Error(made.reason);
  return made.ids;
}

describe('id rules (their DATASET_LOADERS)', () => {
  test('every loader the trainer profile names has a rule with a citation, and no other', () => {
    expect(Object.keys(ID_RULES).sort()).toEqual(Object.keys(LOADERS).sort());
    for (const rule of Object.values(ID_RULES)) expect(rule.cite).toMatch(/^S\/data\.py:\d+/);
  });

  test('checkable loaders read a copy the profile names; the others say why not', () => {
    const table = Object.values(ID_RULES).map((r) => [r.loader, r.checkable]);
    expect(table).toEqual([
      ['gsm8k', true],
      ['math', true],
      ['deepscaler', true],
      ['humaneval', false],
      ['mbpp', true],
      ['apps', false],
      ['ifeval', true],
      ['if_multi_constraints', true],
      ['dummy', false],
      ['allenai_rlvr', true],
      ['allenai_gsm8k_mini', false],
      ['sft_jsonl', false],
    ]);
    for (const r of Object.values(ID_RULES)) {
      const resolved = resolveIdRule(r.loader);
      expect(resolved.checkable).toBe(r.checkable);
      if (!resolved.checkable) expect(resolved.reason).toMatch(/\w/);
      else expect(LOADERS[r.loader].source).toBe('s3-cache');
    }
    expect(resolveIdRule('nonesuch')).toEqual({
      checkable: false,
      loader: 'nonesuch',
      reason: 'no id rule is known for the loader "nonesuch"',
    });
  });

  test('folders follow the profile: the split, train by default; allenai_rlvr ignores it', () => {
    expect(checkable('gsm8k').folder).toBe('gsm8k_train');
    expect(checkable('gsm8k', { split: 'test' }).folder).toBe('gsm8k_test');
    expect(checkable('allenai_rlvr', { split: 'test' }).folder).toBe('allenai_rlvr_train');
    expect(checkable('if_multi_constraints').folder).toBe('if_multi_constraints_train');
  });

  test('row-index rules need no column', () => {
    for (const [loader, prefix] of [
      ['gsm8k', 'gsm8k_'],
      ['deepscaler', 'deepscaler_'],
      ['ifeval', 'ifeval_'],
      ['if_multi_constraints', 'if_multi_'],
    ]) {
      const rule = checkable(loader);
      expect(rule.columns).toEqual([]);
      expect(ids(rule, { rows: 3, columns: {} })).toEqual([`${prefix}0`, `${prefix}1`, `${prefix}2`]);
    }
  });

  test('math: type lower-cased, numbered within its type, after the level filter', () => {
    const copy: CopyColumns = {
      rows: 5,
      columns: {
        type: ['Algebra', 'Geometry', 'Algebra', 'Counting & Probability', 'Algebra'],
        level: ['Level 1', 'Level 2', 'Level 2', 'Level 1', 'Level ?'],
      },
    };
    expect(checkable('math').columns).toEqual(['type']);
    expect(ids(checkable('math'), copy)).toEqual([
      'math_algebra_0',
      'math_geometry_0',
      'math_algebra_1',
      'math_counting & probability_0',
      'math_algebra_2',
    ]);
    const levels = checkable('math', { level: [2] });
    expect(levels.columns).toEqual(['type', 'level']);
    expect(ids(levels, copy)).toEqual(['math_geometry_0', 'math_algebra_0']);
    expect(ids(checkable('math', { level: [] }), copy)).toEqual([]);
    const bad = resolveIdRule('math', { level: 3 });
    expect(bad.checkable).toBe(false);
    expect(!bad.checkable && bad.reason).toMatch(/`level` is not a list/);
  });

  test('mbpp: mbpp_<task_id>', () => {
    expect(checkable('mbpp').columns).toEqual(['task_id']);
    expect(ids(checkable('mbpp'), { rows: 2, columns: { task_id: ['601', '602'] } })).toEqual([
      'mbpp_601',
      'mbpp_602',
    ]);
  });

  test('allenai_rlvr: the source dataset lower-cased and the index after the datasets filter', () => {
    const copy: CopyColumns = { rows: 4, columns: { dataset: ['gsm8k', 'MATH', 'ifeval', 'GSM8K'] } };
    expect(ids(checkable('allenai_rlvr'), copy)).toEqual([
      'allenai_gsm8k_0',
      'allenai_math_1',
      'allenai_ifeval_2',
      'allenai_gsm8k_3',
    ]);
    expect(ids(checkable('allenai_rlvr', { datasets: ['gsm8k', 'Math'] }), copy)).toEqual([
      'allenai_gsm8k_0',
      'allenai_math_1',
      'allenai_gsm8k_2',
    ]);
  });
});
