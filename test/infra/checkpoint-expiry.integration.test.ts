import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { stringify } from 'yaml';
import { runEntrypoint } from '../../lib/container/entrypoint';
import { expiryFunctionCode } from '../../lib/infra/checkpoint-expiry';
import { S3Layout } from '../../lib/layout';
import { buildJobContract } from '../../lib/trainers';
import { profileForCommand } from '../../lib/trainers/select';
import { fakeMlRoot } from '../helpers/ml-root';
import { describeWithPeer, motoAvailable, startMoto, TEST_REGION, type MotoServer } from '../helpers/moto';
import { pythonAvailable } from '../helpers/python';
import { theirJob } from '../helpers/their-job';

jest.setTimeout(120_000);

/*
 * The checkpoint-expiry function as the stack ships it (bundled with lib/layout, as inlined), run against
 * moto S3 holding what the entrypoint really wrote: the job's /opt/ml/checkpoints tree after
 * runEntrypoint in this process, with their trainer (its own run folder) and with a trainer that writes
 * where the entrypoint tells it (RLVR_CHECKPOINT_DIR).
 */

type Expiry = { expireCheckpoints: (s3: S3Client) => Promise<{ deleted: number }> };

/** The inlined code, loaded as Lambda would load index.js (the S3 client from the runtime: here, ours). */
function bundledFunction(): Expiry {
  const module = { exports: {} as Expiry };
  new Function('require', 'module', 'exports', expiryFunctionCode())(require, module, module.exports);
  return module.exports;
}

/** A folder standing in for /opt/ml, with the config channel, contract and resource config. */
const mlRoot = (config: Record<string, unknown>, contract: unknown): string =>
  fakeMlRoot({ config: stringify(config), contract, instanceType: 'ml.g5.12xlarge' });

const baseEnv = (root: string, runName: string, command: string, extra: NodeJS.ProcessEnv = {}) => ({
  PATH: process.env.PATH,
  RLVR_CONFIG: path.join(root, 'input', 'data', 'config', 'resolved-config.yaml'),
  RLVR_RUN_NAME: runName,
  RLVR_TRAIN_GPUS: '0',
  RLVR_EVAL_GPUS: '',
  RLVR_USE_RAY: '0',
  RLVR_TRAINER_COMMAND: command,
  ...extra,
});

/** Their trainer (test/fixtures/their-repo): its own run folder, checkpoints every 2 of 6 steps. */
async function theirTrainerJob(): Promise<string> {
  const j = await theirJob({ maxSteps: 6, interval: 2 });
  const status = await runEntrypoint({
    root: j.root,
    tmpRoot: j.tmp,
    env: j.env,
    out: j.out,
    pollMs: 50,
    stableMs: 500,
  });
  expect(status).toBe(0);
  return path.join(j.root, 'checkpoints');
}

/** A trainer with no run folder of its own: `r_step<N>` and `r_final` where the entrypoint says. */
async function launcherLayoutJob(): Promise<string> {
  const write = (name: string) =>
    `mkdir -p "$RLVR_CHECKPOINT_DIR/${name}" && printf '\\002\\000\\000\\000\\000\\000\\000\\000{}' > "$RLVR_CHECKPOINT_DIR/${name}/model.safetensors" && echo {} > "$RLVR_CHECKPOINT_DIR/${name}/config.json"`;
  const contract = buildJobContract({
    profile: profileForCommand('sh train.sh {config}'),
    config: {},
    configName: 'config.yaml',
    expectCheckpoints: true,
    cachedDatasets: [],
  });
  const root = mlRoot({ run: { name: 'r' } }, contract);
  fs.mkdirSync(path.join(root, 'code'));
  fs.writeFileSync(
    path.join(root, 'code', 'train.sh'),
    [write('r_step1'), write('r_step2'), write('r_step3'), write('r_final')].join('\n') + '\n',
  );
  const env = baseEnv(root, 'r', 'sh train.sh {config}');
  expect(await runEntrypoint({ root, env, out: new PassThrough(), pollMs: 50, stableMs: 0 })).toBe(0);
  return path.join(root, 'checkpoints');
}

