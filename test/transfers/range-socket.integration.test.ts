/**
 * A download reads its ranges on sockets of its own (presigned GETs, one reused buffer per connection)
 * against a real S3 server: byte for byte, over kept connections, and every range those sockets cannot
 * read — an answer other than the range, a reset, a server they cannot reach — is read through the SDK,
 * which names S3's errors as before.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createAwsClients, type IS3 } from '../../lib/aws';
import { fetchObject } from '../../lib/transfers';
import { FaultProxy } from '../helpers/fault-proxy';
import { REPO_ROOT, tempDir } from '../helpers/fixtures';
import {
  describeWithPeer,
  freePort,
  motoAvailable,
  startMoto,
  TEST_REGION,
  type MotoServer,
} from '../helpers/moto';

const BUCKET = 'ranges';
const MIB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describeWithPeer('moto_server', motoAvailable())('direct range reads against a real S3 (moto)', () => {
  let moto: MotoServer;
  let raw: S3Client;
  let proxy: FaultProxy;

  const saved = { ...process.env };
  beforeAll(async () => {
    moto = await startMoto();
    // The SDK's credential chain reads the process's environment.
    process.env.AWS_ACCESS_KEY_ID = 'testing';
    process.env.AWS_SECRET_ACCESS_KEY = 'testing';
    raw = new S3Client({
      region: TEST_REGION,
      endpoint: moto.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    await raw.send(
      new CreateBucketCommand({
        Bucket: BUCKET,
        CreateBucketConfiguration: { LocationConstraint: TEST_REGION },
      }),
    );
  });
  afterAll(async () => {
    process.env.AWS_ACCESS_KEY_ID = saved.AWS_ACCESS_KEY_ID;
    process.env.AWS_SECRET_ACCESS_KEY = saved.AWS_SECRET_ACCESS_KEY;
    if (saved.AWS_ACCESS_KEY_ID === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    if (saved.AWS_SECRET_ACCESS_KEY === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
    raw?.destroy();
    await moto?.stop();
  });
  beforeEach(async () => {
    proxy = new FaultProxy(Number(new URL(moto.endpoint).port));
    await proxy.start();
  });
  afterEach(() => proxy.stop());

  const put = (key: string, body: Buffer) =>
    raw.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
  const aws = () =>
    createAwsClients({ region: TEST_REGION, s3Endpoint: `http://127.0.0.1:${proxy.port}` }, moto.env);

  it('reads every GET of consecutive blocks on the presigned URL, and the file is the object byte for byte', async () => {
    const body = randomBytes(20 * MIB + 12345);
    await put('a/big.bin', body);
    const clients = aws();
    const dest = path.join(tempDir(), 'big.bin');
    try {
      const object = (await clients.s3.headObject(BUCKET, 'a/big.bin'))!;
      const result = await fetchObject(clients.s3, BUCKET, object, dest, { partSize: MIB, concurrency: 4 });
      expect(result.bytesDownloaded).toBe(body.length);
      expect(sha(fs.readFileSync(dest))).toBe(sha(body));
      // 21 blocks as 4 GETs (6 consecutive blocks each, for 4 connections), each on the presigned URL;
      // moto closes every connection after its answer (Connection: close), so each GET has its own (the
      // s3rver suite below shows them kept).
      expect(proxy.presignedGets).toBe(4);
      expect(proxy.requests.get).toBe(4);
      expect(fs.readdirSync(path.dirname(dest))).toEqual(['big.bin']);
    } finally {
      clients.close();
    }
  });

  it('a GET cut off mid-body keeps its whole blocks; the SDK reads the rest again, and the file is whole', async () => {
    const body = randomBytes(16 * MIB);
    await put('a/cut.bin', body);
    const clients = aws();
    const sdkRanges: string[] = [];
    const s3: IS3 = Object.assign(Object.create(clients.s3) as IS3, {
      getObjectStream: (bucket: string, key: string, o: { start?: number; end?: number }) => {
        sdkRanges.push(`${o.start}-${o.end}`);
        return clients.s3.getObjectStream(bucket, key, o);
      },
    });
    const dest = path.join(tempDir(), 'cut.bin');
    try {
      const object = (await clients.s3.headObject(BUCKET, 'a/cut.bin'))!;
      // One GET for the eight 2 MiB blocks, cut in the seventh (as the proxy counts: the client has
      // somewhat less, what the sockets' buffers held).
      proxy.resetOnceAfter(13 * MIB + 777);
      const result = await fetchObject(s3, BUCKET, object, dest, { partSize: 2 * MIB, concurrency: 1 });
      expect(proxy.resets).toBe(1);
      expect(sha(fs.readFileSync(dest))).toBe(sha(body));
      // One GET on the socket; the SDK (a signed request, not presigned) from the first block not
      // whole on: a block boundary past the start, and no further than the cut.
      expect(proxy.presignedGets).toBe(1);
      expect(proxy.requests.get).toBe(2);
      expect(sdkRanges).toHaveLength(1);
      const [from, to] = sdkRanges[0].split('-').map(Number);
      expect(to).toBe(16 * MIB - 1);
      expect(from % (2 * MIB)).toBe(0);
      expect(from).toBeGreaterThan(0);
      expect(from).toBeLessThanOrEqual(12 * MIB);
      expect(result.bytesDownloaded).toBe(body.length);
    } finally {
      clients.close();
    }
  });

  it('an object changed since it was listed: the 412 goes to the SDK, which says so, and the partial file goes', async () => {
    await put('a/changing.bin', randomBytes(3 * MIB));
    const clients = aws();
    const dest = path.join(tempDir(), 'changing.bin');
    try {
      const listed = (await clients.s3.headObject(BUCKET, 'a/changing.bin'))!;
      await put('a/changing.bin', randomBytes(3 * MIB));
      await expect(
        fetchObject(clients.s3, BUCKET, listed, dest, { partSize: MIB, concurrency: 1 }),
      ).rejects.toThrow(/changed in S3 since it was listed: .*If-Match.*412 Precondition Failed/);
      expect(proxy.presignedGets).toBeGreaterThanOrEqual(1);
      expect(proxy.requests.get).toBeGreaterThan(proxy.presignedGets);
      expect(fs.readdirSync(path.dirname(dest))).toEqual([]);
    } finally {
      clients.close();
    }
  });

  it('a server the sockets cannot reach: the first range finds out, every range goes through the SDK', async () => {
    const body = randomBytes(6 * MIB);
    await put('a/elsewhere.bin', body);
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const clients = aws();
    // The presigned URL points where nothing listens: as a proxy or a TLS setup the sockets do not share.
    const s3: IS3 = Object.assign(Object.create(clients.s3) as IS3, {
      signedGet: async (bucket: string, key: string) => {
        const { url } = await clients.s3.signedGet!(bucket, key);
        const u = new URL(url);
        u.port = String(deadPort);
        return { url: u.toString() };
      },
    });
    const dest = path.join(tempDir(), 'elsewhere.bin');
    try {
      const object = (await clients.s3.headObject(BUCKET, 'a/elsewhere.bin'))!;
      await fetchObject(s3, BUCKET, object, dest, { partSize: MIB, concurrency: 2 });
      expect(sha(fs.readFileSync(dest))).toBe(sha(body));
      // Six blocks as two GETs (two connections), both through the SDK.
      expect(proxy.presignedGets).toBe(0);
      expect(proxy.requests.get).toBe(2);
    } finally {
      clients.close();
    }
  });
});

describe('direct range reads against s3rver, which keeps connections open', () => {
  let server: ChildProcess;
  let endpoint: string;
  let proxy: FaultProxy;
  const saved = { ...process.env };

  beforeAll(async () => {
    const port = await freePort();
    const dir = tempDir();
    server = spawn(
      process.execPath,
      [
        path.join(REPO_ROOT, 'node_modules/s3rver/bin/s3rver.js'),
        '-d',
        dir,
        '-a',
        '127.0.0.1',
        '-p',
        String(port),
        '--configure-bucket',
        BUCKET,
      ],
      { stdio: 'ignore' },
    );
    endpoint = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      if (
        await fetch(`${endpoint}/${BUCKET}`).then(
          () => true,
          () => false,
        )
      )
        break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // s3rver accepts only its own key.
    process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
    process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
    proxy = new FaultProxy(port);
    await proxy.start();
  });
  afterAll(async () => {
    for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] as const)
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    await proxy?.stop();
    server?.kill();
  });

  it('keeps each socket from GET to GET: as many connections as GETs in flight', async () => {
    const body = randomBytes(12 * MIB + 5);
    const raw = new S3Client({
      region: TEST_REGION,
      endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    await raw.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'k/big.bin', Body: body }));
    raw.destroy();
    const clients = createAwsClients({ region: TEST_REGION, s3Endpoint: `http://127.0.0.1:${proxy.port}` });
    const dest = path.join(tempDir(), 'big.bin');
    try {
      const object = (await clients.s3.headObject(BUCKET, 'k/big.bin'))!;
      const before = proxy.connections;
      // 13 blocks, two to a GET: 7 GETs over 3 connections.
      await fetchObject(clients.s3, BUCKET, object, dest, {
        partSize: MIB,
        concurrency: 3,
        maxGetBytes: 2 * MIB,
      });
      expect(sha(fs.readFileSync(dest))).toBe(sha(body));
      expect(proxy.presignedGets).toBe(7);
      expect(proxy.connections - before).toBe(3);
    } finally {
      clients.close();
    }
  });
});
