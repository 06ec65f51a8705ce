import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { IS3 } from '../../lib/aws';
import { readDatasetIds, resolveIdRule } from '../../lib/curriculum';
import { type ResolvedIdRule } from '../../lib/curriculum/id-rules';
import { saveToDisk, type Column } from './save-to-disk';

/*
 * For bench/run.ts: the id check of a 100,000-row dataset copy (MATH-shaped: the rule that decodes a
 * string column and numbers rows per subject), cold and then cached, against whatever S3 `s3` talks to.
 */

export interface CurriculumBenchRun {
  readonly seconds: number;
  readonly bytesRead: number;
  readonly gets: number;
}

export interface CurriculumBench {
  readonly rows: number;
  /** The copy's size in S3 (all its files). */
  readonly copyBytes: number;
  readonly cold: CurriculumBenchRun;
  readonly cached: CurriculumBenchRun;
}

const SUBJECTS = [
  'Algebra',
  'Counting & Probability',
  'Geometry',
  'Intermediate Algebra',
  'Number Theory',
  'Prealgebra',
  'Precalculus',
];

function mathCopy(rows: number): Record<string, Column> {
  const text = (i: number, n: number) => `${i} `.repeat(Math.ceil(n / `${i} `.length)).slice(0, n);
  return {
    problem: { dtype: 'string', values: Array.from({ length: rows }, (_, i) => text(i, 200)) },
    level: { dtype: 'string', values: Array.from({ length: rows }, (_, i) => `Level ${(i % 5) + 1}`) },
    type: {
      dtype: 'string',
      values: Array.from({ length: rows }, (_, i) => SUBJECTS[(i * 7919) % SUBJECTS.length]),
    },
    solution: { dtype: 'string', values: Array.from({ length: rows }, (_, i) => text(i, 300)) },
  };
}

/** Uploads the copy under `prefix` (ending in `/`), then times the cold read and the cached repeat. */
export async function benchCurriculum(
  s3: IS3,
  bucket: string,
  prefix: string,
  options: { rows?: number; shards?: number } = {},
): Promise<CurriculumBench> {
  const rows = options.rows ?? 100_000;
  const files = saveToDisk(mathCopy(rows), { shards: options.shards ?? 2 });
  let copyBytes = 0;
  for (const [name, body] of Object.entries(files)) {
    await s3.putObject(bucket, `${prefix}${name}`, body);
    copyBytes += body.length;
  }
  const rule = resolveIdRule('math') as Extract<ResolvedIdRule, { checkable: true }>;
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-bench-curriculum-'));
  const run = async (): Promise<CurriculumBenchRun> => {
    const started = process.hrtime.bigint();
    const got = await readDatasetIds(s3, { bucket, prefix }, rule, { cacheDir });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (!got.ok) throw new Error(got.reason);
    if (got.ids.length !== rows) throw new Error(`read ${got.ids.length} ids of ${rows}`);
    return { seconds, bytesRead: got.bytesRead, gets: got.gets };
  };
  try {
    const cold = await run();
    const cached = await run();
    return { rows, copyBytes, cold, cached };
  } finally {
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
}
