import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { adapterCases } from './adapter-cases';
import { createAwsClients } from '../../lib/aws';
import { fetchObject } from '../../lib/transfers';
import { BUCKET } from '../helpers/emulator-data';
import { REPO_ROOT, tempDir } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable, TEST_REGION } from '../helpers/moto';

/*
 * `npm run build` ships lib/aws/sdk.ts as one esbuild bundle (scripts/bundle-sdk.js). Here lib/aws runs
 * on a bundle built the same way, against moto: the adapters' contracts, a presigned range download on
 * the direct sockets and an upload through lib-storage (which brings its own copy of the S3 commands).
 * The bundle itself: the same names as the source, self-contained, no `import()` left, and only the
 * commands named (the reason it starts faster).
 */

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { bundleSdk } = require('../../scripts/bundle-sdk') as { bundleSdk: (out: string) => number };
const mockBundle = path.join(tempDir(), 'sdk.js');
bundleSdk(mockBundle);
jest.mock('../../lib/aws/sdk', () => jest.requireActual(mockBundle));

describe('the SDK bundle', () => {
  const text = fs.readFileSync(mockBundle, 'utf8');

  it('exports what lib/aws/sdk.ts exports, of the same kinds', () => {
    const bundled = jest.requireActual<Record<string, unknown>>(mockBundle);
    const source = jest.requireActual<Record<string, unknown>>('../../lib/aws/sdk');
    expect(Object.keys(bundled).sort()).toEqual(Object.keys(source).sort());
    for (const name of Object.keys(source)) expect(typeof bundled[name]).toBe(typeof source[name]);
    // The mock is in force: what lib/aws loads is the bundle.
    expect(jest.requireMock<Record<string, unknown>>('../../lib/aws/sdk').S3Client).toBe(bundled.S3Client);
    expect(bundled.S3Client).not.toBe(source.S3Client);
  });

  it('is self-contained, has no import() left, and holds only the commands named', () => {
    // (Not a call inside a message, as the CRT signer's "register it by calling [require(…)]".)
    expect(text).not.toMatch(/[^[]require\(["']@(aws-sdk|smithy)\//);
    expect(text).not.toMatch(/\bimport\(/);
    for (const unused of ['ListBucketsCommand', 'DeleteTrainingJobCommand', 'PutParameterCommand'])
      expect(text).not.toContain(unused);
    expect(Buffer.byteLength(text)).toBeLessThan(3 * 1024 * 1024);
  });
});

describeWithPeer('moto_server', motoAvailable())('AWS adapters on the SDK bundle, against moto', () => {
  adapterCases();

  it('uploads through lib-storage and downloads on the presigned direct sockets, byte for byte', async () => {
    const aws = createAwsClients({ region: TEST_REGION });
    try {
      const body = randomBytes(3 * 1024 * 1024 + 17);
      await aws.s3.uploadObject(BUCKET, 'bundle/a.bin', body);
      const listed = await aws.s3.listObjects(BUCKET, 'bundle/');
      expect(listed.map((o) => [o.key, o.size])).toEqual([['bundle/a.bin', body.length]]);
      const dest = path.join(tempDir(), 'a.bin');
      const result = await fetchObject(aws.s3, BUCKET, listed[0], dest, { partSize: 1024 * 1024 });
      expect(result.bytesDownloaded).toBe(body.length);
      expect(fs.readFileSync(dest).equals(body)).toBe(true);
      const { url } = await aws.s3.signedGet!(BUCKET, 'bundle/a.bin');
      const ranged = await fetch(url, { headers: { Range: 'bytes=5-9' } });
      expect(ranged.status).toBe(206);
      expect(Buffer.from(await ranged.arrayBuffer()).equals(body.subarray(5, 10))).toBe(true);
    } finally {
      aws.close();
    }
  });
});

describe('the build', () => {
  it('ships the bundle as dist/lib/aws/sdk.js when there is a build', () => {
    const built = path.join(REPO_ROOT, 'dist', 'lib', 'aws', 'sdk.js');
    if (!fs.existsSync(built)) {
      // `npm ci` builds dist/ (the prepare script); CI must have it.
      expect(process.env.CI).not.toBe('true');
      return;
    }
    const shipped = fs.readFileSync(built, 'utf8');
    expect(shipped).not.toMatch(/require\(["']@aws-sdk\/client-s3["']\)/);
    expect(shipped).toContain('GetObjectCommand');
  });
});
