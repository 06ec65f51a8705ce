import * as fs from 'node:fs';
import * as path from 'node:path';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { allKeys, BUCKET, clients, jobNames, SEEDED_KEYS } from './emulator-data';

/** Every file below `dir` (relative paths, sorted), or [] when it does not exist. */
export function filesBelow(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * What a command may have created, taken before it runs; `assertNothingCreated` compares after: no
 * job in the emulator, no new object in the bucket, no new local file under the watched folders (a
 * job log, a results folder), no multipart upload left open.
 */
export interface Snapshot {
  readonly jobs: string[];
  readonly keys: string[];
  readonly openUploads: string[];
  readonly files: Map<string, string[]>;
}

export async function snapshot(endpoint: string, folders: readonly string[] = []): Promise<Snapshot> {
  return {
    jobs: await jobNames(endpoint),
    keys: await allKeys(endpoint),
    openUploads: await openMultipartUploads(endpoint),
    files: new Map(folders.map((f) => [f, filesBelow(f)])),
  };
}

export async function assertNothingCreated(endpoint: string, before: Snapshot): Promise<void> {
  expect(await jobNames(endpoint)).toEqual(before.jobs);
  expect(await allKeys(endpoint)).toEqual(before.keys);
  expect(await openMultipartUploads(endpoint)).toEqual(before.openUploads);
  for (const [folder, files] of before.files) expect(filesBelow(folder)).toEqual(files);
}

/** Multipart uploads begun and neither completed nor aborted (billed until they are). */
export async function openMultipartUploads(endpoint: string): Promise<string[]> {
  const { s3 } = clients(endpoint);
  const out = await s3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }));
  return (out.Uploads ?? []).map((u) => `${u.Key} ${u.UploadId}`).sort();
}

/** The keys the emulator is seeded with (a fresh emulator's bucket). */
export const SEEDED = SEEDED_KEYS;
