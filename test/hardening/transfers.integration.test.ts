import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { submit } from '../../lib/training/submit';
import { openJobContext } from '../../lib/aws/session';
import { downloadJob } from '../../lib/transfers';
import { PARTIAL_SUFFIX } from '../../lib/transfers/fetch-object';
import { runCli } from '../helpers/cli';
import { allKeys, BUCKET, clients, SAFETENSORS } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { makeTrainerRepo, tempDir } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable } from '../helpers/moto';
import { assertNothingCreated, filesBelow, snapshot } from '../helpers/nothing-created';

/*
 * #19, transfers: symbolic links in an upload are followed inside the folder (or its Hugging Face
 * cache repository) and refused otherwise, never silently dropped; a full disk and an object changed
 * during a download say what happened, with the partial file left safe.
 */

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** A loadable model folder (config.json, whole weights) in a fresh temporary folder: [outer, model]. */
function modelFolder(): [string, string] {
  const outer = tempDir('rlvr-links-');
  const model = path.join(outer, 'model');
  fs.mkdirSync(model);
  fs.writeFileSync(path.join(model, 'config.json'), '{}');
  fs.writeFileSync(path.join(model, 'model.safetensors'), SAFETENSORS);
  return [outer, model];
}

/** The Hugging Face cache layout: models--org--name/{blobs/<sha>, snapshots/<rev>/<file> → ../../blobs/<sha>}. */
function hfSnapshot(files: Record<string, Buffer | string>): { repo: string; snapshot: string } {
  const repo = path.join(tempDir('rlvr-hf-'), 'models--Qwen--Qwen3-0.6B');
  const snapshot = path.join(repo, 'snapshots', 'a1b2c3');
  fs.mkdirSync(path.join(repo, 'blobs'), { recursive: true });
  fs.mkdirSync(snapshot, { recursive: true });
  fs.writeFileSync(path.join(repo, 'refs-main'), 'a1b2c3');
  for (const [name, body] of Object.entries(files)) {
    const blob = sha256(Buffer.from(body));
    fs.writeFileSync(path.join(repo, 'blobs', blob), body);
    fs.mkdirSync(path.dirname(path.join(snapshot, name)), { recursive: true });
    const up = '../'.repeat(name.split('/').length + 1);
    fs.symlinkSync(`${up}blobs/${blob}`, path.join(snapshot, name));
  }
  return { repo, snapshot };
}

interface LinkRow {
  readonly input: string;
  readonly kind: string;
  /** Makes the folder (or file) to upload; returns its path. */
  readonly make: () => string;
  readonly exit: number;
  readonly message: RegExp;
}

