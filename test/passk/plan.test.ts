import * as fs from 'node:fs';
import * as path from 'node:path';
import { alignCompletions, countLines, dropPartialLine } from '../../lib/container/passk-batch';
import { passkProfile } from '../../lib/passk';
import { campaignId } from '../../lib/passk/campaign';
import { shardArgv } from '../../lib/passk/plan';
import { earlierCampaignRate } from '../../lib/passk/rate';
import type { PasskCampaign } from '../../lib/passk-records';
import { tempDir } from '../helpers/fixtures';

const campaign: PasskCampaign = {
  dataset: 'gsm8k',
  split: 'train',
  n: 64,
  sampling: { max_tokens: '1024', temperature: '1.0' },
  model: { label: 'base', id: 's3://b/models/base/', from: 's3://b/models/base/' },
  trainer: 'grpo-sft',
};

describe("a campaign's shard commands", () => {
  const { script } = passkProfile();

  it('fills the contract’s words and leaves out a flag whose setting is unset', () => {
    const argv = shardArgv(script, {
      python: 'python',
      script: script.script,
      dataset: 'gsm8k',
      split: 'train',
      n: '64',
      model: '/tmp/m',
      gpus: '0,1',
      shard: '1',
      shards: '2',
      output: '/opt/ml/checkpoints/passk',
    });
    expect(argv.slice(0, 3)).toEqual(['python', 'scripts/eval_pass_at_k.py', 'gsm8k']);
    expect(argv).not.toContain('--level');
    expect(argv).not.toContain('--max-prompts');
    expect(argv.join(' ')).toContain(
      '--gpus 0,1 --gpu-index 1 --num-shards 2 --output-dir /opt/ml/checkpoints/passk',
    );
    expect(argv.some((w) => /\{\w+\}/.test(w))).toBe(false);
  });

  it('gives the same campaign the same id, and another id when what a shard measures changes', () => {
    expect(campaignId(campaign, 8)).toBe(campaignId({ ...campaign }, 8));
    expect(campaignId(campaign, 16)).not.toBe(campaignId(campaign, 8));
    expect(campaignId({ ...campaign, n: 128 }, 8)).not.toBe(campaignId(campaign, 8));
    expect(campaignId({ ...campaign, sampling: { ...campaign.sampling, temperature: '0.6' } }, 8)).not.toBe(
      campaignId(campaign, 8),
    );
    // The script parses numbers, and filters MATH levels by membership: the same values, the same campaign.
    expect(campaignId({ ...campaign, sampling: { temperature: '1', max_tokens: '1024' } }, 8)).toBe(
      campaignId(campaign, 8),
    );
    const math = { ...campaign, dataset: 'math', level: '3,4,5' };
    expect(campaignId({ ...math, level: '5,4,3' }, 8)).toBe(campaignId(math, 8));
    expect(campaignId({ ...math, level: '4,5' }, 8)).not.toBe(campaignId(math, 8));
    // Another label for the same model is the same campaign.
    expect(campaignId({ ...campaign, model: { ...campaign.model, label: 'other' } }, 8)).toBe(
      campaignId(campaign, 8),
    );
  });
});

describe('a shard results file before a restart', () => {
  it('loses a line cut off mid-write, and keeps every complete one', () => {
    const file = path.join(tempDir('rlvr-passk-file-'), 'verification_results.jsonl');
    fs.writeFileSync(file, '{"prompt_id": "a"}\n{"prompt_id": "b"}\n{"prompt_id": "c", "sco');
    expect(dropPartialLine(file)).toBe('{"prompt_id": "c", "sco'.length);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"prompt_id": "a"}\n{"prompt_id": "b"}\n');
    expect(countLines(file)).toBe(2);
    expect(dropPartialLine(file)).toBe(0);
    fs.writeFileSync(file, 'x'.repeat(200_000));
    expect(dropPartialLine(file)).toBe(200_000);
    expect(fs.statSync(file).size).toBe(0);
    expect(dropPartialLine(path.join(path.dirname(file), 'absent'))).toBe(0);
  });
});

