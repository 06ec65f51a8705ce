import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { IS3, S3ObjectInfo } from '../../lib/aws';
import type { JobContext } from '../../lib/aws/session';
import { S3Layout } from '../../lib/layout';
import { downloadJob, type TransferEvent } from '../../lib/transfers/download';
import { safetensorsWith, tempDir } from '../helpers/fixtures';

/*
 * downloadJob's steps (artifact, listing, selection, left-out checkpoints, fetch or skip, local checks)
 * on an in-memory bucket and job description; results.integration.test.ts runs the CLI against
 * moto_server.
 */

const layout = new S3Layout('b');
const JOB = 'job1';
const P = layout.checkpointsPrefix(JOB);
const WEIGHTS = safetensorsWith(Buffer.alloc(32, 7));
const index = (...files: string[]) =>
  JSON.stringify({ weight_map: Object.fromEntries(files.map((f, i) => [`w${i}`, f])) });

interface Fake {
  readonly context: JobContext;
  /** Keys whose bodies were fetched. */
  readonly fetched: string[];
}

function fakeJob(
  objects: Record<string, Buffer | string>,
  job: { TrainingJobStatus: string; ModelArtifacts?: { S3ModelArtifacts: string } },
): Fake {
  const fetched: string[] = [];
  const body = (key: string) => Buffer.from(objects[key]);
  const info = (key: string): S3ObjectInfo => ({ key, size: body(key).length, etag: `"${key.length}"` });
  const s3 = {
    listObjects: async (_b: string, prefix: string) =>
      Object.keys(objects)
        .filter((k) => k.startsWith(prefix))
        .sort()
        .map(info),
    headObject: async (_b: string, key: string) => (key in objects ? info(key) : undefined),
    getObjectText: async (_b: string, key: string) => body(key).toString('utf8'),
    getObjectStream: async (_b: string, key: string, o: { start?: number; end?: number }) => {
      fetched.push(key);
      return Readable.from([body(key).subarray(o.start ?? 0, (o.end ?? body(key).length - 1) + 1)]);
    },
  } as unknown as IS3;
  const sagemaker = { describeTrainingJob: async (name: string) => (name === JOB ? job : undefined) };
  return {
    context: { aws: { s3, sagemaker }, region: 'us-east-1', layout } as unknown as JobContext,
    fetched,
  };
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .filter((f) => !f.startsWith('.rlvr'))
    .sort();
}

/** A run without its final checkpoint: step20 whole, step40 cut off (one of two shards), an unsafe key. */
const noFinal = {
  [`${P}traces/trace.jsonl`]: '{"step":1}\n',
  [`${P}checkpoints/r_step20/model.safetensors`]: WEIGHTS,
  [`${P}checkpoints/r_step20/config.json`]: '{}',
  [`${P}checkpoints/r_step40/model.safetensors.index.json`]: index(
    'model-00001-of-00002.safetensors',
    'model-00002-of-00002.safetensors',
  ),
  [`${P}checkpoints/r_step40/model-00001-of-00002.safetensors`]: WEIGHTS,
  [`${P}a/../escape.txt`]: 'x',
};
/** The final checkpoint with the known trap (one file named model.safetensors), fixed locally by a rename. */
const FINAL_INDEX = index('model-00001-of-00001.safetensors');
const running = {
  ...noFinal,
  [`${P}checkpoints/r_final/config.json`]: '{}',
  [`${P}checkpoints/r_final/model.safetensors`]: WEIGHTS,
  [`${P}checkpoints/r_final/model.safetensors.index.json`]: FINAL_INDEX,
};
const step60 = {
  [`${P}checkpoints/r_step60/config.json`]: '{}',
  [`${P}checkpoints/r_step60/model.safetensors`]: WEIGHTS,
};

