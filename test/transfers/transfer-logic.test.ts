import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { IS3 } from '../../lib/aws';
import { describeResume } from '../../lib/operate/inspect';
import { fetchObject } from '../../lib/transfers';
import { listedCheckpoints, listedCheckpointVerdict } from '../../lib/transfers/job-checkpoints';
import { matchesTag, partsTag } from '../../lib/transfers/hash';
import {
  checkpointOfKey,
  resolveRunFolders,
  resumeFromRunInfo,
  runFoldersFromListing,
  runFoldersFromRunInfo,
  TOP_RUN_FOLDER,
} from '../../lib/transfers/run-folders';
import { tempDir } from '../helpers/fixtures';

/*
 * Pure logic of the transfer code: how bytes are laid down and how content tags are compared. The
 * same code is tested against a real S3 server in results.integration.test.ts.
 */

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** An object in memory whose ranged bodies arrive in chunks of `chunk` bytes (not aligned to anything). */
function memoryS3(body: Buffer, chunk: number): IS3 {
  const etag = '"e"';
  return {
    headObject: async () => ({ key: 'k', size: body.length, etag }),
    getObjectStream: async (_b: string, _k: string, o: { start?: number; end?: number }) => {
      const range = body.subarray(o.start ?? 0, (o.end ?? body.length - 1) + 1);
      const pieces: Buffer[] = [];
      for (let at = 0; at < range.length; at += chunk) pieces.push(range.subarray(at, at + chunk));
      return Readable.from(pieces);
    },
  } as unknown as IS3;
}

describe('fetchObject lays every range down intact', () => {
  it.each([1_000_003, 65_536, 4 * 1024 * 1024 + 1])(
    'with body chunks of %i bytes crossing the 4 MiB write buffers and the 16 MiB ranges',
    async (chunk) => {
      const body = randomBytes(37 * 1024 * 1024 + 5);
      const dest = path.join(tempDir(), 'out.bin');
      const result = await fetchObject(memoryS3(body, chunk), 'b', { key: 'k', size: body.length }, dest, {
        concurrency: 3,
      });
      expect(result.bytesDownloaded).toBe(body.length);
      expect(sha256(fs.readFileSync(dest))).toBe(sha256(body));
      expect(fs.readdirSync(path.dirname(dest))).toEqual(['out.bin']);
    },
  );
});

describe('content tags', () => {
  const MiB = 1024 * 1024;
  const body = randomBytes(5 * MiB + 7);
  const file = path.join(tempDir(), 'weights.bin');
  fs.writeFileSync(file, body);
  const digestsOf = (partSize: number) => {
    const out: Buffer[] = [];
    for (let at = 0; at < body.length; at += partSize)
      out.push(
        createHash('sha256')
          .update(body.subarray(at, at + partSize))
          .digest(),
      );
    return out;
  };

  it('a parts tag is the SHA-256 of the parts’ digests and the part size', () => {
    const digests = digestsOf(2 * MiB);
    expect(partsTag(digests, 2 * MiB)).toBe(`${sha256(Buffer.concat(digests))}/${2 * MiB}`);
  });

  it('a file matches its parts tag at any part size, and its whole-file SHA-256', async () => {
    for (const partSize of [MiB, 2 * MiB, 5 * MiB + 7, 8 * MiB])
      expect(await matchesTag(file, partsTag(digestsOf(partSize), partSize))).toBe(true);
    expect(await matchesTag(file, sha256(body))).toBe(true);
  });

  it('a changed file, a tag for other parts and malformed tags do not match', async () => {
    const tag = partsTag(digestsOf(2 * MiB), 2 * MiB);
    expect(await matchesTag(file, tag.replace(/\/.*/, `/${MiB}`))).toBe(false);
    expect(await matchesTag(file, `${tag}0`)).toBe(false);
    expect(await matchesTag(file, 'not-a-hash')).toBe(false);
    expect(await matchesTag(file, sha256(body).toUpperCase())).toBe(false);
    const changed = path.join(tempDir(), 'changed.bin');
    const other = Buffer.from(body);
    other[3 * MiB] ^= 1;
    fs.writeFileSync(changed, other);
    expect(await matchesTag(changed, tag)).toBe(false);
    expect(await matchesTag(changed, sha256(body))).toBe(false);
  });

  it('an empty file has one empty part', async () => {
    const empty = path.join(tempDir(), 'empty.bin');
    fs.writeFileSync(empty, '');
    const tag = partsTag([createHash('sha256').digest()], 8 * MiB);
    expect(await matchesTag(empty, tag)).toBe(true);
  });
});

