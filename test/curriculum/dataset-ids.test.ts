import * as fs from 'node:fs';
import { readDatasetIds, resolveIdRule } from '../../lib/curriculum';
import { type ResolvedIdRule } from '../../lib/curriculum/id-rules';
import { tempDir } from '../helpers/fixtures';
import { MemoryS3 } from './memory-s3';
import { gsm8kColumns, mathColumns, mbppColumns, saveToDisk } from './save-to-disk';

type Checkable = Extract<ResolvedIdRule, { checkable: true }>;
const rule = (loader: string, params: Record<string, unknown> = {}) =>
  resolveIdRule(loader, params) as Checkable;
const copy = (folder: string) => ({ bucket: 'b', prefix: `root/datasets/${folder}/` });

describe('reading a save_to_disk copy (Arrow streams in S3)', () => {
  test('gsm8k: the row count across shards and batches, nothing but the Arrow files and the JSON', async () => {
    const mem = new MemoryS3();
    mem.putFolder(
      copy('gsm8k_train').prefix,
      saveToDisk(gsm8kColumns(2500), { shards: 3, rowsPerBatch: 300 }),
    );
    const got = await readDatasetIds(mem.s3, copy('gsm8k_train'), rule('gsm8k'), { cacheDir: false });
    expect(got.ok && got.ids.length).toBe(2500);
    expect(got.ok && got.ids[2499]).toBe('gsm8k_2499');
    expect(got.gets).toBe(5);
    expect(mem.gets.map((k) => k.split('/').pop()).sort()).toEqual([
      'data-00000-of-00003.arrow',
      'data-00001-of-00003.arrow',
      'data-00002-of-00003.arrow',
      'dataset_info.json',
      'state.json',
    ]);
    const size = [...mem.objects.values()].reduce((n, b) => n + b.length, 0);
    expect(got.bytesRead).toBe(size);
  });

  test('math with a level filter, and mbpp task ids (int32), in file order', async () => {
    const mem = new MemoryS3();
    mem.putFolder(
      copy('math_train').prefix,
      saveToDisk(mathColumns(['Algebra', 'Geometry'], 20), { shards: 2 }),
    );
    mem.putFolder(copy('mbpp_train').prefix, saveToDisk(mbppColumns(374, 601), { rowsPerBatch: 100 }));
    const math = await readDatasetIds(mem.s3, copy('math_train'), rule('math', { level: [1, 2] }), {
      cacheDir: false,
    });
    // Rows 0,1 (levels 1,2), 5,6, 10,11, 15,16: types alternate Algebra/Geometry.
    expect(math.ok && math.ids).toEqual([
      'math_algebra_0',
      'math_geometry_0',
      'math_geometry_1',
      'math_algebra_1',
      'math_algebra_2',
      'math_geometry_2',
      'math_geometry_3',
      'math_algebra_3',
    ]);
    const mbpp = await readDatasetIds(mem.s3, copy('mbpp_train'), rule('mbpp'), { cacheDir: false });
    expect(mbpp.ok && [mbpp.ids.length, mbpp.ids[0], mbpp.ids[373]]).toEqual([374, 'mbpp_601', 'mbpp_974']);
  });

  test('int64 ids print as Python prints them; a format hiding the column is a reason', async () => {
    const mem = new MemoryS3();
    const columns = { task_id: { dtype: 'int64' as const, values: [11, 2 ** 53 + 2, 3] } };
    mem.putFolder(copy('mbpp_test').prefix, saveToDisk(columns));
    const got = await readDatasetIds(mem.s3, copy('mbpp_test'), rule('mbpp', { split: 'test' }), {
      cacheDir: false,
    });
    expect(got.ok && got.ids).toEqual(['mbpp_11', 'mbpp_9007199254740994', 'mbpp_3']);

    const files = saveToDisk(mbppColumns(3, 1));
    const state = JSON.parse(Buffer.from(files['state.json']).toString());
    files['state.json'] = Buffer.from(JSON.stringify({ ...state, _format_columns: ['text'] }));
    mem.putFolder(copy('mbpp_train').prefix, files);
    const hidden = await readDatasetIds(mem.s3, copy('mbpp_train'), rule('mbpp'), { cacheDir: false });
    expect(!hidden.ok && hidden.reason).toMatch(/its format hides the column\(s\) task_id from the loader/);
  });

  test('copies the loader could not read are reasons, not passes', async () => {
    const mem = new MemoryS3();
    const files = saveToDisk(gsm8kColumns(10));
    const reasonFor = async (folder: string, r = rule('gsm8k')) => {
      const got = await readDatasetIds(mem.s3, copy(folder), r, { cacheDir: false });
      return got.ok ? 'ok' : got.reason;
    };
    expect(await reasonFor('none')).toBe('there is no dataset at s3://b/root/datasets/none/');

    mem.putFolder(copy('dict').prefix, { 'dataset_dict.json': Buffer.from('{"splits":["train"]}') });
    mem.putFolder(`${copy('dict').prefix}train/`, files);
    expect(await reasonFor('dict')).toMatch(/is a DatasetDict \(dataset_dict.json\), not the split's folder/);

    const noState = Object.fromEntries(Object.entries(files).filter(([name]) => name !== 'state.json'));
    mem.putFolder(copy('nostate').prefix, noState);
    expect(await reasonFor('nostate')).toMatch(/has no state.json: Dataset.load_from_disk cannot load it/);

    mem.putFolder(copy('nocolumn').prefix, files);
    expect(await reasonFor('nocolumn', rule('mbpp'))).toMatch(/dataset_info.json has no column\(s\) task_id/);

    const arrow = files['data-00000-of-00001.arrow'];
    mem.putFolder(copy('cut').prefix, { ...files, 'data-00000-of-00001.arrow': arrow.subarray(0, 200) });
    expect(await reasonFor('cut')).toMatch(
      /data-00000-of-00001.arrow is not an Arrow stream the loader could read/,
    );

    mem.putFolder(copy('badjson').prefix, { ...files, 'state.json': Buffer.from('{"_data_files": [') });
    expect(await reasonFor('badjson')).toBe('s3://b/root/datasets/badjson/: state.json is not JSON');

    mem.putFolder(copy('gone').prefix, { ...files });
    mem.objects.delete(`${copy('gone').prefix}data-00000-of-00001.arrow`);
    expect(await reasonFor('gone')).toMatch(/state.json names data-00000-of-00001.arrow, which is not there/);
  });

  test('the cache: a repeat reads nothing but the listing; a changed copy is read again', async () => {
    const dir = tempDir('rlvr-curriculum-cache-');
    const mem = new MemoryS3();
    const c = copy('mbpp_train');
    mem.putFolder(c.prefix, saveToDisk(mbppColumns(50, 1)));
    const first = await readDatasetIds(mem.s3, c, rule('mbpp'), { cacheDir: dir });
    expect(first.ok && first.fromCache).toBe(false);
    mem.gets = [];
    const again = await readDatasetIds(mem.s3, c, rule('mbpp'), { cacheDir: dir });
    expect(again.ok && again.fromCache).toBe(true);
    expect(again.ok && again.ids).toEqual(first.ok && first.ids);
    expect([again.gets, again.bytesRead, mem.gets.length]).toEqual([0, 0, 0]);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);

    // Another copy under the same name (new ETags): read again, and its ids are the new ones.
    mem.putFolder(c.prefix, saveToDisk(mbppColumns(60, 1)));
    const changed = await readDatasetIds(mem.s3, c, rule('mbpp'), { cacheDir: dir });
    expect(changed.ok && [changed.fromCache, changed.ids.length]).toEqual([false, 60]);

    // A damaged cache file is read past, not trusted.
    for (const f of fs.readdirSync(dir)) fs.writeFileSync(`${dir}/${f}`, '{"v":1,"rows":3');
    const damaged = await readDatasetIds(mem.s3, c, rule('mbpp'), { cacheDir: dir });
    expect(damaged.ok && [damaged.fromCache, damaged.ids.length]).toEqual([false, 60]);
  });
});