describe('downloadJob, step by step', () => {
  it('fetches the selection, leaves out what the listing shows incomplete, fixes the index naming, then skips it all', async () => {
    const fake = fakeJob(running, { TrainingJobStatus: 'InProgress' });
    const resultsDir = tempDir();
    const events: TransferEvent[] = [];
    const first = await downloadJob(fake.context, {
      job: JOB,
      resultsDir,
      checkpoints: 'all',
      onEvent: (e) => events.push(e),
    });
    const dir = path.join(resultsDir, JOB);
    expect(first).toMatchObject({
      dir,
      jobStatus: 'InProgress',
      downloaded: 6,
      skipped: 0,
      checkpointFolders: ['r_final', 'r_step20'],
      availableCheckpoints: ['step20', 'step40', 'final'],
    });
    expect(first.bytes).toBe(
      2 * WEIGHTS.length + 2 * '{}'.length + '{"step":1}\n'.length + FINAL_INDEX.length,
    );
    expect(first.warnings).toEqual([
      expect.stringMatching(
        /^r_step40: still being written or cut off \(.*model-00002-of-00002.*\): not downloaded$/,
      ),
      `${P}a/../escape.txt: not a plain relative path (empty, "." or ".." segments): not downloaded`,
    ]);
    expect(filesUnder(dir)).toEqual([
      'checkpoints/r_final/config.json',
      'checkpoints/r_final/model-00001-of-00001.safetensors',
      'checkpoints/r_final/model.safetensors.index.json',
      'checkpoints/r_step20/config.json',
      'checkpoints/r_step20/model.safetensors',
      'traces/trace.jsonl',
    ]);
    expect(first.checks.map((c) => [path.basename(c.folder), c.ok, c.fixed !== undefined])).toEqual([
      ['r_final', true, true],
      ['r_step20', true, false],
    ]);
    expect(events.filter((e) => e.type === 'note').map((e) => e.type === 'note' && e.message)).toEqual([
      expect.stringMatching(/^r_final: renamed model\.safetensors to model-00001-of-00001\.safetensors/),
    ]);
    const progress = events.filter((e) => e.type === 'progress');
    expect(progress[progress.length - 1]).toEqual({
      type: 'progress',
      bytes: first.bytes,
      totalBytes: first.bytes,
    });
    expect(fake.fetched.some((k) => k.includes('r_step40') || k.includes('escape'))).toBe(false);

    // The manifest records the rename: the next run skips every file, the renamed one included.
    fake.fetched.length = 0;
    const again = await downloadJob(fake.context, { job: JOB, resultsDir, checkpoints: 'all' });
    expect(again).toMatchObject({ downloaded: 0, skipped: 6, bytes: 0 });
    expect(fake.fetched).toEqual([]);
    expect(again.checks.every((c) => c.ok && !c.fixed)).toBe(true);
  });

  it('the default selection is the final checkpoint; a checkpoint the job does not have is a user error before any fetch', async () => {
    const fake = fakeJob(running, { TrainingJobStatus: 'InProgress' });
    const resultsDir = tempDir();
    const report = await downloadJob(fake.context, { job: JOB, resultsDir });
    expect(report.checkpointFolders).toEqual(['r_final']);
    expect(report.warnings).toHaveLength(1); // the unsafe key only: step40 is not selected

    const other = fakeJob(running, { TrainingJobStatus: 'InProgress' });
    await expect(
      downloadJob(other.context, { job: JOB, resultsDir: tempDir(), checkpoints: ['step20', 'step99'] }),
    ).rejects.toMatchObject({
      code: 'NoSuchCheckpoint',
      message: `--checkpoints: ${JOB} has no step99 (it has: step20, step40, final).`,
    });
    expect(other.fetched).toEqual([]);
  });

  it('a job that ended makes its last checkpoint complete; no job by that name is a user error', async () => {
    const stopped = fakeJob({ ...noFinal, ...step60 }, { TrainingJobStatus: 'Stopped' });
    const report = await downloadJob(stopped.context, {
      job: JOB,
      resultsDir: tempDir(),
      checkpoints: ['step60'],
    });
    expect(report.checkpointFolders).toEqual(['r_step60']);
    expect(report.warnings).toHaveLength(1);

    const inProgress = fakeJob({ ...noFinal, ...step60 }, { TrainingJobStatus: 'InProgress' });
    const writing = await downloadJob(inProgress.context, {
      job: JOB,
      resultsDir: tempDir(),
      checkpoints: ['step60'],
    });
    expect(writing.checkpointFolders).toEqual([]);
    expect(writing.warnings[0]).toMatch(
      /^r_step60: still being written or cut off \(the trainer may still be writing it\)/,
    );

    await expect(downloadJob(stopped.context, { job: 'other', resultsDir: tempDir() })).rejects.toMatchObject(
      {
        code: 'NoSuchJob',
      },
    );
  });

  it('unpacks the final artifact once (one top folder stripped) and warns when a Completed job has no checkpoints', async () => {
    const src = tempDir();
    fs.mkdirSync(path.join(src, 'model'));
    fs.writeFileSync(path.join(src, 'model', 'RESULTS.md'), '# results\n');
    fs.writeFileSync(path.join(src, 'model', 'summary.json'), '{}');
    execFileSync('tar', ['-czf', path.join(src, 'model.tar.gz'), '-C', src, 'model']);
    const artifactKey = 'out/job1/output/model.tar.gz';
    const fake = fakeJob(
      { [artifactKey]: fs.readFileSync(path.join(src, 'model.tar.gz')), [`${P}traces/trace.jsonl`]: 'x\n' },
      { TrainingJobStatus: 'Completed', ModelArtifacts: { S3ModelArtifacts: `s3://b/${artifactKey}` } },
    );
    const resultsDir = tempDir();
    const events: TransferEvent[] = [];
    const report = await downloadJob(fake.context, { job: JOB, resultsDir, onEvent: (e) => events.push(e) });
    expect(filesUnder(report.dir)).toEqual(['RESULTS.md', 'summary.json', 'traces/trace.jsonl']);
    expect(report).toMatchObject({ downloaded: 2, skipped: 0, availableCheckpoints: [] });
    expect(report.warnings).toEqual([`${JOB} has NO CHECKPOINTS in s3://b/${P} although it Completed`]);
    expect(events.slice(0, 2)).toEqual([
      { type: 'file', key: artifactKey, bytes: expect.any(Number), skipped: false },
      { type: 'note', message: 'unpacked 2 files from model.tar.gz' },
    ]);

    const again = await downloadJob(fake.context, { job: JOB, resultsDir });
    expect(again).toMatchObject({ downloaded: 0, skipped: 2 });
  });
});