describe("a shard's completions before a restart", () => {
  it('keeps the first line of each prompt the results file has: a line generated again and one never verified go', async () => {
    const dir = tempDir('rlvr-passk-align-');
    const results = path.join(dir, 'verification_results.jsonl');
    const completions = path.join(dir, 'completions.jsonl');
    const line = (id: string, extra = '') =>
      `{"prompt_id": ${JSON.stringify(id)}, "completions": []${extra}}`;
    fs.writeFileSync(
      results,
      [line('gsm8k_0'), line('gsm8k_1'), line('q"uote')].map((l) => `${l}\n`).join(''),
    );
    // gsm8k_1 twice (generated again after a stop), gsm8k_2 never verified, q"uote escaped, gsm8k_0 kept.
    fs.writeFileSync(
      completions,
      [
        line('gsm8k_0'),
        line('gsm8k_1', ', "a": 1'),
        line('gsm8k_1', ', "a": 2'),
        line('q"uote'),
        line('gsm8k_2'),
      ]
        .map((l) => `${l}\n`)
        .join(''),
    );
    expect(await alignCompletions(results, completions)).toEqual({ dropped: 2, missing: 0 });
    expect(fs.readFileSync(completions, 'utf8')).toBe(
      [line('gsm8k_0'), line('gsm8k_1', ', "a": 1'), line('q"uote')].map((l) => `${l}\n`).join(''),
    );
    // An older completions file than results: the prompts it lacks are counted.
    fs.writeFileSync(completions, `${line('gsm8k_0')}\n`);
    expect(await alignCompletions(results, completions)).toEqual({ dropped: 0, missing: 2 });
  });
});

describe("earlier campaigns' measured rate", () => {
  function campaignRun(root: string, name: string, c: PasskCampaign, attempts: object[][]): void {
    const dir = path.join(root, name);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'passk-plan.json'),
      JSON.stringify({
        version: 1,
        campaign: c,
        shards: attempts.map((_, index) => ({ index })),
        files: { shardFolder: 'shard_{shard}' },
      }),
    );
    attempts.forEach((a, index) => {
      const folder = path.join(dir, 'passk', `shard_${index}`);
      fs.mkdirSync(folder, { recursive: true });
      fs.writeFileSync(path.join(folder, 'rlvr-shard.json'), JSON.stringify({ index, attempts: a }));
    });
  }
  const attempt = (
    startedAt: string,
    endedAt: string,
    before: number,
    after: number,
    instanceType = 'ml.g6e.48xlarge',
  ) => ({
    host: 'algo-1',
    gpu: 0,
    instanceType,
    startedAt,
    endedAt,
    promptsBefore: before,
    promptsAfter: after,
    outcome: 'finished',
  });

  it('is the prompts finished over the seconds taken, by every attempt of the same shape on the same instance type', () => {
    const root = tempDir('rlvr-passk-results-');
    campaignRun(root, 'passk_1', campaign, [
      [attempt('2026-11-01T00:00:00Z', '2026-11-01T00:10:00Z', 0, 300)],
      [
        attempt('2026-11-01T00:00:00Z', '2026-11-01T00:05:00Z', 0, 100),
        attempt('2026-11-01T01:00:00Z', '2026-11-01T01:05:00Z', 100, 200),
      ],
    ]);
    // Other shapes and instance types are not counted.
    campaignRun(root, 'passk_2', { ...campaign, n: 128 }, [
      [attempt('2026-11-01T00:00:00Z', '2026-11-01T00:00:10Z', 0, 1000)],
    ]);
    campaignRun(root, 'passk_3', campaign, [
      [attempt('2026-11-01T00:00:00Z', '2026-11-01T00:00:10Z', 0, 1000, 'local')],
    ]);
    const rate = earlierCampaignRate(root, campaign, 'ml.g6e.48xlarge');
    expect(rate?.from).toEqual(['passk_1']);
    expect(rate?.promptsPerSecond).toBeCloseTo(500 / 1200, 12);
    expect(earlierCampaignRate(root, { ...campaign, dataset: 'math' }, 'ml.g6e.48xlarge')).toBeUndefined();
    expect(earlierCampaignRate(path.join(root, 'absent'), campaign, 'ml.g6e.48xlarge')).toBeUndefined();
  });
});
