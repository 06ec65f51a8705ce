import { createHash } from 'node:crypto';
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

  it('--out prints the upload commands for a name in a folder, and they put both files where the config lines say', async () => {
    const run = campaignFolder();
    const cwd = tempDir('rlvr-curriculum-out-upload-');
    const env = emulator.cliEnv({ XDG_CACHE_HOME: path.join(cwd, '.cache') });
    const built = await runCli(
      ['curriculum', 'build', '--from', run, '--name', 'pass-at-8/nested', '--out', 'nested.txt', '--json'],
      { cwd, env },
    );
    expect(built.code).toBe(0);
    const { uploadCommand, configLines } = JSON.parse(built.stdout);
    const commands = (uploadCommand as string).split(' && ').map((c) => c.split(' '));
    expect(commands).toHaveLength(2);
    for (const argv of commands) {
      expect(argv.slice(0, 3)).toEqual(['rlvr', 'upload', 'curricula']);
      const up = await runCli(argv.slice(1), { cwd, env });
      expect({ code: up.code, err: up.stderr }).toEqual({ code: 0, err: expect.any(String) });
    }
    const key = 'rlvr-experiments/curricula/pass-at-8/nested.txt';
    expect(await text(key)).toBe(fs.readFileSync(path.join(cwd, 'nested.txt'), 'utf8'));
    expect(JSON.parse(await text(`${key}.json`)).sha256).toBe(
      createHash('sha256')
        .update(fs.readFileSync(path.join(cwd, 'nested.txt')))
        .digest('hex'),
    );
    expect((configLines as string[]).join('\n')).toContain(`s3://${BUCKET}/${key}`);
    // a name that climbs out of curricula/ is refused before any request
    const climb = await runCli(['upload', 'curricula', 'nested.txt', '--name', 'a/../../x.txt'], {
      cwd,
      env,
    });
    expect(climb.code).toBe(2);
    expect(climb.stderr).toMatch(/--name a\/\.\.\/\.\.\/x\.txt: letters, digits/);
  });

  it('uploads the build record beside the order file; the pre-flight reads only the order file', async () => {
    const layout = new S3Layout(BUCKET);
    for (const [name, body] of Object.entries(saveToDisk(gsm8kColumns(ROWS), { rowsPerBatch: 16 })))
      await put(`${layout.datasetPrefix('gsm8k_train')}${name}`, body);
    const run = campaignFolder();
    const cwd = tempDir('rlvr-curriculum-record-');
    const env = emulator.cliEnv({ XDG_CACHE_HOME: path.join(cwd, '.cache') });
    const build = async (...extra: string[]) => {
      const r = await runCli(
        [
          'curriculum',
          'build',
          '--from',
          run,
          '--name',
          'rec/gsm8k',
          '--missing',
          'drop',
          '--json',
          ...extra,
        ],
        { cwd, env },
      );
      expect({ code: r.code, err: r.code ? r.stderr : '' }).toEqual({ code: 0, err: '' });
      return JSON.parse(r.stdout);
    };
    const key = 'rlvr-experiments/curricula/rec/gsm8k.txt';
    const sha256 = async (k: string) =>
      createHash('sha256')
        .update(await text(k), 'utf8')
        .digest('hex');

    // --dry-run: neither file.
    await build('--dry-run');
    expect((await allKeys(emulator.moto.endpoint)).filter((k) => k.includes('curricula/rec/'))).toEqual([]);

    const first = await build('--key', 'pass@4');
    expect(first.sidecar).toMatchObject({ at: `s3://${BUCKET}/${key}.json`, written: 'created' });
    expect(
      (await allKeys(emulator.moto.endpoint)).filter((k) => k.includes('curricula/rec/')).sort(),
    ).toEqual([key, `${key}.json`]);
    const record = JSON.parse(await text(`${key}.json`));
    expect(record).toEqual({
      version: 1,
      made: 'rlvr curriculum build',
      orderFile: 'rec/gsm8k.txt',
      sha256: await sha256(key),
      prompts: MEASURED,
      dataset: 'gsm8k',
      split: 'train',
      level: null,
      order: 'easy-first',
      key: 'pass@4',
      band: { min: null, max: null },
      outsideBand: 0,
      missing: {
        placement: 'drop',
        placed: { count: 0, first: [] },
        dropped: {
          count: ROWS - MEASURED,
          first: ['gsm8k_44', 'gsm8k_45', 'gsm8k_46', 'gsm8k_47', 'gsm8k_48', 'gsm8k_49'],
        },
      },
      gaps: { missingShards: [], badLines: [], duplicates: [] },
      pooled: 0,
      conflicts: [],
      datasetIds: { from: `s3://${BUCKET}/${layout.datasetPrefix('gsm8k_train')}`, prompts: ROWS },
      sources: [
        {
          source: expect.stringContaining(path.basename(run)),
          prompts: MEASURED,
          shardsRead: [0, 1],
          shardsExpected: 2,
          campaign: expect.objectContaining({ dataset: 'gsm8k', n: N }),
        },
      ],
    });

    // The same order again: the record of the build that made it is kept.
    expect((await build('--key', 'pass@4')).sidecar.written).toBe('kept');
    // A record of other bytes (the file replaced by hand, say) is not kept for this file.
    await put(`${key}.json`, '{"sha256": "0"}');
    expect((await build('--key', 'pass@4')).sidecar.written).toBe('replaced');
    expect(JSON.parse(await text(`${key}.json`)).sha256).toBe(await sha256(key));
    // --replace with another order: both replaced, the record says how.
    const replaced = await build(
      '--key',
      'pass@4',
      '--order',
      'band',
      '--min',
      '0.5',
      '--max',
      '1',
      '--replace',
    );
    expect([replaced.upload, replaced.sidecar.written]).toEqual(['replaced', 'replaced']);
    const again = JSON.parse(await text(`${key}.json`));
    expect(again).toMatchObject({ order: 'band', band: { min: 0.5, max: 1 }, sha256: await sha256(key) });
    expect(again.outsideBand).toBeGreaterThan(0);

    // With the record beside it in curricula/, the pre-flight checks the order file alone.
    const dir = tempDir('rlvr-config-');
    const config = gsm8kWith([
      'data:\n  dataset: gsm8k\n  split: train\n',
      `${replaced.configLines.join('\n')}\n`,
    ]);
    const lint = await runCli(
      ['lint', writeConfig(dir, 'curriculum.yaml', config), '--curricula', '--json'],
      {
        cwd,
        env,
      },
    );
    expect(lint.code).toBe(0);
    expect(JSON.stringify(JSON.parse(lint.stdout))).toMatch(
      new RegExp(`${replaced.ids} ids, all in gsm8k_train`),
    );
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
