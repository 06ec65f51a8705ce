import * as fs from 'node:fs';
import * as path from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { S3Layout } from '../../lib/layout';
import { runCli } from '../helpers/cli';
import { allKeys, BUCKET, clients } from '../helpers/emulator-data';
import { useEmulator } from '../helpers/emulator-suite';
import { gsm8kWith, tempDir, writeConfig } from '../helpers/fixtures';
import { passkCampaignFolder } from '../helpers/passk';
import { describeWithPeer, motoAvailable } from '../helpers/moto';
import { gsm8kColumns, saveToDisk } from '../curriculum/save-to-disk';

jest.setTimeout(120_000);

const ROWS = 50;
const MEASURED = 44;
const N = 8;
/** Prompt i solved c(i) times of N: several ties, so the row order decides among them. */
const correctOf = (i: number) => (i * 3) % (N + 1);

const campaignFolder = () =>
  passkCampaignFolder({
    shards: 2,
    prompts: MEASURED,
    n: N,
    correctOf,
    campaign: { sampling: { max_tokens: '1024' } },
  });

/**
 * `rlvr curriculum build` against the emulator: the order file from a campaign's rates, uploaded to
 * curricula/, its config lines, and `rlvr lint --curricula` (the pre-flight a submit runs) accepting the
 * config made of them; `rlvr curriculum sft` from the same folder.
 */
describeWithPeer('moto_server', motoAvailable())('rlvr curriculum build (moto)', () => {
  const emulator = useEmulator();
  const put = (key: string, body: Uint8Array | string) =>
    clients(emulator.moto.endpoint).s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
  const text = async (key: string) =>
    (
      await clients(emulator.moto.endpoint).s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))
    ).Body!.transformToString();

  it('writes the order easiest first (ties in row order), uploads it, and a config using its lines passes the pre-flight', async () => {
    const layout = new S3Layout(BUCKET);
    for (const [name, body] of Object.entries(saveToDisk(gsm8kColumns(ROWS), { rowsPerBatch: 16 })))
      await put(`${layout.datasetPrefix('gsm8k_train')}${name}`, body);
    const run = campaignFolder();
    const cwd = tempDir('rlvr-curriculum-cli-');
    const env = emulator.cliEnv({ XDG_CACHE_HOME: path.join(cwd, '.cache') });
    // The copy has prompts the campaign never reached: refused (nothing uploaded) until --missing says.
    const build = (...extra: string[]) =>
      runCli(['curriculum', 'build', '--from', run, '--name', 'pass-at-8/gsm8k_curriculum', ...extra], {
        cwd,
        env,
      });
    const refusedBuild = await build('--json');
    expect(refusedBuild.code).toBe(2);
    expect(refusedBuild.stderr).toMatch(
      new RegExp(`${ROWS - MEASURED} dataset prompts have no result: gsm8k_${MEASURED}, .*--missing drop`),
    );
    expect((await allKeys(emulator.moto.endpoint)).filter((k) => k.includes('curricula/pass-at-8/'))).toEqual(
      [],
    );
    const r = await build('--missing', 'drop', '--json');
    expect({ code: r.code, err: r.code ? r.stderr : '' }).toEqual({ code: 0, err: '' });
    const built = JSON.parse(r.stdout);
    const key = 'rlvr-experiments/curricula/pass-at-8/gsm8k_curriculum.txt';
    expect(built).toMatchObject({
      upload: 'created',
      uri: `s3://${BUCKET}/${key}`,
      ids: MEASURED,
      excluded: { noResult: ROWS - MEASURED },
      datasetIds: { prompts: ROWS },
    });
    const expected = Array.from({ length: MEASURED }, (_, i) => i)
      .sort((a, b) => correctOf(b) - correctOf(a) || a - b)
      .map((i) => `gsm8k_${i}`);
    expect(await text(key)).toBe(`${expected.join('\n')}\n`);

    // The same build again changes nothing; another order under that name is refused unless --replace.
    const again = await build('--missing', 'drop', '--json');
    expect(JSON.parse(again.stdout).upload).toBe('unchanged');
    const keys = await allKeys(emulator.moto.endpoint);
    const other = await build('--order', 'hard-first', '--missing', 'drop');
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/exists with other content.*--replace/);
    expect(await allKeys(emulator.moto.endpoint)).toEqual(keys);

    // The printed lines in a config: the pre-flight (rlvr lint --curricula) finds every id in the copy.
    const dir = tempDir('rlvr-config-');
    const config = gsm8kWith([
      'data:\n  dataset: gsm8k\n  split: train\n',
      `${built.configLines.join('\n')}\n`,
    ]);
    const lint = await runCli(
      ['lint', writeConfig(dir, 'curriculum.yaml', config), '--curricula', '--json'],
      {
        cwd,
        env,
      },
    );
    const findings = JSON.parse(lint.stdout);
    expect(JSON.stringify(findings)).toMatch(new RegExp(`${MEASURED} ids, all in gsm8k_train`));
    expect(lint.code).toBe(0);
  });

  it('sft: one correct completion per prompt below the band’s top, as their script picks it', async () => {
    const run = campaignFolder();
    const cwd = tempDir('rlvr-sft-cli-');
    const r = await runCli(['curriculum', 'sft', '--from', run, '--out', 'sft.jsonl', '--json'], { cwd });
    expect(r.code).toBe(0);
    const lines = fs
      .readFileSync(path.join(cwd, 'sft.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // pass rate < 0.5 and at least one correct: c in 1..3 of 8.
    const wanted = Array.from({ length: MEASURED }, (_, i) => i).filter(
      (i) => correctOf(i) >= 1 && correctOf(i) <= 3,
    );
    expect(lines.map((l) => l.prompt_id).sort()).toEqual(wanted.map((i) => `gsm8k_${i}`).sort());
    for (const l of lines) expect(l.completion).toBe(`#### ${l.prompt_id.split('_')[1]}`);
    expect(JSON.parse(r.stdout).skippedNoCorrect).toBe(
      Array.from({ length: MEASURED }, (_, i) => i).filter((i) => correctOf(i) === 0).length,
    );
  });
});
