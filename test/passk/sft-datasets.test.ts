import * as fs from 'node:fs';
import * as path from 'node:path';
import { bareEnv, runCli } from '../helpers/cli';
import { REPO_ROOT, tempDir } from '../helpers/fixtures';
import { writeSftBothInputs, writeSftCampaign } from '../helpers/sft-campaigns';

/*
 * `rlvr curriculum sft --datasets gsm8k,math` against their build_sft_from_pass_at_k.py --subset both:
 * test/fixtures/sft-both holds what their script wrote from these campaigns (its README gives the
 * commands). One generator draws gsm8k's choices, then math's, and one shuffle follows: the bytes must match.
 */

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'sft-both');

describe('curriculum sft --datasets (their --subset both)', () => {
  const root = tempDir('rlvr-sft-both-');
  const runs = writeSftBothInputs(root);
  const sft = async (from: string[], ...flags: string[]) => {
    const cwd = tempDir('rlvr-sft-both-out-');
    const r = await runCli(['curriculum', 'sft', '--from', ...from, '--out', 'sft.jsonl', ...flags], {
      cwd,
      env: bareEnv(),
    });
    const file = path.join(cwd, 'sft.jsonl');
    return { ...r, cwd, text: fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined };
  };

  it('is byte-identical to their script’s file, with the default band and seed and with others', async () => {
    // The --from order does not matter: --datasets says the order of the draws.
    const r = await sft([runs.math, runs.gsm8k], '--datasets', 'gsm8k,math', '--json');
    expect({ code: r.code, err: r.stderr }).toEqual({ code: 0, err: '' });
    const theirs = fs.readFileSync(path.join(FIXTURE, 'sft_both.jsonl'), 'utf8');
    expect(r.text).toBe(theirs);
    expect(JSON.parse(r.stdout)).toMatchObject({
      examples: 35,
      perDataset: [
        { dataset: 'gsm8k', examples: 22 },
        { dataset: 'math', examples: 13 },
      ],
    });
    const other = await sft(
      [runs.gsm8k, runs.math],
      '--datasets',
      'gsm8k,math',
      '--min-pass-rate',
      '0.1',
      '--max-pass-rate',
      '0.8',
      '--seed',
      '7',
    );
    expect(other.code).toBe(0);
    expect(other.text).toBe(fs.readFileSync(path.join(FIXTURE, 'sft_both_band_seed7.jsonl'), 'utf8'));
    expect(other.stdout).toContain('42 example(s) (gsm8k 26, math 16)');
  });

  it('without --datasets each campaign is its own set: not their both file', async () => {
    const r = await sft([runs.gsm8k, runs.math]);
    expect(r.code).toBe(0);
    const theirs = fs.readFileSync(path.join(FIXTURE, 'sft_both.jsonl'), 'utf8');
    expect(r.text).not.toBe(theirs);
    // The same prompts; math's picks come from a fresh generator, gsm8k's set is shuffled alone.
    const ids = (text: string) =>
      text
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { prompt_id: string }).prompt_id)
        .sort();
    expect(ids(r.text!)).toEqual(ids(theirs));
  });

  it('refuses a dataset no campaign measures, a campaign of a dataset not named, and two of one: exit 2, nothing written', async () => {
    const second = writeSftCampaign(path.join(tempDir('rlvr-sft-both-2-'), 'gsm8k'), {
      dataset: 'gsm8k',
      shards: 1,
      perShard: 2,
    });
    for (const [from, datasets, says] of [
      [[runs.gsm8k], 'gsm8k,math', /--datasets gsm8k,math: no --from campaign measures math\./],
      [
        [runs.gsm8k, runs.math],
        'gsm8k',
        new RegExp(`${runs.math} is a campaign of math, which --datasets does not name`),
      ],
      [
        [runs.gsm8k, second, runs.math],
        'gsm8k,math',
        /2 campaigns measure gsm8k .*: their script reads one folder per dataset/,
      ],
      [[runs.gsm8k, runs.math], 'gsm8k,math,gsm8k', /--datasets names gsm8k more than once/],
      [[runs.gsm8k], 'gsm8k,,', /--datasets gsm8k,,: dataset names separated by commas/],
    ] as const) {
      const r = await sft([...from], '--datasets', datasets);
      expect({ datasets, code: r.code }).toEqual({ datasets, code: 2 });
      expect(r.stderr).toMatch(says);
      expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
      expect(fs.readdirSync(r.cwd)).toEqual([]);
    }
  });
});