function filesUnder(dir: string, rel = ''): string[] {
  return fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const r = rel ? `${rel}/${e.name}` : e.name;
    return e.isDirectory() ? filesUnder(dir, r) : e.isFile() ? [r] : [];
  });
}

describeWithPeer('moto_server and python3.11', motoAvailable() && pythonAvailable())(
  'the checkpoint-expiry function',
  () => {
    let moto: MotoServer;
    let s3: S3Client;
    const bucket = 'expiry-test';
    const layout = new S3Layout(bucket);

    beforeAll(async () => {
      moto = await startMoto();
      s3 = new S3Client({
        region: TEST_REGION,
        endpoint: moto.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: 't', secretAccessKey: 't' },
      });
    });
    afterAll(async () => {
      s3?.destroy();
      await moto?.stop();
    });

    /** Uploads a job's checkpoints tree as SageMaker streams it: to `checkpoints/<job>/`. */
    async function upload(job: string, tree: string): Promise<string[]> {
      const keys = filesUnder(tree).map((f) => `${layout.checkpointsPrefix(job)}${f}`);
      for (const f of filesUnder(tree))
        await s3.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: `${layout.checkpointsPrefix(job)}${f}`,
            Body: fs.readFileSync(path.join(tree, f)),
          }),
        );
      return keys;
    }
    const listed = async () =>
      ((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? [])
        .map((o) => o.Key!)
        .sort();

    it("deletes the older step folders the entrypoint's jobs wrote, keeping _final, the newest step and everything else", async () => {
      await moto.reset();
      await s3.send(
        new CreateBucketCommand({
          Bucket: bucket,
          CreateBucketConfiguration: { LocationConstraint: TEST_REGION },
        }),
      );
      const theirs = await upload('job-theirs', await theirTrainerJob());
      const ours = await upload('job-ours', await launcherLayoutJob());
      const all = [...theirs, ...ours].sort();
      // What the jobs wrote: their trainer's run folder with its checkpoints, and ours at checkpoints/.
      expect(theirs.filter((k) => /\/job-theirs\/[^/]+\/checkpoints\/[^/]+_step2\//.test(k)).length).toBe(3);
      expect(ours.filter((k) => k.includes('/job-ours/checkpoints/r_step1/')).length).toBeGreaterThan(0);

      Object.assign(process.env, { BUCKET: bucket, CHECKPOINTS_PREFIX: layout.checkpointsRootPrefix() });
      const { expireCheckpoints } = bundledFunction();
      try {
        process.env.EXPIRY_DAYS = '1';
        expect(await expireCheckpoints(s3)).toEqual({ deleted: 0 }); // all younger than a day
        expect(await listed()).toEqual(all);
        process.env.EXPIRY_DAYS = '0';
        await new Promise((r) => setTimeout(r, 1100)); // LastModified has whole seconds
        const expected = all.filter(
          (k) =>
            !/\/job-theirs\/[^/]+\/checkpoints\/[^/]+_step[24]\//.test(k) &&
            !/\/job-ours\/checkpoints\/r_step[12]\//.test(k),
        );
        expect(await expireCheckpoints(s3)).toEqual({ deleted: all.length - expected.length });
        expect(await listed()).toEqual(expected);
        // Theirs: step2 and step4 (3 files each); ours: r_step1 and r_step2 (2 files each).
        expect(all.length - expected.length).toBe(3 * 2 + 2 * 2);
        expect(expected.filter((k) => /_step6\/|\/r_step3\/|_final\//.test(k))).toHaveLength(3 + 3 + 2 + 2);
      } finally {
        for (const v of ['BUCKET', 'CHECKPOINTS_PREFIX', 'EXPIRY_DAYS']) delete process.env[v];
      }
    });
  },
);