describe("a job's trainer run folders", () => {
  const A = 'gsm8k_20261123-142233';
  const B = 'gsm8k_20261124-010101';
  const resume = {
    kind: 'weights',
    from: `${A}_step40`,
    step: 40,
    note: 'weights-only resume: optimizer state and data order restart',
  };

  it('run.json names them, oldest attempt first, each once; the recorded paths are kept', () => {
    const runInfo = {
      trainerRun: { folder: B, runName: B, checkpoints: `${B}/ckpts`, traces: `${B}/traces` },
      attempts: [{ trainerRun: A }, { trainerRun: A }, { trainerRun: B, resume }],
    };
    expect(runFoldersFromRunInfo(runInfo)).toEqual([
      { folder: A, checkpoints: `${A}/checkpoints`, traces: `${A}/traces` },
      { folder: B, checkpoints: `${B}/ckpts`, traces: `${B}/traces` },
    ]);
    // Only the top-level record (an attempt that died before the folder was seen).
    expect(runFoldersFromRunInfo({ trainerRun: { folder: B }, attempts: [{ host: 'algo-1' }] })).toEqual([
      { folder: B, checkpoints: `${B}/checkpoints`, traces: `${B}/traces` },
    ]);
    expect(runFoldersFromRunInfo({ job: 'j', attempts: [{ host: 'algo-1' }] })).toEqual([]);
    expect(runFoldersFromRunInfo(undefined)).toEqual([]);
  });

  it('run.json comes from the job: a folder that would leave results/<job>/ is never followed', () => {
    const hostile = {
      trainerRun: { folder: A, traces: '../../../home/u/.ssh', checkpoints: `${A}/./x` },
      attempts: [
        { trainerRun: '../outside' },
        { trainerRun: '/etc' },
        { trainerRun: 'a\\..\\b' },
        { trainerRun: A },
      ],
    };
    // '/etc' loses its slashes and is a plain folder name; the others are dropped.
    expect(runFoldersFromRunInfo(hostile)).toEqual([
      { folder: 'etc', checkpoints: 'etc/checkpoints', traces: 'etc/traces' },
      { folder: A, checkpoints: `${A}/checkpoints`, traces: `${A}/traces` },
    ]);
  });

  it('without run.json they are found in the listing: X/run.json with checkpoints/ or traces/ beside it; else the top', () => {
    const keys = [
      'run.json',
      'config.yaml',
      `${B}/run.json`,
      `${B}/traces/trace.jsonl`,
      `${A}/run.json`,
      `${A}/checkpoints/${A}_step20/model.safetensors`,
      'evals/run.json', // no checkpoints/ or traces/ beside it
      'other/traces/trace.jsonl', // no run.json
    ];
    expect(runFoldersFromListing(keys).map((f) => f.folder)).toEqual([A, B]);
    expect(resolveRunFolders({ attempts: [] }, keys).map((f) => f.folder)).toEqual([A, B]);
    expect(resolveRunFolders(undefined, ['traces/trace.jsonl', 'checkpoints/r_step20/x'])).toEqual([
      TOP_RUN_FOLDER,
    ]);
    expect(TOP_RUN_FOLDER).toEqual({ folder: '', checkpoints: 'checkpoints', traces: 'traces' });
  });

  it('a restart is described by its note, checkpoint and step', () => {
    expect(resumeFromRunInfo({ attempts: [{}, { resume }] })).toEqual(resume);
    expect(resumeFromRunInfo({ attempts: [{}] })).toBeUndefined();
    expect(describeResume(resume)).toBe(
      `restarted: weights-only resume: optimizer state and data order restart (from ${A}_step40, step 40)`,
    );
    expect(
      describeResume({
        kind: 'weights',
        note: 'no complete checkpoint: training starts again from the base model',
      }),
    ).toBe('restarted: no complete checkpoint: training starts again from the base model');
  });

  it('checkpoint folders are recognised in any …/checkpoints/, at the top, and nowhere else', () => {
    expect(checkpointOfKey(`${A}/checkpoints/${A}_step20/model.safetensors`)).toEqual({
      path: `${A}/checkpoints/${A}_step20`,
      parent: `${A}/checkpoints`,
      folder: `${A}_step20`,
      name: 'step20',
      inner: 'model.safetensors',
    });
    expect(checkpointOfKey('checkpoints/r_final/sub/a.bin')?.name).toBe('final');
    expect(checkpointOfKey('r_step40/model.safetensors')?.path).toBe('r_step40');
    expect(checkpointOfKey(`evals/${A}_step20/results.json`)).toBeUndefined();
    expect(checkpointOfKey(`${A}/ckpts/${A}_step20/x`)).toBeUndefined();
    expect(checkpointOfKey(`${A}/ckpts/${A}_step20/x`, [`${A}/ckpts`])?.name).toBe('step20');
    expect(checkpointOfKey('checkpoints/r_step20')).toBeUndefined(); // the folder itself, no file in it
  });
});

