import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createAwsClients, type IS3 } from '../../lib/aws';
import {
  checkOrderReference,
  curriculumWarnings,
  formatCurriculumLine,
  missingIdsProblem,
  readDatasetIds,
  resolveIdRule,
} from '../../lib/curriculum';
import { type OrderReference } from '../../lib/curriculum/order-reference';
import { type ResolvedIdRule } from '../../lib/curriculum/id-rules';
import { S3Layout } from '../../lib/layout';
import { BUCKET, clients } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { FaultProxy } from '../helpers/fault-proxy';
import { tempDir } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable, TEST_REGION } from '../helpers/moto';
import { gsm8kColumns, mathColumns, mbppColumns, saveToDisk } from './save-to-disk';

/*
 * The curriculum check against a real S3 (moto_server): dataset copies in the save_to_disk layout
 * (Arrow streams written with apache-arrow), order files beside them, a proxy counting the requests.
 */

const layout = new S3Layout(BUCKET);
const gsm8kIds = (n: number) => Array.from({ length: n }, (_, i) => `gsm8k_${i}`);

describeWithPeer('moto_server', motoAvailable())('curriculum pre-flight against a real S3 (moto)', () => {
  const emulator = useEmulator();
  let sdk: S3Client;
  let proxy: FaultProxy;
  let aws: ReturnType<typeof createAwsClients>;
  let s3: IS3;
  let cacheDir: string;

  beforeAll(async () => {
    sdk = clients(emulator.moto.endpoint).s3;
    proxy = new FaultProxy(Number(new URL(emulator.moto.endpoint).port));
    await proxy.start();
    aws = createAwsClients({ region: TEST_REGION, s3Endpoint: `http://127.0.0.1:${proxy.port}` });
    s3 = aws.s3;
  });
  afterAll(async () => {
    aws.close();
    await proxy.stop();
  });
  beforeEach(() => {
    cacheDir = tempDir('rlvr-curriculum-');
  });

  const put = (key: string, body: Uint8Array | string) =>
    sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
  async function upload(folder: string, files: Record<string, Uint8Array>) {
    for (const [name, body] of Object.entries(files))
      await put(`${layout.datasetPrefix(folder)}${name}`, body);
  }
  async function orderFile(name: string, ids: readonly string[]) {
    const key = `${layout.root}curricula/${name}`;
    await put(key, ids.join('\n') + '\n');
    return { bucket: BUCKET, key };
  }
  function reference(
    loader: string,
    order: OrderReference['order'],
    extra: { params?: Record<string, unknown>; count?: number; mode?: string } = {},
  ): OrderReference {
    const rule = resolveIdRule(loader, extra.params);
    const folder = rule.checkable ? rule.folder : loader;
    return {
      order,
      copy: { bucket: BUCKET, prefix: layout.datasetPrefix(folder) },
      rule,
      count: extra.count,
      mode: extra.mode,
    };
  }
  const counts = () => ({ ...proxy.requests });
  const since = (before: { get: number; list: number; head: number }) => ({
    get: proxy.requests.get - before.get,
    list: proxy.requests.list - before.list,
  });

  it('gsm8k: every id present passes with the plan line; the incident (1,960 of 4,691 absent) is named with lines', async () => {
    await upload('gsm8k_train', saveToDisk(gsm8kColumns(7473), { rowsPerBatch: 1000 }));
    const good = await orderFile('good.txt', gsm8kIds(4691).reverse());
    const result = await checkOrderReference(s3, reference('gsm8k', good), { cacheDir });
    if (result.kind !== 'checked') throw new Error(result.reason);
    expect(result.check.ok).toBe(true);
    expect(formatCurriculumLine(result.check, result.copy)).toBe(
      'curriculum: 4,691 ids, all in gsm8k_train (7,473 prompts; 2,782 not in the curriculum)',
    );

    // The incident's shape: an order file made for a bigger copy, 1,960 of its 4,691 ids absent,
    // interleaved with the 2,731 present ones.
    const present = gsm8kIds(2731).reverse();
    const missing = Array.from({ length: 1960 }, (_, k) => `gsm8k_${7473 + 3 * k}`);
    const incident: string[] = [];
    for (let i = 0, p = 0, m = 0; i < 4691; i++) {
      incident.push((i % 12 < 5 && m < missing.length) || p >= present.length ? missing[m++] : present[p++]);
    }
    const bad = await orderFile('bad.txt', incident);
    const before = counts();
    const found = await checkOrderReference(s3, reference('gsm8k', bad), { cacheDir, firstN: 3 });
    if (found.kind !== 'checked') throw new Error(found.reason);
    expect(since(before)).toEqual({ get: 1, list: 1 }); // the order file, and the listing: ids from the cache
    expect(found.check.ids).toBe(4691);
    expect(found.check.missing.count).toBe(1960);
    expect(found.check.missing.first).toEqual([
      { id: 'gsm8k_7473', line: 1 },
      { id: 'gsm8k_7476', line: 2 },
      { id: 'gsm8k_7479', line: 3 },
    ]);
    const problem = missingIdsProblem(found.check, 's3://bucket/curricula/bad.txt', found.copy)!;
    expect(problem.message).toMatch(
      /^1,960 ids of the 4,691 in s3:\/\/bucket\/curricula\/bad.txt are not in gsm8k_train \(7,473 prompts\): the trainer would skip them without an error\. line 1: gsm8k_7473, line 2: gsm8k_7476, line 3: gsm8k_7479, … \(1,957 more\)\. 1,960 of them are past the dataset's last id/,
    );
    expect(formatCurriculumLine(found.check, found.copy)).toBe(
      'curriculum: 4,691 ids, 1,960 not in gsm8k_train (7,473 prompts; 4,742 not in the curriculum)',
    );
  });

  it('math (subjects, a level filter) and duplicates; mbpp (task ids) and an over-large count', async () => {
    await upload(
      'math_train',
      saveToDisk(mathColumns(['Algebra', 'Number Theory', 'Precalculus'], 3000), { shards: 2 }),
    );
    await upload('mbpp_train', saveToDisk(mbppColumns(374, 601), { rowsPerBatch: 100 }));

    const mathRule = resolveIdRule('math', { level: [1] }) as Extract<ResolvedIdRule, { checkable: true }>;
    const mathIds = await readDatasetIds(
      s3,
      { bucket: BUCKET, prefix: layout.datasetPrefix('math_train') },
      mathRule,
      {
        cacheDir,
      },
    );
    if (!mathIds.ok) throw new Error(mathIds.reason);
    expect(mathIds.rows).toBe(3000);
    expect(mathIds.ids).toHaveLength(600);
    expect(mathIds.ids.slice(0, 4)).toEqual([
      'math_algebra_0',
      'math_precalculus_0',
      'math_number theory_0',
      'math_algebra_1',
    ]);
    const mathOrder = await orderFile('math.txt', [
      ...mathIds.ids.slice(0, 300),
      'math_algebra_0',
      'math_precalculus_0',
    ]);
    const math = await checkOrderReference(s3, reference('math', mathOrder, { params: { level: [1] } }), {
      cacheDir,
    });
    if (math.kind !== 'checked') throw new Error(math.reason);
    expect(math.check.ok).toBe(true);
    expect(math.check.duplicates.first).toEqual([
      { id: 'math_algebra_0', lines: [1, 301] },
      { id: 'math_precalculus_0', lines: [2, 302] },
    ]);
    expect(curriculumWarnings(math.check, 'math.txt')[0].message).toMatch(/lists 2 ids more than once/);
    expect(formatCurriculumLine(math.check, math.copy)).toBe(
      'curriculum: 302 ids, all in math_train (600 prompts; 300 not in the curriculum; 2 ids listed more than once)',
    );

    const mbppOrder = await orderFile('mbpp.txt', ['mbpp_601', 'mbpp_974', 'mbpp_975', 'mbpp_700']);
    const mbpp = await checkOrderReference(
      s3,
      reference('mbpp', mbppOrder, { count: 10, mode: 'sequential' }),
      { cacheDir },
    );
    if (mbpp.kind !== 'checked') throw new Error(mbpp.reason);
    expect(mbpp.check.missing.first).toEqual([{ id: 'mbpp_975', line: 3 }]);
    expect(mbpp.check.count).toEqual({ requested: 10, available: 3, tooLarge: true, ignored: false });
    expect(curriculumWarnings(mbpp.check, 'mbpp.txt').map((w) => w.message)).toEqual([
      'count 10 asks for more prompts than mbpp.txt leaves in the dataset (3)',
    ]);
  });

  it('a second read of the same copy makes no GET of its Arrow files; a changed copy is read again', async () => {
    await upload('mbpp_train', saveToDisk(mbppColumns(2000, 1), { shards: 2 }));
    const c = { bucket: BUCKET, prefix: layout.datasetPrefix('mbpp_train') };
    const rule = resolveIdRule('mbpp') as Extract<ResolvedIdRule, { checkable: true }>;
    let before = counts();
    const cold = await readDatasetIds(s3, c, rule, { cacheDir });
    expect(cold.ok && [cold.fromCache, cold.gets]).toEqual([false, 4]); // state, info, 2 streams
    expect(since(before)).toEqual({ get: 4, list: 1 });
    before = counts();
    const warm = await readDatasetIds(s3, c, rule, { cacheDir });
    expect(warm.ok && [warm.fromCache, warm.gets, warm.bytesRead]).toEqual([true, 0, 0]);
    expect(since(before)).toEqual({ get: 0, list: 1 });
    expect(warm.ok && warm.ids).toEqual(cold.ok && cold.ids);

    await upload('mbpp_train', saveToDisk(mbppColumns(2001, 1), { shards: 2 }));
    const changed = await readDatasetIds(s3, c, rule, { cacheDir });
    expect(changed.ok && [changed.fromCache, changed.ids.length]).toEqual([false, 2001]);
  });

  it('a loader with no stored copy, and a copy the loader could not read, are "could not be checked"', async () => {
    const order = await orderFile('he.txt', ['HumanEval/0']);
    const he = await checkOrderReference(s3, reference('humaneval', order), { cacheDir });
    expect(he).toEqual({
      kind: 'unchecked',
      loader: 'humaneval',
      reason:
        'it loads openai/openai_humaneval from the Hugging Face Hub only: there is no stored copy to read',
    });
    // The seeded gsm8k_test is a DatasetDict saved whole.
    const dict = await checkOrderReference(s3, reference('gsm8k', order, { params: { split: 'test' } }), {
      cacheDir,
    });
    expect(dict.kind === 'unchecked' && dict.reason).toMatch(/gsm8k_test\/ is a DatasetDict/);
  });
});