// Each folder would be a valid upload without the offending link: before #19 the link was skipped
// silently and the upload went ahead (exit 0).
const LINK_ROWS: LinkRow[] = [
  {
    input: 'model: a file linked to outside the folder',
    kind: 'model',
    make: () => {
      const [outer, model] = modelFolder();
      fs.writeFileSync(path.join(outer, 'secret.txt'), 'x');
      fs.symlinkSync('../secret.txt', path.join(model, 'tokenizer.json'));
      return model;
    },
    exit: 2,
    message: /model: links that point outside .*model: .*tokenizer\.json → .*secret\.txt.*cp -L/,
  },
  {
    input: 'model: an absolute link to a system file',
    kind: 'model',
    make: () => {
      const [, model] = modelFolder();
      fs.symlinkSync('/etc/hostname', path.join(model, 'notes.txt'));
      return model;
    },
    exit: 2,
    message: /links that point outside .*notes\.txt → \/etc\/hostname/,
  },
  {
    input: 'model: a folder linked to outside the folder',
    kind: 'model',
    make: () => {
      const [outer, model] = modelFolder();
      fs.mkdirSync(path.join(outer, 'elsewhere'));
      fs.writeFileSync(path.join(outer, 'elsewhere', 'a.txt'), 'a');
      fs.symlinkSync('../elsewhere', path.join(model, 'extra'));
      return model;
    },
    exit: 2,
    message: /links that point outside .*extra → .*elsewhere/,
  },
  {
    input: 'model: a dangling link',
    kind: 'model',
    make: () => {
      const [, model] = modelFolder();
      fs.symlinkSync('gone.json', path.join(model, 'tokenizer.json'));
      return model;
    },
    exit: 2,
    message: /links that point nowhere \(dangling, or a loop\): .*tokenizer\.json → gone\.json/,
  },
  {
    input: 'model: two dangling links, both named',
    kind: 'model',
    make: () => {
      const [, model] = modelFolder();
      fs.mkdirSync(path.join(model, 'sub'));
      fs.symlinkSync('nope1', path.join(model, 'a.json'));
      fs.symlinkSync('nope2', path.join(model, 'sub', 'b.json'));
      return model;
    },
    exit: 2,
    message: /point nowhere.*a\.json → nope1.*sub\/b\.json → nope2/,
  },
  {
    input: 'model: a link to itself',
    kind: 'model',
    make: () => {
      const [, model] = modelFolder();
      fs.symlinkSync('loop.json', path.join(model, 'loop.json'));
      return model;
    },
    exit: 2,
    message: /point nowhere \(dangling, or a loop\): .*loop\.json → loop\.json/,
  },
  {
    input: 'model: a folder linked to its own parent (a loop)',
    kind: 'model',
    make: () => {
      const [, model] = modelFolder();
      fs.mkdirSync(path.join(model, 'sub'));
      fs.symlinkSync('..', path.join(model, 'sub', 'up'));
      return model;
    },
    exit: 2,
    message: /point nowhere \(dangling, or a loop\): .*sub\/up → \.\./,
  },
  {
    input: 'dataset: a dangling data file',
    kind: 'dataset',
    make: () => {
      const dataset = path.join(tempDir('rlvr-links-'), 'gsm8k_train');
      fs.mkdirSync(dataset);
      fs.writeFileSync(path.join(dataset, 'dataset_info.json'), '{}');
      fs.writeFileSync(path.join(dataset, 'data-00000-of-00002.arrow'), 'a');
      fs.symlinkSync('/nonexistent/data.arrow', path.join(dataset, 'data-00001-of-00002.arrow'));
      return dataset;
    },
    exit: 2,
    message: /gsm8k_train: links that point nowhere.*data-00001-of-00002\.arrow → \/nonexistent\/data\.arrow/,
  },
  {
    input: 'model: a folder laid out like a cache snapshot but not in a models--* repository',
    kind: 'model',
    make: () => {
      const root = tempDir('rlvr-links-');
      const snapshot = path.join(root, 'not-a-hub-repo', 'snapshots', 'rev');
      fs.mkdirSync(path.join(root, 'not-a-hub-repo', 'blobs'), { recursive: true });
      fs.mkdirSync(snapshot, { recursive: true });
      fs.writeFileSync(path.join(snapshot, 'config.json'), '{}');
      fs.writeFileSync(path.join(snapshot, 'model.safetensors'), SAFETENSORS);
      fs.writeFileSync(path.join(root, 'not-a-hub-repo', 'blobs', 'abc'), '{}');
      fs.symlinkSync('../../blobs/abc', path.join(snapshot, 'tokenizer.json'));
      return snapshot;
    },
    exit: 2,
    message: /links that point outside .*rev: .*tokenizer\.json → .*blobs\/abc/,
  },
  {
    input: 'model: a Hugging Face snapshot with a link out of its repository',
    kind: 'model',
    make: () => {
      const { repo, snapshot } = hfSnapshot({ 'config.json': '{}', 'model.safetensors': SAFETENSORS });
      fs.writeFileSync(path.join(path.dirname(repo), 'stray.txt'), 'x');
      fs.symlinkSync('../../../stray.txt', path.join(snapshot, 'stray.txt'));
      return snapshot;
    },
    exit: 2,
    message:
      /links that point outside .*a1b2c3 or its Hugging Face cache blobs\/ .*stray\.txt → .*stray\.txt/,
  },
  {
    input: 'curricula: one file that is a dangling link',
    kind: 'curricula',
    make: () => {
      const file = path.join(tempDir('rlvr-links-'), 'order.txt');
      fs.symlinkSync('missing-order.txt', file);
      return file;
    },
    exit: 2,
    message: /order\.txt: a link that points nowhere \(→ missing-order\.txt\)/,
  },
];

