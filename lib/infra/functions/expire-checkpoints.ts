/*
 * The checkpoint-expiry Lambda function: deletes intermediate checkpoint folders (`<run>_step<N>/`) older
 * than EXPIRY_DAYS under CHECKPOINTS_PREFIX (`checkpoints/`), keeping every `<run>_final/` and the newest
 * step of each folder of checkpoints (one per trainer run folder: a restarted job keeps one per attempt).
 * Which keys are checkpoints is lib/layout's rule (checkpointFolderOfKey), the one the entrypoint writes
 * by and download reads by. The stack bundles this file with esbuild at synth (checkpoint-expiry.ts);
 * the S3 client comes from the Lambda Node.js runtime.
 */
import { DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { checkpointFolderOfKey } from '../../layout';

const DAY_MS = 86_400_000;
/** DeleteObjects takes at most 1,000 keys. */
const DELETE_BATCH = 1000;

interface Folder {
  readonly group: string;
  readonly step: number;
  newest: number;
  readonly keys: string[];
}

type Send = Pick<S3Client, 'send'>;

/** Every intermediate checkpoint folder under `prefix`, keyed `<job>/<path>`. */
async function stepFolders(s3: Send, bucket: string, prefix: string): Promise<Map<string, Folder>> {
  const folders = new Map<string, Folder>();
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) {
      const rest = o.Key!.slice(prefix.length);
      const job = rest.slice(0, rest.indexOf('/'));
      const found = job ? checkpointFolderOfKey(rest.slice(job.length + 1)) : undefined;
      if (!found || found.final || found.step === undefined) continue;
      const id = `${job}/${found.path}`;
      const f = folders.get(id) ?? { group: `${job}/${found.parent}`, step: found.step, newest: 0, keys: [] };
      f.newest = Math.max(f.newest, new Date(o.LastModified ?? 0).getTime());
      f.keys.push(o.Key!);
      folders.set(id, f);
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return folders;
}

/** The keys of folders older than `cutoff` that are not the newest step of their group. */
export function expiredKeys(folders: Iterable<Folder>, cutoff: number): string[] {
  const all = [...folders];
  const latest = new Map<string, number>();
  for (const f of all) latest.set(f.group, Math.max(latest.get(f.group) ?? -1, f.step));
  return all.filter((f) => f.step !== latest.get(f.group) && f.newest < cutoff).flatMap((f) => f.keys);
}

/** One run over the bucket the environment names (BUCKET, CHECKPOINTS_PREFIX, EXPIRY_DAYS). */
export async function expireCheckpoints(s3: Send): Promise<{ deleted: number }> {
  const bucket = process.env.BUCKET!;
  const prefix = process.env.CHECKPOINTS_PREFIX!;
  const cutoff = Date.now() - Number(process.env.EXPIRY_DAYS) * DAY_MS;
  const doomed = expiredKeys((await stepFolders(s3, bucket, prefix)).values(), cutoff);
  for (let i = 0; i < doomed.length; i += DELETE_BATCH) {
    const batch = doomed.slice(i, i + DELETE_BATCH).map((Key) => ({ Key }));
    await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch, Quiet: true } }));
  }
  return { deleted: doomed.length };
}

/** The Lambda entry (the runtime's third argument, if any, is not a client: it is ignored). */
export async function handler(): Promise<{ deleted: number }> {
  return expireCheckpoints(new S3Client({}));
}
