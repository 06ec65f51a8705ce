import * as fs from 'node:fs';
import * as path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createAwsClients, type IS3 } from '../../lib/aws';
import { loadTrainingConfig } from '../../lib/config';
import { readDatasetIds, resolveIdRule } from '../../lib/curriculum';
import { type ResolvedIdRule } from '../../lib/curriculum/id-rules';
import { planInputs } from '../../lib/training/inputs';
import { checkOrderIds, type CurriculumFindings } from '../../lib/training/curriculum-preflight';
import { S3Layout } from '../../lib/layout';
import { buildOrder, curriculumConfigLines } from '../../lib/passk/curriculum';
import { readPasskFolder } from '../../lib/passk-records';
import { BUCKET, clients } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { gsm8kWith, tempDir, writeConfig } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable, TEST_REGION } from '../helpers/moto';
import { gsm8kColumns, saveToDisk } from '../curriculum/save-to-disk';

/*
 * An order file made from pass@k results passes the curriculum pre-flight by construction: the results
 * of their script's shards (gsm8k_0 … gsm8k_N-1) → buildOrder → the config lines → the launcher's input
 * plan → the pre-flight's own checkOrderIds against a save_to_disk copy in a real S3 (moto). The same
 * file with one id past the copy's end is refused, so the check is seen to bite.
 */

const ROWS = 320; // the dataset copy
const MEASURED = 300; // prompts the campaign got through: the copy's last 20 have no result
const SHARDS = 3;
const layout = new S3Layout(BUCKET);

/** Their script's shard folders, bare (as launch_pass_at_k.sh leaves them): verification_results.jsonl only. */
function writeRunFolder(dir: string): void {
  for (let s = 0; s < SHARDS; s++) {
    const folder = path.join(dir, `shard_${s}`);
    fs.mkdirSync(folder, { recursive: true });
    const lines: string[] = [];
    // The script's --gpu-index shards the prompts round-robin; any split does here.
    for (let i = s; i < MEASURED; i += SHARDS) {
      const n = 8;
      const scores = Array.from({ length: n }, (_, k) => ((i * 5 + k) % 11 < i % 9 ? 1.0 : 0.0));
      const c = scores.filter((x) => x > 0).length;
      lines.push(
        JSON.stringify({
          prompt_id: `gsm8k_${i}`,
          num_completions: n,
          num_correct: c,
          pass_rate: c / n,
          scores,
          completions: scores.map((score, k) => ({
            text: `#### ${k}`,
            finish_reason: 'stop',
            num_tokens: 4,
            score,
          })),
        }),
      );
    }
    fs.writeFileSync(path.join(folder, 'verification_results.jsonl'), lines.map((l) => `${l}\n`).join(''));
  }
}