describeWithPeer('moto_server', motoAvailable())('#19 transfers (moto)', () => {
  const emulator = useEmulator();

  describe('upload: symbolic links are followed inside the folder, refused otherwise', () => {
    it.each(LINK_ROWS)('$input → exit $exit', async ({ kind, make, exit, message }) => {
      const local = make();
      const watched = path.dirname(local);
      const before = await snapshot(emulator.moto.endpoint, [watched]);
      const { code, stderr } = await runCli(['upload', kind, local], { env: emulator.cliEnv() });
      expect(stderr).toMatch(message);
      expect(stderr).toMatch(/^error: /m);
      expect(stderr).not.toMatch(/internal error|\n\s+at /);
      expect(code).toBe(exit);
      await assertNothingCreated(emulator.moto.endpoint, before);
    });

    it('a Hugging Face cache snapshot uploads whole: each link under its own name, with its blob as content', async () => {
      const { snapshot: snap } = hfSnapshot({
        'config.json': '{"model_type": "qwen3"}',
        'model.safetensors': SAFETENSORS,
        'tokenizer.json': '{"t": 1}',
        'nested/extra.txt': 'extra',
      });
      // Named as the model (models--Qwen--Qwen3-0.6B), not as the revision folder.
      const { code, stdout, stderr } = await runCli(['upload', 'model', snap], { env: emulator.cliEnv() });
      expect(stderr).not.toMatch(/^error/m);
      expect(code).toBe(0);
      expect(stdout).toMatch(/4 uploaded/);
      const prefix = 'rlvr-experiments/models/Qwen3-0.6B/';
      expect((await allKeys(emulator.moto.endpoint)).filter((k) => k.startsWith(prefix))).toEqual(
        ['config.json', 'model.safetensors', 'nested/extra.txt', 'tokenizer.json'].map((f) => prefix + f),
      );
      const stored = await clients(emulator.moto.endpoint).s3.send(
        new GetObjectCommand({ Bucket: BUCKET, Key: `${prefix}config.json` }),
      );
      expect(await stored.Body!.transformToString()).toBe('{"model_type": "qwen3"}');
    });

    it('links inside the folder (to a file, to a sub-folder) are followed', async () => {
      const [, model] = modelFolder();
      fs.mkdirSync(path.join(model, 'tok'));
      fs.writeFileSync(path.join(model, 'tok', 'tokenizer.json'), '{"t": 2}');
      fs.symlinkSync('tok/tokenizer.json', path.join(model, 'tokenizer.json'));
      fs.symlinkSync('tok', path.join(model, 'tokenizer'));
      const { code, stdout, stderr } = await runCli(['upload', 'model', model, '--name', 'linked'], {
        env: emulator.cliEnv(),
      });
      expect(stderr).not.toMatch(/^error/m);
      expect(code).toBe(0);
      expect(stdout).toMatch(/5 uploaded/);
      const prefix = 'rlvr-experiments/models/linked/';
      expect((await allKeys(emulator.moto.endpoint)).filter((k) => k.startsWith(prefix))).toEqual(
        [
          'config.json',
          'model.safetensors',
          'tok/tokenizer.json',
          'tokenizer.json',
          'tokenizer/tokenizer.json',
        ].map((f) => prefix + f),
      );
    });
  });

  describe('download: a full disk and an object changed meanwhile are said as such', () => {
    const put = (key: string, body: Buffer | string) =>
      clients(emulator.moto.endpoint).s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));

    /** A job with a final checkpoint and a 3 MiB trace. */
    async function jobWithTrace(): Promise<{ job: string; trace: Buffer; traceKey: string }> {
      const repo = makeTrainerRepo();
      const { jobName: job } = await submit(emulator.submitInput(repo.configPath));
      const ck = `rlvr-experiments/checkpoints/${job}/`;
      await put(`${ck}r_final/model.safetensors`, SAFETENSORS);
      await put(`${ck}r_final/config.json`, '{}');
      const trace = randomBytes(3 * 1024 * 1024);
      await put(`${ck}traces/trace.jsonl`, trace);
      return { job, trace, traceKey: `${ck}traces/trace.jsonl` };
    }

    it('ENOSPC (a 1 MiB tmpfs): exit 1 naming the path and the bytes needed; no file under its real name; a rerun with room resumes', async () => {
      const { job, trace } = await jobWithTrace();
      const mnt = tempDir('rlvr-enospc-');
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt]);
      } catch {
        throw new Error(`this test mounts a tmpfs (needs root): could not mount one on ${mnt}`);
      }
      try {
        const dest = path.join(mnt, job, 'traces', 'trace.jsonl');
        const full = await runCli(['download', job, '--results-dir', mnt], { env: emulator.cliEnv() });
        expect(full.stderr).toMatch(
          new RegExp(
            `No space left on the device writing ${dest.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: the file needs 3\\.0 MiB \\(3145728 bytes\\)`,
          ),
        );
        expect(full.stderr).toMatch(
          /free in .*traces.*run again: the download resumes from .*trace\.jsonl\.rlvr-partial/,
        );
        expect(full.stderr).not.toMatch(/internal error/);
        expect(full.code).toBe(1);
        // Never a truncated file under the real name: only the partial file, kept for the rerun.
        expect(fs.existsSync(dest)).toBe(false);
        expect(fs.existsSync(dest + PARTIAL_SUFFIX)).toBe(true);
        execFileSync('mount', ['-o', 'remount,size=16m', mnt]);
        const again = await runCli(['download', job, '--results-dir', mnt], { env: emulator.cliEnv() });
        expect(again.stderr).not.toMatch(/^error/m);
        expect(again.code).toBe(0);
        expect(sha256(fs.readFileSync(dest))).toBe(sha256(trace));
        expect(filesBelow(path.join(mnt, job)).filter((f) => f.includes('rlvr-partial'))).toEqual([]);
      } finally {
        execFileSync('umount', ['-l', mnt]);
      }
    });

    it('writes through no link and waits on no FIFO planted in the results folder (download, sync-traces)', async () => {
      const { job, trace, traceKey } = await jobWithTrace();
      const resultsDir = tempDir('rlvr-planted-');
      const traces = path.join(resultsDir, job, 'traces');
      fs.mkdirSync(traces, { recursive: true });
      const victim = path.join(tempDir('rlvr-victim-'), 'victim.txt');
      fs.writeFileSync(victim, 'VICTIM');
      const dest = path.join(traces, 'trace.jsonl');
      // The partial file's predictable name a link to the victim; its progress file and the download's
      // manifest FIFOs (a blocking read would wait forever).
      fs.symlinkSync(victim, dest + PARTIAL_SUFFIX);
      execFileSync('mkfifo', [
        `${dest}${PARTIAL_SUFFIX}.json`,
        path.join(resultsDir, job, '.rlvr-download.json'),
      ]);
      const download = await runCli(['download', job, '--results-dir', resultsDir], {
        env: emulator.cliEnv(),
      });
      expect(download.stderr).not.toMatch(/^error/m);
      expect(download.code).toBe(0);
      expect(fs.readFileSync(victim, 'utf8')).toBe('VICTIM');
      expect(fs.lstatSync(dest).isFile()).toBe(true);
      expect(sha256(fs.readFileSync(dest))).toBe(sha256(trace));

      // sync-traces appends what the trace gained, never through a link at the old temporary name, and
      // reads its state files only as regular files.
      const sync = () =>
        runCli(['sync-traces', job, '--results-dir', resultsDir], { env: emulator.cliEnv() });
      expect((await sync()).code).toBe(0);
      const grown = Buffer.concat([trace, randomBytes(4096)]);
      await put(traceKey, grown);
      fs.rmSync(dest + PARTIAL_SUFFIX, { force: true });
      fs.symlinkSync(victim, dest + PARTIAL_SUFFIX);
      const again = await sync();
      expect(again.stderr).not.toMatch(/^error/m);
      expect(again.code).toBe(0);
      expect(fs.readFileSync(victim, 'utf8')).toBe('VICTIM');
      expect(sha256(fs.readFileSync(dest))).toBe(sha256(grown));
      execFileSync('mkfifo', [path.join(resultsDir, job, '.rlvr-sync-folders.json.fifo')]);
      fs.renameSync(
        path.join(resultsDir, job, '.rlvr-sync-folders.json.fifo'),
        path.join(resultsDir, job, '.rlvr-sync-folders.json'),
      );
      fs.rmSync(path.join(traces, '.rlvr-sync.json'));
      execFileSync('mkfifo', [path.join(traces, '.rlvr-sync.json')]);
      const fifos = await sync();
      expect(fifos.code).toBe(0);
      expect(sha256(fs.readFileSync(dest))).toBe(sha256(grown));
    });

    it('412 (the object changed since it was listed): exit-1 failure naming the object and the ETag asked for; the old partial is removed; a rerun fetches the new version', async () => {
      const { job, traceKey } = await jobWithTrace();
      const resultsDir = tempDir('rlvr-412-');
      const context = await openJobContext({ settings: {} });
      const getObjectStream = context.aws.s3.getObjectStream.bind(context.aws.s3);
      const changed = randomBytes(3 * 1024 * 1024 + 7);
      let replaced = false;
      const signedGet = context.aws.s3.signedGet!.bind(context.aws.s3);
      // The fault's timing only: the object is replaced (a real PUT) just before the download's first GET
      // of it, on the direct sockets (its presigned URL) or through the SDK.
      const replaceOnce = async (key: string) => {
        if (key === traceKey && !replaced) {
          replaced = true;
          await put(traceKey, changed);
        }
      };
      context.aws.s3.signedGet = async (bucket, key) => {
        await replaceOnce(key);
        return signedGet(bucket, key);
      };
      context.aws.s3.getObjectStream = async (bucket, key, options) => {
        await replaceOnce(key);
        return getObjectStream(bucket, key, options);
      };
      try {
        const failure = await downloadJob(context, { job, resultsDir }).catch((err: unknown) => err);
        expect(failure).toMatchObject({ code: 'ObjectChanged', exitCode: 1 });
        expect((failure as Error).message).toMatch(
          new RegExp(
            `s3://${BUCKET}/${traceKey}\\S* changed in S3 since it was listed: the download asked for the version with ETag "?[0-9a-f]{32}"? \\(If-Match\\) and S3 answered 412 Precondition Failed\\. Run again to fetch the new version`,
          ),
        );
        const dest = path.join(resultsDir, job, 'traces', 'trace.jsonl');
        expect(fs.existsSync(dest)).toBe(false);
        expect(fs.existsSync(dest + PARTIAL_SUFFIX)).toBe(false);
        await downloadJob(context, { job, resultsDir });
        expect(sha256(fs.readFileSync(dest))).toBe(sha256(changed));
      } finally {
        context.close();
      }
    });
  });
});
