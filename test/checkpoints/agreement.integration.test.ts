import * as fs from 'node:fs';
import * as path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { CheckpointTracker, folderVerdict, localCheckpointFiles } from '../../lib/checkpoints';
import { loadTrainingConfig } from '../../lib/config';
import { planInputs } from '../../lib/training/inputs';
import { openJobContext } from '../../lib/aws';
import { runPreflight } from '../../lib/training/preflight';
import { S3Layout } from '../../lib/layout';
import { checkCheckpointFolder } from '../../lib/transfers/checkpoint-check';
import { listedCheckpoints, listedCheckpointVerdict } from '../../lib/transfers/job-checkpoints';
import { BUCKET, clients } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { gsm8kWith, safetensorsWith, tempDir, writeConfig } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable } from '../helpers/moto';

/*
 * Issue 13: "is this folder complete and loadable" is one rule (lib/checkpoints). The eval watcher's
 * tracker, the download's listing and local checks, and the pre-flight against S3 must agree on the
 * same folders.
 */
const INDEX = 'model.safetensors.index.json';
const whole = () => safetensorsWith(Buffer.alloc(4096, 3));
const FOLDERS: Record<string, Record<string, Buffer | string>> = {
  // Sharded safetensors with their index.
  run_step10: {
    'config.json': '{}',
    'model-00001-of-00002.safetensors': whole(),
    'model-00002-of-00002.safetensors': whole(),
    [INDEX]: JSON.stringify({
      weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' },
    }),
  },
  // The known trap: one file as model.safetensors, the index naming model-00001-of-00001.safetensors.
  run_step20: {
    'config.json': '{}',
    'model.safetensors': whole(),
    [INDEX]: JSON.stringify({ weight_map: { a: 'model-00001-of-00001.safetensors' } }),
  },
  // PyTorch .bin weights.
  run_step30: { 'config.json': '{}', 'pytorch_model.bin': Buffer.alloc(2048, 1) },
  // A torchtitan DCP checkpoint only.
  run_step40: { '.metadata': 'x', '__0_0.distcp': Buffer.alloc(2048, 1) },
  // A partial upload: the safetensors file shorter than its header says.
  run_step50: { 'config.json': '{}', 'model.safetensors': whole().subarray(0, 3000) },
};
const LOADABLE = ['run_step10', 'run_step30'];

function writeFolders(root: string): void {
  for (const [name, files] of Object.entries(FOLDERS)) {
    fs.mkdirSync(path.join(root, name), { recursive: true });
    for (const [f, body] of Object.entries(files)) fs.writeFileSync(path.join(root, name, f), body);
  }
}

describeWithPeer('moto_server', motoAvailable())('one completeness rule, every place', () => {
  const emulator = useEmulator();

  it('the eval watcher, download and pre-flight agree on sharded, index-mismatch, .bin, .distcp-only and partial folders', async () => {
    const root = tempDir('rlvr-agree-');
    writeFolders(root);
    const verdicts = Object.fromEntries(
      Object.keys(FOLDERS).map((n) => [n, folderVerdict(localCheckpointFiles(path.join(root, n)))]),
    );
    expect(Object.keys(verdicts).filter((n) => verdicts[n].loadable)).toEqual(LOADABLE);
    expect(verdicts.run_step20).toMatchObject({
      loadable: false,
      fix: { rename: { from: 'model.safetensors', to: 'model-00001-of-00001.safetensors' } },
    });
    expect(verdicts.run_step40).toMatchObject({ why: expect.stringMatching(/torchtitan DCP/) });
    expect(verdicts.run_step50).toMatchObject({ why: expect.stringMatching(/has 3000 of its \d+ bytes/) });

    // The eval watcher: only what loads as it is, once training has ended.
    const tracker = new CheckpointTracker(() => [root], 0);
    tracker.scan(true);
    expect(tracker.complete().map((c) => c.name)).toEqual(LOADABLE);

    // Download, local check: the same verdicts; the trap is fixed by the rename the rule names.
    const local = tempDir('rlvr-agree-dl-');
    writeFolders(local);
    const checks = Object.fromEntries(
      Object.keys(FOLDERS).map((n) => [n, checkCheckpointFolder(path.join(local, n))]),
    );
    for (const n of Object.keys(FOLDERS)) {
      const v = verdicts[n];
      if (v.loadable) expect(checks[n]).toMatchObject({ ok: true });
      else if (v.fix)
        expect(checks[n]).toMatchObject({ ok: true, fixed: expect.stringContaining(v.fix.rename.to) });
      else expect(checks[n]).toEqual({ folder: path.join(local, n), ok: false, problem: v.why });
    }

    // Download, listing rule (sizes only, job ended): it leaves out what cannot load, and fetches the trap to fix it.
    const { s3 } = clients(emulator.moto.endpoint);
    const objects: { relative: string; size: number }[] = [];
    for (const [name, files] of Object.entries(FOLDERS)) {
      for (const [f, body] of Object.entries(files)) {
        const key = `rlvr-experiments/models/${name}/${f}`;
        await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
        objects.push({ relative: `checkpoints/${name}/${f}`, size: Buffer.byteLength(body) });
      }
    }
    const listed = listedCheckpoints(objects);
    const indexOf = (name: string) => {
      const idx = FOLDERS[name][INDEX];
      return idx
        ? [...new Set(Object.values(JSON.parse(String(idx)).weight_map as Record<string, string>))]
        : undefined;
    };
    const fetched = listed
      .filter(
        (c) =>
          listedCheckpointVerdict(c, {
            siblings: [],
            indexed: indexOf(c.folder),
            laterAttempt: false,
            jobEnded: true,
          }).complete,
      )
      .map((c) => c.folder)
      .sort();
    // The partial upload passes the listing (its header is not in a listing) and fails the local check above.
    expect(fetched).toEqual(['run_step10', 'run_step20', 'run_step30', 'run_step50']);

    // Pre-flight: the same folders as the model a job would load, read from S3.
    const context = await openJobContext({ settings: {}, env: emulator.cliEnv() });
    try {
      for (const name of Object.keys(FOLDERS)) {
        const dir = tempDir('rlvr-agree-cfg-');
        const loaded = loadTrainingConfig(
          writeConfig(
            dir,
            'c.yaml',
            gsm8kWith([/Qwen\/Qwen3-1.7B-Base/g, `s3://${BUCKET}/rlvr-experiments/models/${name}`]),
          ),
        );
        const planned = planInputs(loaded.value, loaded.file, new S3Layout(BUCKET), dir, {
          loaders: loaded.trainer!.profile.loaders,
        });
        const result = await runPreflight(context.aws.s3, planned.inputs!, loaded.file);
        const v = verdicts[name];
        const modelProblems = result.problems.filter((p) => p.message.includes(`models/${name}/`));
        if (v.loadable) expect(modelProblems).toEqual([]);
        else {
          expect(modelProblems).toHaveLength(1);
          expect(modelProblems[0].message).toContain(v.why);
          if (v.fix) expect(modelProblems[0].hint).toContain(`aws s3 mv`);
        }
      }
    } finally {
      context.close();
    }
  });
});
