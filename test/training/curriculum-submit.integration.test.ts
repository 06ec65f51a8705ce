import * as fs from 'node:fs';
import * as path from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { runCli } from '../helpers/cli';
import { BUCKET, clients, IMAGE } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { gsm8kWith, lineOf, makeTrainerRepo, tempDir } from '../helpers/fixtures';
import { describeWithPeer, motoAvailable } from '../helpers/moto';
import { assertNothingCreated, snapshot } from '../helpers/nothing-created';
import { gsm8kColumns, saveToDisk } from '../curriculum/save-to-disk';

/*
 * The curriculum pre-flight through `rlvr submit`: the team's incident — an order file whose
 * ids the dataset does not have — is refused before anything is created; acknowledged, the job runs and
 * the acknowledgement is recorded.
 */

const ROWS = 7473; // gsm8k's train split
const ORDER_KEY = 'rlvr-experiments/curricula/gsm8k_curriculum.txt';
const ORDER_URI = `s3://${BUCKET}/${ORDER_KEY}`;

describeWithPeer('moto_server', motoAvailable())('curriculum pre-flight in a submit (moto)', () => {
  const emulator = useEmulator();
  let cache: string;
  const env = () => emulator.cliEnv({ XDG_CACHE_HOME: cache });
  const put = (key: string, body: Uint8Array | string) =>
    clients(emulator.moto.endpoint).s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));

  beforeEach(async () => {
    cache = tempDir('rlvr-cache-');
    // The seeded gsm8k_train copy becomes a real save_to_disk folder of 7,473 rows.
    for (const [name, body] of Object.entries(saveToDisk(gsm8kColumns(ROWS))))
      await put(`rlvr-experiments/datasets/gsm8k_train/${name}`, body);
  });

  function repoWithOrder(): { root: string; config: string } {
    const config = gsm8kWith(['  split: train\n', `  split: train\n  order: ${ORDER_URI}\n`]);
    const repo = makeTrainerRepo({ config });
    return { root: repo.root, config };
  }

  it('an order file whose ids are all in the dataset passes, and the plan says how they cover it', async () => {
    await put(ORDER_KEY, Array.from({ length: 4691 }, (_, i) => `gsm8k_${i}`).join('\n') + '\n');
    const { root } = repoWithOrder();
    const r = await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--dry-run'], {
      env: env(),
      cwd: root,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /curriculum: 4,691 ids, all in gsm8k_train \(7,473 prompts; 2,782 not in the curriculum\)/,
    );
  });

  it('the incident (1,960 of 4,691 ids absent) exits 2 at the order key, naming the first ids and their lines; nothing is created', async () => {
    const ids = Array.from({ length: 4691 }, (_, i) => (i < 1960 ? `gsm8k_${10000 + i}` : `gsm8k_${i}`));
    await put(ORDER_KEY, ids.join('\n') + '\n');
    const { root, config } = repoWithOrder();
    const before = await snapshot(emulator.moto.endpoint, [path.join(root, 'docs')]);
    const r = await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE], { env: env(), cwd: root });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`configs/gsm8k.yaml:${lineOf(config, `order: ${ORDER_URI}`)}:`);
    expect(r.stderr).toContain(`1,960 ids of the 4,691 in ${ORDER_URI} are not in gsm8k_train`);
    expect(r.stderr).toMatch(/line 1: gsm8k_10000, line 2: gsm8k_10001/);
    expect(r.stderr).toMatch(/--allow-missing-order-ids/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    await assertNothingCreated(emulator.moto.endpoint, before);
  });

  it.each([
    ['lists only blank lines', '\n  \n\n', /lists no prompt ids/],
    [
      'names no id the dataset has, even with the flag',
      'gsm8k_90000\ngsm8k_90001\n',
      /2 ids of the 2 .* the trainer would stop at start-up/,
    ],
  ])('an order file that %s exits 2: the job could not start', async (_what, text, message) => {
    await put(ORDER_KEY, text);
    const { root } = repoWithOrder();
    const before = await snapshot(emulator.moto.endpoint, [path.join(root, 'docs')]);
    const r = await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--allow-missing-order-ids'], {
      env: env(),
      cwd: root,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    await assertNothingCreated(emulator.moto.endpoint, before);
  });

  it('rlvr lint --curricula runs the same check without submitting; plain lint stays offline', async () => {
    await put(ORDER_KEY, ['gsm8k_1', 'gsm8k_2', 'gsm8k_20000'].join('\n') + '\n');
    const { root, config } = repoWithOrder();
    const offline = await runCli(['lint', 'configs/gsm8k.yaml'], { env: env(), cwd: root });
    expect(offline.code).toBe(0);
    const checked = await runCli(['lint', 'configs/gsm8k.yaml', '--curricula'], { env: env(), cwd: root });
    expect(checked.code).toBe(2);
    expect(checked.stdout).toContain(`configs/gsm8k.yaml:${lineOf(config, `order: ${ORDER_URI}`)}:`);
    expect(checked.stdout).toMatch(/1 id of the 3 in .* is not in gsm8k_train .*line 3: gsm8k_20000/);
  });

  it('--allow-missing-order-ids creates the job and records the acknowledgement in the job log and contract', async () => {
    const ids = [...Array.from({ length: 100 }, (_, i) => `gsm8k_${i}`), 'gsm8k_99999'];
    await put(ORDER_KEY, ids.join('\n') + '\n');
    const { root } = repoWithOrder();
    const r = await runCli(['submit', 'configs/gsm8k.yaml', '--image', IMAGE, '--allow-missing-order-ids'], {
      env: env(),
      cwd: root,
    });
    expect(r.stderr).not.toMatch(/^error/m);
    expect(r.code).toBe(0);
    const job = /Submitted (\S+)/.exec(r.stdout)![1];
    const log = fs.readFileSync(path.join(root, 'docs', 'job_log.md'), 'utf8');
    expect(log).toContain(`[allowed: 1 of 101 order ids in ${ORDER_URI} not in gsm8k_train]`);
    const contract = await clients(emulator.moto.endpoint).s3.send(
      new GetObjectCommand({ Bucket: BUCKET, Key: `rlvr-experiments/jobs/${job}/contract.json` }),
    );
    expect(JSON.parse(await contract.Body!.transformToString()).acknowledged).toEqual({
      missingOrderIds: [{ order: ORDER_URI, missing: 1, of: 101, dataset: 'gsm8k_train' }],
    });
  });
});
