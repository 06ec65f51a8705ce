import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UserError } from '../../lib/errors';
import { buildOrder, describeOrder } from '../../lib/passk/curriculum';
import { parseOrderKey, passAtKAsTheirCsv, pyFixed6 } from '../../lib/passk/order-key';
import type { MergedPasskResults } from '../../lib/passk-records';
import { bareEnv, runCli } from '../helpers/cli';
import { REPO_ROOT, tempDir } from '../helpers/fixtures';
import { itWithPeer } from '../helpers/moto';
import { passkCampaignFolder } from '../helpers/passk';
import { hostPython, pythonAvailable } from '../helpers/python';

/*
 * `rlvr curriculum build --key pass@K` against the team's own builder: test/fixtures/curriculum-pass-at-k
 * holds the per-prompt CSV of these counts and the order files their generate_curriculum.py (489ffc2^)
 * wrote from it (its README gives the commands). The CLI, run on a campaign of the same counts, must
 * write the same bytes.
 */

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'curriculum-pass-at-k');
const N = 64;
/** c per prompt, gsm8k_<i> = CORRECT[i] of N (make_csv.py's CORRECT: the test checks the CSV against it). */
const CORRECT = [
  40, 0, 34, 12, 64, 1, 33, 32, 0, 50, 5, 36, 12, 48, 2, 20, 63, 35, 0, 1, 45, 32, 8, 16, 33, 60, 3, 34, 41,
  12, 0, 24, 38, 47, 5, 49, 64, 1, 30, 31, 2, 56, 37, 42, 20, 33, 0, 44,
];

const campaign = () =>
  passkCampaignFolder({ shards: 2, prompts: CORRECT.length, n: N, correctOf: (i) => CORRECT[i] });

const fixture = (file: string) => fs.readFileSync(path.join(FIXTURE, file), 'utf8');

describe('curriculum build --key pass@K (their generate_curriculum.py’s order)', () => {
  const run = campaign();
  const build = async (...flags: string[]) => {
    const cwd = tempDir('rlvr-passk-key-');
    const r = await runCli(
      ['curriculum', 'build', '--from', run, '--name', 'x', '--out', 'o/x.txt', ...flags],
      { cwd, env: bareEnv() },
    );
    const file = path.join(cwd, 'o', 'x.txt');
    return { ...r, cwd, text: fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined };
  };

  it('the fixture’s CSV is of these counts, and each pass@16 is the value the key sorts on', () => {
    const [header, ...rows] = fixture('gsm8k_pass_at_k.csv').trimEnd().split('\n');
    expect(header).toBe('idx,n,correct,pass@1,pass@16');
    expect(rows.map((r) => r.split(',').slice(0, 3).join(','))).toEqual(
      CORRECT.map((c, i) => `gsm8k_${i},${N},${c}`),
    );
    // CPython's :.6f of their formula, as written in the CSV; ours from the same counts.
    expect(rows.map((r) => r.split(',')[4])).toEqual(
      CORRECT.map((c) => pyFixed6(passAtKAsTheirCsv(N, c, 16))),
    );
  });

  it('hard-first and easy-first are byte-identical to their builder’s files (ties after 6 decimals in row order)', async () => {
    const hard = await build('--order', 'hard-first', '--key', 'pass@16');
    expect({ code: hard.code, err: hard.stderr }).toEqual({ code: 0, err: '' });
    expect(hard.text).toBe(fixture('hard-first/gsm8k_curriculum.txt'));
    const easy = await build('--order', 'easy-first', '--key', 'pass@16');
    expect({ code: easy.code, err: easy.stderr }).toEqual({ code: 0, err: '' });
    expect(easy.text).toBe(fixture('easy-first/gsm8k_curriculum.txt'));
    // The key is said where the order is described.
    expect(easy.stdout).toMatch(/^Order file .*x\.txt {2}\(easy-first, by pass@16\)$/m);
    expect(easy.stdout).toContain('48 gsm8k prompt ids, sorted by pass@16 (unbiased');
  });

  it('--key rate (the default) is another order on the same campaign', async () => {
    const byRate = await build('--order', 'hard-first', '--json');
    const byDefault = await build('--order', 'hard-first', '--key', 'rate');
    expect(byRate.code).toBe(0);
    expect(JSON.parse(byRate.stdout)).toMatchObject({ key: 'rate', order: 'hard-first', ids: 48 });
    expect(byDefault.text).toBe(byRate.text);
    const passAt16 = fixture('hard-first/gsm8k_curriculum.txt');
    expect(byRate.text).not.toBe(passAt16);
    // gsm8k_6 (c 33) and gsm8k_7 (c 32) both write 0.999999: a tie by pass@16 (row order), not by rate.
    const pos = (text: string, id: string) => text.split('\n').indexOf(id);
    expect(pos(passAt16, 'gsm8k_6')).toBeLessThan(pos(passAt16, 'gsm8k_7'));
    expect(pos(byRate.text!, 'gsm8k_7')).toBeLessThan(pos(byRate.text!, 'gsm8k_6'));
    expect(byRate.text!.split('\n').slice(0, 5)).toEqual([
      'gsm8k_1',
      'gsm8k_8',
      'gsm8k_18',
      'gsm8k_30',
      'gsm8k_46',
    ]);
  });

  it('band bounds the key’s 6-decimal value: c 34 (raw 0.9999997) is 1.000000, outside [0.99, 1)', async () => {
    const r = await build('--order', 'band', '--key', 'pass@16', '--min', '0.99', '--max', '1', '--json');
    expect(r.code).toBe(0);
    const kept = CORRECT.map((c, i) => [c, i]).filter(([c]) => c >= 15 && c <= 33);
    expect(JSON.parse(r.stdout)).toMatchObject({
      key: 'pass@16',
      ids: kept.length,
      excluded: { outsideBand: 48 - kept.length },
    });
    expect(r.text!.trimEnd().split('\n')).not.toContain('gsm8k_2'); // c 34
    expect(r.text!.trimEnd().split('\n')).toContain('gsm8k_6'); // c 33: 0.999999
  });

  it('refuses a K that is not a whole number ≥ 1, or more than some prompt’s n: exit 2, nothing written', async () => {
    for (const [key, says] of [
      ['pass@0', /--key pass@0: rate .* or pass@K with K a whole number ≥ 1/],
      ['pass@-1', /--key pass@-1: rate/],
      ['pass@1.5', /--key pass@1\.5: rate/],
      ['pass16', /--key pass16: rate/],
      ['pass@', /--key pass@: rate/],
      [
        'pass@65',
        /--key pass@65: 48 of the 48 prompts measured have fewer than 65 completions \(the smallest n is 64\)/,
      ],
    ] as const) {
      const r = await build('--key', key);
      expect({ key, code: r.code }).toEqual({ key, code: 2 });
      expect(r.stderr).toMatch(says);
      expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
      // No file anywhere (the refusal of a bad K comes after --out's folder is made).
      const written = fs
        .readdirSync(r.cwd, { recursive: true, withFileTypes: true })
        .filter((e) => !e.isDirectory());
      expect(written).toEqual([]);
    }
    expect((await build('--key', 'pass@64')).code).toBe(0);
  });
});

