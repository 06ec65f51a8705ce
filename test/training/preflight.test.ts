import type { IS3, S3ObjectInfo } from '../../lib/aws';
import { YamlFile } from '../../lib/config';
import type { DatasetInput, InputPlan, ModelInput, OrderFileInput } from '../../lib/training/inputs';
import { runPreflight } from '../../lib/training/preflight';
import { safetensorsWith } from '../helpers/fixtures';

/*
 * The pre-flight's steps (each model, data file, dataset folder and order file) on an in-memory bucket;
 * the submit tests run it against moto_server.
 */

/** A bucket `b` in memory: listing, HEAD, text and range reads, as lib/aws gives them. */
function bucketS3(objects: Record<string, Buffer | string>): IS3 {
  const body = (key: string) => Buffer.from(objects[key]);
  const info = (key: string): S3ObjectInfo => ({ key, size: body(key).length, etag: '"e"' });
  return {
    listObjects: async (_b: string, prefix: string, limit?: number) =>
      Object.keys(objects)
        .filter((k) => k.startsWith(prefix))
        .sort()
        .slice(0, limit)
        .map(info),
    headObject: async (_b: string, key: string) => (key in objects ? info(key) : undefined),
    getObjectText: async (_b: string, key: string) => body(key).toString('utf8'),
    getObjectRange: async (_b: string, key: string, start: number, end?: number) =>
      body(key).subarray(start, (end ?? body(key).length - 1) + 1),
  } as unknown as IS3;
}

const file = YamlFile.parse(
  'model:\n  path: Qwen/Qwen3-1.7B-Base\ndata:\n  dataset: gsm8k\n  order: /tmp/o.txt\nsft_data:\n  dataset: sft_jsonl\n  path: s3://b/d/x.jsonl\n',
  'c.yaml',
);

function model(key: string, channel = 'model', kind: 'hub-id' | 's3' = 'hub-id'): ModelInput {
  return {
    location: { bucket: 'b', key },
    mappings: [{ value: kind === 'hub-id' ? 'Qwen/Qwen3-1.7B-Base' : `s3://b/${key}`, kind, note: '' }],
    referencedAt: [['model', 'path']],
    channel,
    containerPath: `/opt/ml/input/data/${channel}`,
  };
}

const folderDataset = (key: string, folder = 'gsm8k_train'): DatasetInput => ({
  folder,
  location: { bucket: 'b', key },
  note: '',
  referencedAt: ['data', 'dataset'],
  channel: folder,
  containerPath: `/opt/ml/input/data/${folder}`,
  rewrite: false,
  kind: 'folder',
  loader: 'gsm8k',
});

const fileDataset = (key: string): DatasetInput => ({
  folder: 'x.jsonl',
  location: { bucket: 'b', key },
  note: '',
  referencedAt: ['sft_data', 'path'],
  channel: 'x.jsonl',
  containerPath: '/opt/ml/input/data/x.jsonl/x.jsonl',
  rewrite: true,
  kind: 'file',
  loader: 'sft_jsonl',
});

const orderFile = (key: string): OrderFileInput => ({
  location: { bucket: 'b', key },
  referencedAt: ['data', 'order'],
  channel: 'order-1',
  containerPath: '/opt/ml/input/data/order-1/o.txt',
});

function plan(change: Partial<InputPlan> = {}): InputPlan {
  return {
    model: model('m/'),
    otherModels: [],
    datasets: [],
    orderFiles: [],
    localFiles: [],
    notCarried: [],
    ...change,
  };
}

const WEIGHTS = safetensorsWith(Buffer.alloc(64, 1));
const goodModel = (prefix: string) => ({
  [`${prefix}model.safetensors`]: WEIGHTS,
  [`${prefix}config.json`]: '{}',
  [`${prefix}tokenizer.json`]: '{}',
});