describeWithPeer('moto_server', motoAvailable())(
  'a curriculum from pass@k results in the pre-flight (moto)',
  () => {
    const emulator = useEmulator();
    let aws: ReturnType<typeof createAwsClients>;
    let s3: IS3;
    let cacheDir: string;

    beforeAll(() => {
      aws = createAwsClients({ region: TEST_REGION, s3Endpoint: emulator.moto.endpoint });
      s3 = aws.s3;
    });
    afterAll(() => aws.close());

    const put = (key: string, body: Uint8Array | string) =>
      clients(emulator.moto.endpoint).s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));

    beforeEach(async () => {
      cacheDir = tempDir('rlvr-curriculum-');
      for (const [name, body] of Object.entries(saveToDisk(gsm8kColumns(ROWS), { rowsPerBatch: 100 })))
        await put(`${layout.datasetPrefix('gsm8k_train')}${name}`, body);
    });

    /** The pre-flight on a config made of the order's config lines, with the order file at `key`. */
    async function preflight(key: string, text: string) {
      await put(key, text);
      const uri = `s3://${BUCKET}/${key}`;
      const lines = curriculumConfigLines(uri, 'gsm8k');
      const dir = tempDir('rlvr-config-');
      const config = gsm8kWith(['data:\n  dataset: gsm8k\n  split: train\n', `${lines.join('\n')}\n`]);
      const loaded = loadTrainingConfig(writeConfig(dir, 'curriculum.yaml', config));
      const loaders = loaded.trainer!.profile.loaders;
      const { inputs, problems } = planInputs(loaded.value, loaded.file, layout, dir, { loaders });
      expect(problems).toEqual([]);
      // The launcher reads the reference as written: the S3 file itself, ordering the gsm8k entry.
      expect(inputs!.orderFiles).toEqual([
        expect.objectContaining({
          location: { bucket: BUCKET, key },
          orders: expect.objectContaining({ loader: 'gsm8k' }),
        }),
      ]);
      const out: CurriculumFindings = { checks: [], problems: [], warnings: [], acknowledged: [] };
      await checkOrderIds(
        s3,
        inputs!.orderFiles[0],
        inputs!.datasets,
        loaded.file,
        { loaders, cacheDir },
        out,
      );
      return out;
    }

    it('the order built from the results passes with no id missing; one id past the copy is refused', async () => {
      const run = tempDir('rlvr-passk-run-');
      writeRunFolder(run);
      const results = await readPasskFolder(run);
      expect(results?.prompts).toHaveLength(MEASURED);

      // The copy's ids as the pre-flight reads them: ties go by row order, prompts without a result are named.
      const rule = resolveIdRule('gsm8k') as Extract<ResolvedIdRule, { checkable: true }>;
      const copy = await readDatasetIds(
        s3,
        { bucket: BUCKET, prefix: layout.datasetPrefix('gsm8k_train') },
        rule,
        { cacheDir },
      );
      if (!copy.ok) throw new Error(copy.reason);
      const order = buildOrder([results!], { order: 'easy-first', datasetIds: copy.ids, missing: 'drop' });
      expect(order.dataset).toBe('gsm8k');
      expect(order.ids).toHaveLength(MEASURED);
      expect(order.excluded.noResult).toHaveLength(ROWS - MEASURED);
      expect(order.excluded.noResult[0]).toBe(`gsm8k_${MEASURED}`);
      // Easiest first, and ties in row order.
      const rates = order.ids.map((id) => order.rates.get(id)!);
      expect(rates).toEqual([...rates].sort((a, b) => b - a));
      for (let i = 1; i < order.ids.length; i++) {
        if (rates[i] === rates[i - 1])
          expect(copy.ids.indexOf(order.ids[i])).toBeGreaterThan(copy.ids.indexOf(order.ids[i - 1]));
      }

      const good = await preflight(layout.curriculumKey('gsm8k-easy-first.txt'), order.text);
      expect(good.problems).toEqual([]);
      expect(good.warnings).toEqual([]);
      expect(good.checks).toEqual([
        {
          what: 'curriculum',
          target: `s3://${BUCKET}/${layout.curriculumKey('gsm8k-easy-first.txt')}`,
          ok: true,
          detail: `curriculum: ${MEASURED} ids, all in gsm8k_train (${ROWS} prompts; ${ROWS - MEASURED} not in the curriculum)`,
        },
      ]);

      // Broken by hand: one id past the copy's last row.
      const broken = await preflight(
        layout.curriculumKey('gsm8k-broken.txt'),
        `${order.text}gsm8k_${ROWS}\n`,
      );
      expect(broken.checks.map((c) => c.ok)).toEqual([false]);
      expect(broken.problems).toHaveLength(1);
      expect(broken.problems[0].message).toMatch(
        new RegExp(
          `^1 id of the ${MEASURED + 1} in s3://.*/gsm8k-broken.txt is not in gsm8k_train \\(${ROWS} prompts\\): ` +
            `the trainer would skip them without an error\\. line ${MEASURED + 1}: gsm8k_${ROWS}\\. 1 of them is past the dataset's last id`,
        ),
      );
    });
  },
);
