import {
  Int32,
  Int64,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Table,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';

/*
 * A dataset folder as `datasets.Dataset.save_to_disk` writes it: `data-0000N-of-0000M.arrow` (Arrow IPC
 * streams, record batches of `rowsPerBatch` rows, the features in the schema's `huggingface`
 * metadata), `dataset_info.json` (the features) and `state.json` (the data files in order).
 */

export type Column =
  | { readonly dtype: 'string'; readonly values: readonly (string | null)[] }
  | { readonly dtype: 'int32' | 'int64'; readonly values: readonly number[] };

export interface SaveToDiskOptions {
  readonly shards?: number;
  readonly rowsPerBatch?: number;
}

function features(columns: Record<string, Column>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(columns).map(([name, c]) => [name, { dtype: c.dtype, _type: 'Value' }]),
  );
}

function vector(c: Column, from: number, to: number) {
  if (c.dtype === 'string') return vectorFromArray(c.values.slice(from, to), new Utf8());
  if (c.dtype === 'int32') return vectorFromArray(c.values.slice(from, to), new Int32());
  return vectorFromArray(
    c.values.slice(from, to).map((v) => BigInt(v)),
    new Int64(),
  );
}

/** One Arrow stream of rows [from, to). */
function arrowStream(
  columns: Record<string, Column>,
  from: number,
  to: number,
  rowsPerBatch: number,
): Uint8Array {
  const info = JSON.stringify({ info: { features: features(columns) } });
  const ranges: [number, number][] = [];
  for (let start = from; start < to; start += rowsPerBatch)
    ranges.push([start, Math.min(to, start + rowsPerBatch)]);
  if (ranges.length === 0) ranges.push([from, to]); // an empty shard still has its schema and one empty batch
  let schema: Schema | undefined;
  const writer = new RecordBatchStreamWriter();
  for (const [start, end] of ranges) {
    const table = new Table(
      Object.fromEntries(Object.entries(columns).map(([n, c]) => [n, vector(c, start, end)])),
    );
    schema ??= new Schema(table.schema.fields, new Map([['huggingface', info]]));
    for (const b of table.batches) writer.write(new RecordBatch(schema, b.data));
  }
  writer.finish();
  return writer.toUint8Array(true);
}

/** The folder's files: name → bytes. */
export function saveToDisk(
  columns: Record<string, Column>,
  options: SaveToDiskOptions = {},
): Record<string, Uint8Array> {
  const rows = Object.values(columns)[0]?.values.length ?? 0;
  const shards = options.shards ?? 1;
  const rowsPerBatch = options.rowsPerBatch ?? 1000;
  const files: Record<string, Uint8Array> = {};
  const names: string[] = [];
  for (let s = 0; s < shards; s++) {
    const name = `data-${String(s).padStart(5, '0')}-of-${String(shards).padStart(5, '0')}.arrow`;
    const from = Math.floor((rows * s) / shards);
    const to = Math.floor((rows * (s + 1)) / shards);
    files[name] = arrowStream(columns, from, to, rowsPerBatch);
    names.push(name);
  }
  const state = {
    _data_files: names.map((filename) => ({ filename })),
    _fingerprint: 'a1b2c3d4e5f60718',
    _format_columns: null,
    _format_kwargs: {},
    _format_type: null,
    _output_all_columns: false,
    _split: 'train',
  };
  const info = {
    builder_name: 'parquet',
    citation: '',
    config_name: 'main',
    dataset_name: 'fixture',
    description: '',
    features: features(columns),
    homepage: '',
    license: '',
    splits: { train: { name: 'train', num_bytes: 0, num_examples: rows, dataset_name: 'fixture' } },
  };
  files['state.json'] = Buffer.from(JSON.stringify(state, null, 2));
  files['dataset_info.json'] = Buffer.from(JSON.stringify(info, null, 2));
  return files;
}

/** gsm8k's columns (question, answer), `rows` rows. */
export function gsm8kColumns(rows: number): Record<string, Column> {
  return {
    question: {
      dtype: 'string',
      values: Array.from({ length: rows }, (_, i) => `Question ${i}: what is ${i} + 1?`),
    },
    answer: {
      dtype: 'string',
      values: Array.from({ length: rows }, (_, i) => `${i} + 1 = ${i + 1}\n#### ${i + 1}`),
    },
  };
}

/** hendrycks_math's columns (problem, level, type, solution), subjects interleaved, levels cycling. */
export function mathColumns(types: readonly string[], rows: number): Record<string, Column> {
  return {
    problem: { dtype: 'string', values: Array.from({ length: rows }, (_, i) => `Problem ${i}`) },
    level: { dtype: 'string', values: Array.from({ length: rows }, (_, i) => `Level ${(i % 5) + 1}`) },
    type: { dtype: 'string', values: Array.from({ length: rows }, (_, i) => types[i % types.length]) },
    solution: { dtype: 'string', values: Array.from({ length: rows }, (_, i) => `\\boxed{${i}}`) },
  };
}

/** mbpp's columns (task_id int32, text, code, test_list as text here), task ids from `firstTaskId`. */
export function mbppColumns(rows: number, firstTaskId: number): Record<string, Column> {
  return {
    task_id: { dtype: 'int32', values: Array.from({ length: rows }, (_, i) => firstTaskId + i) },
    text: {
      dtype: 'string',
      values: Array.from({ length: rows }, (_, i) => `Write a function number ${i}.`),
    },
    code: { dtype: 'string', values: Array.from({ length: rows }, (_, i) => `def f${i}(): return ${i}`) },
  };
}