describe('pre-flight', () => {
  it('every input present: one check each, in order (models, data files, dataset folders, order files)', async () => {
    const s3 = bucketS3({
      ...goodModel('m/'),
      ...goodModel('t/'),
      'd/x.jsonl': '{"a":1}\n',
      'ds/state.json': '{}',
      'ds/data-00000-of-00001.arrow': 'x',
      'o.txt': '1\n2\n',
    });
    const result = await runPreflight(
      s3,
      plan({
        otherModels: [model('t/', 'model-teacher', 's3')],
        datasets: [folderDataset('ds/'), fileDataset('d/x.jsonl')],
        orderFiles: [orderFile('o.txt')],
      }),
      file,
      new Map([['gsm8k_train', { marker: 'state.json', path: '/tmp/gsm8k_train_cache' }]]),
    );
    expect(result.problems).toEqual([]);
    // An order file that names no single dataset entry (as an iterator over a mix does) is said to be
    // unchecked, never passed in silence (the curriculum check: test/training/curriculum-submit.*).
    expect(result.warnings.map((w) => w.message)).toEqual([
      'the ids in s3://b/o.txt could not be checked against the mixed dataset: the order file orders several datasets at once',
    ]);
    expect(result.checks.map((c) => [c.what, c.target, c.ok, c.detail])).toEqual([
      ['model', 's3://b/m/', true, `3 files, ${((WEIGHTS.length + 4) / 1e9).toFixed(2)} GB`],
      ['model (model-teacher)', 's3://b/t/', true, expect.stringMatching(/^3 files/)],
      ['data file x.jsonl', 's3://b/d/x.jsonl', true, '8 bytes'],
      ['dataset gsm8k_train', 's3://b/ds/', true, '2 files'],
      ['order file', 's3://b/o.txt', true, '4 bytes'],
    ]);
  });

  it('a missing model says how to download it from the Hub and upload it', async () => {
    const result = await runPreflight(bucketS3({}), plan(), file);
    expect(result.checks).toEqual([{ what: 'model', target: 's3://b/m/', ok: false, detail: 'no objects' }]);
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatchObject({ where: 'model.path', message: 'no model at s3://b/m/' });
    expect(result.problems[0].hint).toContain(
      'huggingface-cli download Qwen/Qwen3-1.7B-Base --local-dir Qwen3-1.7B-Base && aws s3 sync Qwen3-1.7B-Base s3://b/m/',
    );
    expect(result.problems[0].location?.line).toBe(2);
  });

  it('an unloadable model: the rename fix when there is one, else upload again; no tokenizer is a warning', async () => {
    const index = JSON.stringify({ weight_map: { w: 'model-00001-of-00001.safetensors' } });
    const renamed = await runPreflight(
      bucketS3({ 'm/model.safetensors': WEIGHTS, 'm/model.safetensors.index.json': index }),
      plan(),
      file,
    );
    expect(renamed.checks[0].ok).toBe(false);
    expect(renamed.problems[0].message).toMatch(/is not a loadable model folder: .*vLLM cannot load it/);
    expect(renamed.problems[0].hint).toBe(
      'Rename it: aws s3 mv s3://b/m/model.safetensors s3://b/m/model-00001-of-00001.safetensors',
    );
    expect(renamed.warnings.map((w) => w.message)).toEqual([
      's3://b/m/ has no tokenizer files; the tokenizer must come from elsewhere',
    ]);

    const cut = await runPreflight(
      bucketS3({ ...goodModel('m/'), 'm/model.safetensors': WEIGHTS.subarray(0, WEIGHTS.length - 1) }),
      plan(),
      file,
    );
    expect(cut.problems[0].message).toMatch(/has \d+ of its \d+ bytes/);
    expect(cut.problems[0].hint).toBe('Upload the whole model folder again (rlvr upload model <folder>).');
  });

  it('tokenizer.use_fast: false needs the slow tokenizer’s vocabulary files in the folder it reads (tokenizer.json is not enough)', async () => {
    const slowConfig = (useFast: string) =>
      YamlFile.parse(
        `model:\n  path: Qwen/Qwen3-1.7B-Base\ntokenizer:\n  pretrained_model_name_or_path: Qwen/Qwen3-1.7B-Base\n  use_fast: ${useFast}\n`,
        'c.yaml',
      );
    const tokenizerToo = {
      ...model('m/'),
      referencedAt: [
        ['model', 'path'],
        ['tokenizer', 'pretrained_model_name_or_path'],
      ],
    };
    const run = (objects: Record<string, Buffer | string>, useFast = 'false', m: ModelInput = tokenizerToo) =>
      runPreflight(bucketS3(objects), plan({ model: m }), slowConfig(useFast));
    const fastOnly = await run(goodModel('m/'));
    expect(fastOnly.problems).toHaveLength(1);
    expect(fastOnly.problems[0]).toMatchObject({ where: 'tokenizer.use_fast' });
    expect(fastOnly.problems[0].location?.line).toBe(5);
    expect(fastOnly.problems[0].message).toContain(
      'the slow tokenizer reads its vocabulary files, and s3://b/m/ has none (vocab.json + merges.txt',
    );
    // Qwen's slow tokenizer files present; a fast tokenizer; a model folder the tokenizer is not read from.
    expect((await run({ ...goodModel('m/'), 'm/vocab.json': '{}', 'm/merges.txt': '#' })).problems).toEqual(
      [],
    );
    expect((await run(goodModel('m/'), 'true')).problems).toEqual([]);
    expect((await run(goodModel('m/'), 'false', model('m/'))).problems).toEqual([]);
  });

  it('dataset folders: missing, without the loader’s marker at the top, or not saved with save_to_disk', async () => {
    const s3 = bucketS3({
      ...goodModel('m/'),
      'nomarker/dataset_info.json': '{}',
      'plain/train.parquet': 'x',
    });
    const result = await runPreflight(
      s3,
      plan({
        datasets: [
          folderDataset('none/', 'a'),
          folderDataset('nomarker/', 'b'),
          folderDataset('plain/', 'c'),
        ],
      }),
      file,
      new Map([['b', { marker: 'state.json', path: '/tmp/b_cache' }]]),
    );
    expect(result.checks.slice(1).map((c) => [c.what, c.ok, c.detail])).toEqual([
      ['dataset a', false, 'no objects'],
      ['dataset b', false, 'no state.json at the top'],
      ['dataset c', false, 'not a save_to_disk folder'],
    ]);
    expect(result.problems.map((p) => p.message)).toEqual([
      'no dataset at s3://b/none/',
      expect.stringContaining(
        "s3://b/nomarker/ has no state.json at its top: the trainer's loader reads /tmp/b_cache",
      ),
      's3://b/plain/ is not a dataset saved with save_to_disk (no dataset_info.json / dataset_dict.json / state.json)',
    ]);
  });

  it('data files and order files: missing or empty', async () => {
    const s3 = bucketS3({ ...goodModel('m/'), 'empty.jsonl': '', 'empty.txt': '' });
    const result = await runPreflight(
      s3,
      plan({
        datasets: [fileDataset('gone.jsonl'), fileDataset('empty.jsonl')],
        orderFiles: [orderFile('gone.txt'), orderFile('empty.txt')],
      }),
      file,
    );
    expect(result.checks.slice(1).map((c) => [c.what, c.ok, c.detail])).toEqual([
      ['data file x.jsonl', false, 'missing'],
      ['data file x.jsonl', false, '0 bytes'],
      ['order file', false, 'missing'],
      ['order file', false, '0 bytes'],
    ]);
    expect(result.problems.map((p) => [p.where, p.message])).toEqual([
      ['sft_data.path', 'no data file at s3://b/gone.jsonl'],
      ['sft_data.path', 's3://b/empty.jsonl is empty'],
      ['data.order', 'no order file at s3://b/gone.txt'],
      ['data.order', 's3://b/empty.txt is empty'],
    ]);
  });
});
