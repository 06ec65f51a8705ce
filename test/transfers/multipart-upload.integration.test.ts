import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  GetObjectCommand,
  ListMultipartUploadsCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createAwsClients } from '../../lib/aws';
import { uploadFile } from '../../lib/transfers/multipart-upload';
import { BUCKET, clients } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { describeWithPeer, motoAvailable, TEST_REGION } from '../helpers/moto';
import { RecordingProxy } from '../helpers/recording-proxy';
import { tempDir } from '../helpers/fixtures';

/*
 * The transfer layer's multipart upload (lib/transfers/multipart-upload.ts) on the primitive S3 calls,
 * against a real S3 (moto), with a recording proxy to see what went over the wire.
 */

const MiB = 1024 * 1024;
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describeWithPeer('moto_server', motoAvailable())('multipart upload (moto)', () => {
  const emulator = useEmulator();
  const stored = async (key: string) => {
    const out = await clients(emulator.moto.endpoint).s3.send(
      new GetObjectCommand({ Bucket: BUCKET, Key: key }),
    );
    return Buffer.from(await out.Body!.transformToByteArray());
  };

  it('signs each part with the SHA-256 of the bytes sent, returns those digests, and stores the file whole', async () => {
    const file = path.join(tempDir(), 'weights.bin');
    const body = randomBytes(20 * MiB + 3); // three 8 MiB parts
    fs.writeFileSync(file, body);
    const proxy = new RecordingProxy(Number(new URL(emulator.moto.endpoint).port));
    await proxy.start();
    const aws = createAwsClients({ region: TEST_REGION, s3Endpoint: `http://127.0.0.1:${proxy.port}` });
    try {
      const digests = await uploadFile(aws.s3, BUCKET, 'mp/weights.bin', file, {
        partSize: 8 * MiB,
        queueSize: 2,
      });
      expect(digests).toHaveLength(3);
      const parts = proxy.requests.filter((r) => r.method === 'PUT' && /[?&]partNumber=/.test(r.url));
      expect(parts).toHaveLength(3);
      for (const part of parts) {
        const n = Number(/[?&]partNumber=(\d+)/.exec(part.url)![1]);
        expect(part.bodySha256).toBe(sha256(body.subarray((n - 1) * 8 * MiB, n * 8 * MiB)));
        expect(part.headers['x-amz-content-sha256']).toBe(part.bodySha256);
        expect(digests[n - 1].toString('hex')).toBe(part.bodySha256);
        expect(part.headers.authorization).toMatch(/SignedHeaders=[^,]*x-amz-content-sha256/);
      }
    } finally {
      aws.close();
      await proxy.stop();
    }
    expect(sha256(await stored('mp/weights.bin'))).toBe(sha256(body));
  });

  it('an empty file is one empty part', async () => {
    const file = path.join(tempDir(), 'empty.bin');
    fs.writeFileSync(file, '');
    const aws = createAwsClients({ region: TEST_REGION });
    try {
      const digests = await uploadFile(aws.s3, BUCKET, 'mp/empty.bin', file, {
        partSize: 8 * MiB,
        queueSize: 2,
      });
      expect(digests.map((d) => d.toString('hex'))).toEqual([sha256(Buffer.alloc(0))]);
    } finally {
      aws.close();
    }
    expect((await stored('mp/empty.bin')).length).toBe(0);
  });

  it('a part that fails aborts the upload: the error is the one S3 gave, and no upload stays open', async () => {
    const file = path.join(tempDir(), 'weights.bin');
    fs.writeFileSync(file, randomBytes(17 * MiB));
    const aws = createAwsClients({
      region: TEST_REGION,
      configure: (client) =>
        (client as S3Client).middlewareStack.add(
          (next, ctx) => async (args) => {
            if (
              ctx.commandName === UploadPartCommand.name &&
              (args.input as { PartNumber: number }).PartNumber === 2
            )
              throw Object.assign(new Error('AccessDenied injected by the test'), {
                name: 'AccessDenied',
                $fault: 'client',
                $metadata: { httpStatusCode: 403 },
              });
            return next(args);
          },
          { step: 'deserialize', name: 'inject-part-fault' },
        ),
    });
    try {
      await expect(
        uploadFile(aws.s3, BUCKET, 'mp/failed.bin', file, { partSize: 8 * MiB, queueSize: 3 }),
      ).rejects.toMatchObject({ name: 'AccessDenied', message: 'AccessDenied injected by the test' });
    } finally {
      aws.close();
    }
    const open = await clients(emulator.moto.endpoint).s3.send(
      new ListMultipartUploadsCommand({ Bucket: BUCKET }),
    );
    expect(open.Uploads ?? []).toEqual([]);
  });
});
