/**
 * `rlvr passk results`: the shards of campaigns merged, from local run folders (as `rlvr download` or a
 * local run left them, or a bare folder of the script's shards) and from jobs in S3, each shard's results
 * streamed line by line (a campaign of 512 completions per prompt is gigabytes of text).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { describeAwsError, type JobContext } from '../aws';
import { RuntimeFailure, UserError } from '../errors';
import {
  mergeShards,
  PASSK_DIR,
  PASSK_PLAN_FILE,
  readPasskFolder,
  shardFolder,
  isStreamFile,
  streamOrder,
  type MergedPasskResults,
  type PasskJobPlan,
} from '../passk-records';

export interface PasskResultsOptions {
  readonly cwd: string;
  readonly openContext: () => Promise<JobContext>;
  /** A context the caller opened already (and closes): used for jobs instead of opening another. */
  readonly context?: JobContext;
}

/** A name that is a folder here is read there; any other is a job. */
export async function passkResultsOf(
  sources: readonly string[],
  options: PasskResultsOptions,
): Promise<MergedPasskResults[]> {
  const out: MergedPasskResults[] = [];
  let opened: JobContext | undefined;
  try {
    for (const source of sources) {
      const folder = path.resolve(options.cwd, source);
      if (fs.existsSync(folder)) {
        const read = await readPasskFolder(folder);
        if (!read)
          throw new UserError(
            `${source}: no pass@k results there (a run folder with ${PASSK_PLAN_FILE}, or shard_<i>/ folders)`,
            'NoPasskResults',
          );
        out.push(read);
        continue;
      }
      if (/[/\\]/.test(source)) throw new UserError(`${source}: no folder at ${folder}`, 'NoSuchRunFolder');
      const context = options.context ?? (opened ??= await options.openContext());
      out.push(await jobResults(context, source));
    }
  } finally {
    opened?.close();
  }
  return out;
}

async function jobResults(context: JobContext, job: string): Promise<MergedPasskResults> {
  const { layout, aws } = context;
  if (!layout) throw new UserError('No bucket is configured: deploy the stack or pass --bucket', 'NoBucket');
  try {
    let plan: PasskJobPlan | undefined;
    const planKey = layout.jobKey(job, PASSK_PLAN_FILE);
    if (await aws.s3.headObject(layout.bucket, planKey))
      plan = JSON.parse(await aws.s3.getObjectText(layout.bucket, planKey)) as PasskJobPlan;
    const prefix = `${layout.checkpointsPrefix(job)}${PASSK_DIR}/`;
    const files = plan?.files ?? { shardFolder: 'shard_{shard}', results: 'verification_results.jsonl' };
    const listed = await aws.s3.listObjects(layout.bucket, prefix);
    const indices = plan
      ? plan.shards.map((s) => s.index)
      : listed
          .map((o) => /^shard_(0|[1-9]\d*)\/(.+)$/.exec(o.key.slice(prefix.length)))
          .filter((m): m is RegExpExecArray => m !== null && isStreamFile(files.results, m[2]))
          .map((m) => Number(m[1]));
    if (!plan && indices.length === 0)
      throw new UserError(
        `${job}: no pass@k results (neither ${planKey} nor shard results under ${layout.uri(prefix)})`,
        'NoPasskResults',
      );
    const shards = [...new Set(indices)]
      .map((index) => ({
        index,
        keys: shardKeys(listed, `${prefix}${shardFolder(files, index)}/`, files.results),
      }))
      .filter((s) => s.keys.length > 0)
      .map((s) => ({
        index: s.index,
        lines: keysLines(s.keys.map((key) => () => aws.s3.getObjectStream(layout.bucket, key, {}))),
      }));
    return await mergeShards({ source: job, ...(plan ? { plan } : {}), shards });
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new RuntimeFailure(
      `Could not read ${job}'s pass@k results: ${describeAwsError(err)}`,
      'AwsFailure',
      {
        cause: err,
      },
    );
  }
}

/**
 * A shard's results keys in reading order: the legacy single object, then its segments by sequence number
 * (see passk-records' segments.ts). `results` may name a subfolder of the shard folder.
 */
function shardKeys(listed: readonly { key: string }[], shardPrefix: string, results: string): string[] {
  const slash = results.lastIndexOf('/');
  const where = `${shardPrefix}${results.slice(0, slash + 1)}`;
  const name = results.slice(slash + 1);
  const entries = listed
    .filter((o) => o.key.startsWith(where) && !o.key.slice(where.length).includes('/'))
    .map((o) => o.key.slice(where.length));
  return streamOrder(name, entries).map((e) => `${where}${e}`);
}

/** The lines of objects as one stream, each opened only when the merge reaches it. */
async function* keysLines(opens: readonly (() => Promise<NodeJS.ReadableStream>)[]): AsyncIterable<string> {
  for (const open of opens) {
    const stream = await open();
    yield* readline.createInterface({ input: stream, crlfDelay: Infinity });
  }
}
