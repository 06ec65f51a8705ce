import * as fs from 'node:fs';
import * as path from 'node:path';
import { PasskCampaigns } from '../../lib/dashboard/passk';
import {
  readPasskFolder,
  segmentName,
  segmentSeq,
  shardFiles,
  streamOrder,
  type MergedPasskResults,
} from '../../lib/passk-records';
import { readSftShards } from '../../lib/passk/sft';
import { tempDir } from '../helpers/fixtures';
import { passkCampaignFolder } from '../helpers/passk';

const RESULTS = 'verification_results.jsonl';
const COMPLETIONS = 'completions.jsonl';

describe('segment names', () => {
  it('numbers segments beside the file name; listings are read legacy first, then by number', () => {
    expect(segmentName(RESULTS, 3)).toBe('verification_results.00003.jsonl');
    expect(segmentName('shard.log', 123456)).toBe('shard.123456.log');
    expect(segmentName('results', 7)).toBe('results.00007');
    expect(segmentSeq(RESULTS, 'verification_results.00010.jsonl')).toBe(10);
    // Not segments: unpadded, a leading zero past the padding, other names, our temporary names.
    for (const name of [
      'verification_results.10.jsonl',
      'verification_results.012345.jsonl',
      'verification_results.backup.jsonl',
      '.verification_results.00001.jsonl.1.ab.tmp',
      'verification_results.00001.jsonl.tmp',
    ])
      expect(segmentSeq(RESULTS, name)).toBeUndefined();
    expect(
      streamOrder(RESULTS, [
        'verification_results.100000.jsonl',
        'verification_results.00010.jsonl',
        'summary.json',
        RESULTS,
        'verification_results.00002.jsonl',
      ]),
    ).toEqual([
      RESULTS,
      'verification_results.00002.jsonl',
      'verification_results.00010.jsonl',
      'verification_results.100000.jsonl',
    ]);
  });
});

/** `from`'s shard files split: the first line stays in the single (legacy) file, the rest in segments. */
function splitIntoSegments(from: string, to: string): void {
  fs.cpSync(from, to, { recursive: true });
  const base = path.join(to, 'passk');
  for (const shard of fs.readdirSync(base)) {
    for (const name of [RESULTS, COMPLETIONS]) {
      const file = path.join(base, shard, name);
      const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
      fs.writeFileSync(file, lines[0]);
      // Numbers with gaps, and one past the padding: the order is numeric, not the listing's.
      const seqs = [0, 2, 10, 99999, 100000];
      let at = 1;
      for (let k = 0; at < lines.length; k++) {
        const take = (k % 3) + 1;
        fs.writeFileSync(
          path.join(base, shard, segmentName(name, seqs[k])),
          lines.slice(at, at + take).join(''),
        );
        at += take;
      }
      // What a sync may catch of a segment being written: not read.
      fs.writeFileSync(path.join(base, shard, `.${name}.1.abcdef.tmp`), '{"prompt_id": "stray"}\n');
    }
  }
}

const withoutSource = (r: MergedPasskResults | undefined) => ({ ...r, source: undefined });

describe('a shard read from its legacy file and segments', () => {
  const single = passkCampaignFolder({ shards: 3, prompts: 30, n: 4, correctOf: (i) => (i * 3) % 5 });
  const segmented = path.join(tempDir('rlvr-passk-segmented-'), 'run');
  splitIntoSegments(single, segmented);

  it('merges to the same results as the same lines in one file', async () => {
    const a = await readPasskFolder(single);
    const b = await readPasskFolder(segmented);
    expect(b!.prompts).toHaveLength(30);
    expect(withoutSource(b)).toEqual(withoutSource(a));
    expect(
      shardFiles(segmented)
        .filter((f) => f.index === 0)
        .map((f) => path.basename(f.file)),
    ).toEqual([
      RESULTS,
      'verification_results.00000.jsonl',
      'verification_results.00002.jsonl',
      'verification_results.00010.jsonl',
      'verification_results.99999.jsonl',
      'verification_results.100000.jsonl',
    ]);
  });

  it('gives the same SFT inputs (curriculum sft / build)', async () => {
    const a = await readSftShards(path.join(single, 'passk'), { minPassRate: 0, maxPassRate: 1 });
    const b = await readSftShards(path.join(segmented, 'passk'), { minPassRate: 0, maxPassRate: 1 });
    expect(b.results.length).toBeGreaterThan(0);
    expect(b.results).toEqual(a.results);
    expect([...b.prompts]).toEqual([...a.prompts]);
    expect(b.resultsRead).toBe(30);
    expect(b.badLines).toEqual([]);
  });

  it('the dashboard shows the same figures, and reads again when a new segment appears', async () => {
    const resultsDir = tempDir('rlvr-passk-dash-');
    fs.cpSync(single, path.join(resultsDir, 'passk-single'), { recursive: true });
    fs.cpSync(segmented, path.join(resultsDir, 'passk-segmented'), { recursive: true });
    const campaigns = new PasskCampaigns(resultsDir);
    const answer = await campaigns.answer();
    const byId = new Map(answer.campaigns.map((c) => [c.id, c]));
    expect(byId.get('passk-segmented')?.prompts).toBe(30);
    expect(byId.get('passk-segmented')?.passAtK).toEqual(byId.get('passk-single')?.passAtK);
    const reads = campaigns.reads;
    await campaigns.answer();
    expect(campaigns.reads).toBe(reads);
    const extra = fs
      .readFileSync(path.join(single, 'passk', 'shard_0', RESULTS), 'utf8')
      .split('\n')[0]
      .replace('"gsm8k_0"', '"gsm8k_new"');
    fs.writeFileSync(
      path.join(resultsDir, 'passk-segmented', 'passk', 'shard_0', segmentName(RESULTS, 100001)),
      `${extra}\n`,
    );
    const again = await campaigns.answer();
    expect(campaigns.reads).toBe(reads + 1);
    expect(again.campaigns.find((c) => c.id === 'passk-segmented')?.prompts).toBe(31);
  });
});