describe('buildOrder with a pass@K key', () => {
  const results = (prompts: [string, number, number][], source = 'run'): MergedPasskResults => ({
    source,
    campaign: {
      dataset: 'gsm8k',
      split: 'train',
      n: 8,
      sampling: {},
      model: { label: 'm', id: 'm', from: 'hub' },
      trainer: 't',
    },
    shardsRead: [0],
    missingShards: [],
    prompts: prompts.map(([promptId, n, c]) => ({
      promptId,
      n,
      c,
      passRate: c / n,
      firstCorrect: -1,
      shard: 0,
    })),
    duplicates: 0,
    badLines: [],
    passAtK: [],
  });

  it('pools Σc and Σn before pass@K, and names the prompts with too few completions and the smallest n', () => {
    const a = results([
      ['gsm8k_0', 8, 1],
      ['gsm8k_1', 8, 0],
      ['gsm8k_2', 4, 4],
    ]);
    const b = results([['gsm8k_2', 8, 0]], 'other');
    const order = buildOrder([a, b], { order: 'easy-first', key: parseOrderKey('pass@8') });
    expect(order.key).toBe('pass@8');
    // gsm8k_2 pooled: 4 of 12, pass@8 = 1 − C(8,8)/C(12,8) = 1 − 1/495 → 0.997980; gsm8k_0: 1 of 8 → 1.
    expect(order.ids).toEqual(['gsm8k_0', 'gsm8k_2', 'gsm8k_1']);
    expect(order.keyValues.get('gsm8k_2')).toBe(0.99798);
    expect(describeOrder(order)[0]).toMatch(/sorted by pass@8/);
    let thrown: unknown;
    try {
      buildOrder([a, b], { order: 'easy-first', key: parseOrderKey('pass@9') });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(UserError);
    expect((thrown as UserError).message).toMatch(
      /--key pass@9: 2 of the 3 prompts measured have fewer than 9 completions \(the smallest n is 8\)/,
    );
  });
});

describe('pyFixed6 is Python’s :.6f', () => {
  it('rounds an exact binary half to even where toFixed rounds it up', () => {
    // 1/128 and 5/128 are exact doubles ending in 5 at the 7th decimal.
    expect([1 / 128, 5 / 128, 3 / 128].map(pyFixed6)).toEqual(['0.007812', '0.039062', '0.023438']);
    expect((1 / 128).toFixed(6)).toBe('0.007813');
    // n = 128, c = 1: pass@1 is 1/128, the case their CSV and toFixed would disagree on.
    expect(pyFixed6(passAtKAsTheirCsv(128, 1, 1))).toBe('0.007812');
  });

  itWithPeer('python3', pythonAvailable())(
    'agrees with CPython on pass@k of many counts and on awkward doubles',
    () => {
      const cases: [number, number, number][] = [];
      for (const n of [3, 64, 100, 128, 257, 512])
        for (let c = 0; c <= n; c += Math.max(1, Math.floor(n / 41)))
          for (const k of [1, 2, 5, 16, 64, 128, 512]) if (k <= n) cases.push([n, c, k]);
      const doubles = [0.0000005, 0.0000015, 0.1234565, 0.9999995, 0.5000005, 2.5e-7, 1e-300, 0.3];
      const program = `
import sys
from math import comb
def p(n, c, k):
    if c == 0: return 0.0
    if k >= n or n - c < k: return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)
cases = [tuple(map(int, x.split(","))) for x in sys.argv[1].split()]
print("\\n".join([f"{p(n, c, k):.6f}" for n, c, k in cases] + [f"{float(x):.6f}" for x in sys.argv[2].split()]))
`;
      const theirs = execFileSync(
        hostPython()!.executable,
        ['-c', program, cases.map((x) => x.join(',')).join(' '), doubles.map(String).join(' ')],
        { encoding: 'utf8' },
      );
      const ours = [
        ...cases.map(([n, c, k]) => pyFixed6(passAtKAsTheirCsv(n, c, k))),
        ...doubles.map(pyFixed6),
      ];
      expect(cases.length).toBeGreaterThan(500);
      expect(ours.join('\n') + '\n').toBe(theirs);
    },
  );
});