describe('the completeness rule on a listing', () => {
  const listed = (relative: Record<string, number>) =>
    listedCheckpoints(Object.entries(relative).map(([k, size]) => ({ relative: k, size })));
  const objects = listed({
    'R/checkpoints/R_step20/model.safetensors': 100,
    'R/checkpoints/R_step20/config.json': 2,
    'R/checkpoints/R_step40/model.safetensors': 100,
    'R/checkpoints/R_step40/config.json': 2,
    'R/checkpoints/R_step60/model.safetensors.index.json': 50,
    'R/checkpoints/R_step60/model-00001-of-00002.safetensors': 100,
    'R/checkpoints/R_step80/model.safetensors': 0,
    'R/checkpoints/R_step80/config.json': 2,
    'R/traces/trace.jsonl': 10,
    'evals/R_step20/x.json': 1,
  });
  const byFolder = Object.fromEntries(objects.map((c) => [c.folder, c]));
  const siblings = objects.map((c) => c.folder);
  const verdict = (folder: string, o: Partial<Parameters<typeof listedCheckpointVerdict>[1]> = {}) =>
    listedCheckpointVerdict(byFolder[folder], { siblings, laterAttempt: false, jobEnded: false, ...o });

  it('groups the listing by checkpoint folder', () => {
    expect(siblings.sort()).toEqual(['R_step20', 'R_step40', 'R_step60', 'R_step80']);
    expect([...byFolder.R_step80.sizes]).toEqual([
      ['model.safetensors', 0],
      ['config.json', 2],
    ]);
  });

  it('weights whole: every shard the index names, none empty', () => {
    expect(
      verdict('R_step60', {
        indexed: ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'],
      }),
    ).toEqual({
      complete: false,
      why: 'model.safetensors.index.json names model-00002-of-00002.safetensors, which the folder does not have',
    });
    expect(verdict('R_step60', { indexed: 'unreadable' }).complete).toBe(false);
    // One weights file under another name than the index gives it: the local check renames it.
    const trap = listed({
      'checkpoints/r_final/model.safetensors.index.json': 50,
      'checkpoints/r_final/model.safetensors': 100,
      'checkpoints/r_final/config.json': 2,
    })[0];
    const indexed = ['model-00001-of-00001.safetensors'];
    expect(
      listedCheckpointVerdict(trap, { siblings: [], indexed, laterAttempt: false, jobEnded: false }),
    ).toEqual({
      complete: true,
    });
    expect(verdict('R_step80', { jobEnded: true })).toEqual({
      complete: false,
      why: 'model.safetensors is empty',
    });
  });

  it('writer finished: a later checkpoint beside it, a later attempt, or the job ended', () => {
    expect(verdict('R_step20')).toEqual({ complete: true }); // R_step40 is beside it
    const newest = listed({
      'R/checkpoints/R_step20/model.safetensors': 100,
      'R/checkpoints/R_step20/config.json': 2,
    })[0];
    const alone = (o: { laterAttempt?: boolean; jobEnded?: boolean }) =>
      listedCheckpointVerdict(newest, { siblings: ['R_step20'], laterAttempt: false, jobEnded: false, ...o });
    expect(alone({})).toEqual({ complete: false, why: 'the trainer may still be writing it' });
    expect(alone({ laterAttempt: true })).toEqual({ complete: true });
    expect(alone({ jobEnded: true })).toEqual({ complete: true });
    const final = listed({
      'R/checkpoints/R_final/model.safetensors': 100,
      'R/checkpoints/R_final/config.json': 2,
    })[0];
    // Whole weights without the config their export copies after them: not loadable yet.
    const noConfig = listed({ 'R/checkpoints/R_final/model.safetensors': 100 })[0];
    expect(listedCheckpointVerdict(noConfig, { siblings: [], laterAttempt: false, jobEnded: true })).toEqual({
      complete: false,
      why: 'no config.json (yet)',
    });
    expect(listedCheckpointVerdict(final, { siblings: [], laterAttempt: false, jobEnded: false })).toEqual({
      complete: true,
    });
  });
});
