/**
 * Which evaluation units are done already (a repeated `rlvr eval` skips them unless
 * --force). A unit's record is named by its identity (`unit-<id>.json`, job-plan.ts), so one listing of
 * the eval jobs' prefixes finds them all without reading a file; local runs look in `results/`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AwsClients } from '../aws';
import { LOCAL, type S3Layout } from '../layout';
import { localUnitRecords, parseUnitFileName } from '../eval-records';

export interface DoneUnit {
  readonly id: string;
  /** The eval job (or local run folder) that ran it. */
  readonly where: string;
  /** Its result folder, relative to that run folder (`evals/<label>/<task>_<n>shot`). */
  readonly folder: string;
  /** Where its folder is: an S3 prefix (ends with `/`), or a local folder. */
  readonly location: { readonly bucket: string; readonly key: string } | { readonly dir: string };
}

export async function findDoneUnits(input: {
  readonly aws: AwsClients | undefined;
  readonly layout: S3Layout;
  /** The eval jobs' name prefix: their run folders are `checkpoints/<prefix>-…/`. */
  readonly jobNamePrefix: string;
  readonly cwd: string;
  readonly local: boolean;
  readonly ids: readonly string[];
}): Promise<Map<string, DoneUnit>> {
  const wanted = new Set(input.ids);
  const found = new Map<string, DoneUnit>();
  if (input.local) {
    const results = path.resolve(input.cwd, LOCAL.resultsDir);
    const runs = fs.existsSync(results) ? fs.readdirSync(results).sort() : [];
    for (const run of runs) {
      const runDir = path.join(results, run);
      for (const u of localUnitRecords(runDir))
        if (u.ok && wanted.has(u.id))
          found.set(u.id, {
            id: u.id,
            where: runDir,
            folder: u.folder,
            location: { dir: path.join(runDir, u.folder) },
          });
    }
    return found;
  }
  if (!input.aws) return found;
  const root = input.layout.checkpointsRootPrefix();
  const objects = await input.aws.s3.listObjects(input.layout.bucket, `${root}${input.jobNamePrefix}`);
  // Oldest job first: a later run's record of the same unit wins.
  for (const o of [...objects].sort((a, b) => a.key.localeCompare(b.key))) {
    const rel = o.key.slice(root.length);
    const parsed = parseUnitFileName(path.posix.basename(rel));
    if (!parsed?.ok || !wanted.has(parsed.id)) continue;
    const job = rel.split('/')[0];
    const dirKey = o.key.slice(0, o.key.length - path.posix.basename(rel).length);
    found.set(parsed.id, {
      id: parsed.id,
      where: job,
      folder: dirKey.slice(`${root}${job}/`.length).replace(/\/$/, ''),
      location: { bucket: input.layout.bucket, key: dirKey },
    });
  }
  return found;
}
