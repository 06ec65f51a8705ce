import { curriculumWarnings, formatCurriculumLine, missingIdsProblem } from '../../lib/curriculum';
import { checkCurriculum, parseOrderFile } from '../../lib/curriculum/order-check';

const gsm8k = (n: number) => Array.from({ length: n }, (_, i) => `gsm8k_${i}`);

describe('order file against the dataset ids', () => {
  test('lines are stripped, blank lines skipped, numbered as in the file', () => {
    expect(parseOrderFile('gsm8k_3\r\n\n  gsm8k_1  \n\t\ngsm8k_2')).toEqual([
      { id: 'gsm8k_3', line: 1 },
      { id: 'gsm8k_1', line: 3 },
      { id: 'gsm8k_2', line: 5 },
    ]);
  });

  test('as Python reads it: a byte-order mark stays on the first id, and a lone \\r ends a line', () => {
    expect(parseOrderFile('\ufeffgsm8k_0\ngsm8k_1\rgsm8k_2\u3000\n')).toEqual([
      { id: '\ufeffgsm8k_0', line: 1 },
      { id: 'gsm8k_1', line: 2 },
      { id: 'gsm8k_2', line: 3 },
    ]);
    const check = checkCurriculum('\ufeffgsm8k_0\ngsm8k_1\n', gsm8k(10));
    expect(check.missing.count).toBe(1);
    expect(check.missing.first[0].line).toBe(1);
  });

  test('every id present: ok, and the plan line', () => {
    const order = gsm8k(4691).reverse().join('\n') + '\n';
    const check = checkCurriculum(order, gsm8k(7473));
    expect(check.ok).toBe(true);
    expect(check.missing.count).toBe(0);
    expect(check.leftOut).toBe(2782);
    expect(formatCurriculumLine(check, 'gsm8k_train')).toBe(
      'curriculum: 4,691 ids, all in gsm8k_train (7,473 prompts; 2,782 not in the curriculum)',
    );
    expect(missingIdsProblem(check, 's3://b/c.txt', 'gsm8k_train')).toBeUndefined();
    expect(curriculumWarnings(check, 's3://b/c.txt')).toEqual([]);
  });

  test("the incident's shape: 4,691 ids of which 1,960 are absent", () => {
    // 2,731 real ids, then 1,960 made for a bigger copy: the trainer silently trained on 2,731.
    const ids = [...gsm8k(2731), ...Array.from({ length: 1960 }, (_, i) => `gsm8k_${8000 + i}`)];
    const check = checkCurriculum(ids.join('\n'), gsm8k(7473), { firstN: 3 });
    expect(check.ok).toBe(false);
    expect(check.missing).toEqual({
      count: 1960,
      distinct: 1960,
      first: [
        { id: 'gsm8k_8000', line: 2732 },
        { id: 'gsm8k_8001', line: 2733 },
        { id: 'gsm8k_8002', line: 2734 },
      ],
    });
    expect(check.used).toBe(2731);
    expect(check.beyondEnd).toBe(1960);
    expect(formatCurriculumLine(check, 'gsm8k_train')).toBe(
      'curriculum: 4,691 ids, 1,960 not in gsm8k_train (7,473 prompts; 4,742 not in the curriculum)',
    );
    const problem = missingIdsProblem(check, 's3://b/curricula/c.txt', 'gsm8k_train')!;
    expect(problem.message).toBe(
      '1,960 ids of the 4,691 in s3://b/curricula/c.txt are not in gsm8k_train (7,473 prompts): the trainer ' +
        'would skip them without an error. line 2732: gsm8k_8000, line 2733: gsm8k_8001, line 2734: ' +
        "gsm8k_8002, … (1,957 more). 1,960 of them are past the dataset's last id (another split or a bigger copy?).",
    );
    expect(problem.hint).toMatch(/look like gsm8k_0, gsm8k_1, gsm8k_2\. .*--allow-missing-order-ids/);
  });

  test('ids of another naming are named too (math ids in a gsm8k curriculum)', () => {
    const check = checkCurriculum('math_algebra_0\ngsm8k_1\n', gsm8k(10));
    expect(check.missing.first).toEqual([{ id: 'math_algebra_0', line: 1 }]);
    expect(check.beyondEnd).toBe(0);
    expect(missingIdsProblem(check, 'o.txt', 'gsm8k_train')!.message).toMatch(
      /^1 id of the 2 in o.txt is not in gsm8k_train \(10 prompts\).*line 1: math_algebra_0\.$/,
    );
  });

  test('duplicates are named with their lines, and counted once', () => {
    const check = checkCurriculum('gsm8k_1\ngsm8k_2\ngsm8k_1\ngsm8k_3\ngsm8k_1\ngsm8k_2\n', gsm8k(5));
    expect(check.ok).toBe(true);
    expect(check.duplicates).toEqual({
      count: 2,
      first: [
        { id: 'gsm8k_1', lines: [1, 3, 5] },
        { id: 'gsm8k_2', lines: [2, 6] },
      ],
    });
    expect(check.used).toBe(3);
    expect(check.leftOut).toBe(2);
    expect(formatCurriculumLine(check, 'gsm8k_train')).toBe(
      'curriculum: 6 ids, all in gsm8k_train (5 prompts; 2 not in the curriculum; 2 ids listed more than once)',
    );
    expect(curriculumWarnings(check, 'o.txt')[0].message).toBe(
      'o.txt lists 2 ids more than once: gsm8k_1 (lines 1, 3, 5), gsm8k_2 (lines 2, 6)',
    );
  });

  test('count in sequential mode: larger than what remains is named; within it cuts the curriculum', () => {
    const order = 'gsm8k_0\ngsm8k_1\ngsm8k_99\ngsm8k_2\n';
    const big = checkCurriculum(order, gsm8k(10), { mode: 'sequential', count: 5 });
    expect(big.count).toEqual({ requested: 5, available: 3, tooLarge: true, ignored: false });
    expect(curriculumWarnings(big, 'o.txt').map((w) => w.message)).toEqual([
      'count 5 asks for more prompts than o.txt leaves in the dataset (3)',
    ]);
    expect(formatCurriculumLine(big, 'gsm8k_train')).toContain('count 5 > 3 usable');
    const small = checkCurriculum(order, gsm8k(10), { mode: 'sequential', count: 2 });
    expect(small.count!.tooLarge).toBe(false);
    expect(small.used).toBe(2);
    expect(small.leftOut).toBe(8);
  });

  test('count outside sequential mode has no effect, and says so', () => {
    const check = checkCurriculum('gsm8k_0\n', gsm8k(3), { count: 1 });
    expect(check.count!.ignored).toBe(true);
    expect(check.used).toBe(1);
    expect(curriculumWarnings(check, 'o.txt').map((w) => w.message)).toEqual([
      'count 1 has no effect: the trainer applies count in mode: sequential only',
    ]);
  });
});

test('an order file with no id of the dataset: the trainer would stop at start-up', () => {
  const check = checkCurriculum('math_algebra_0\n', gsm8k(3));
  expect(missingIdsProblem(check, 'o.txt', 'gsm8k_train')!.message).toMatch(
    /: the trainer would stop at start-up with no valid prompt_ids\. line 1: math_algebra_0\.$/,
  );
});
