import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pack } from 'tar-stream';
import { gzipSync } from 'node:zlib';
import {
  GetObjectCommand,
  GetObjectTaggingCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createAwsClients, openJobContext } from '../../lib/aws';
import { submit } from '../../lib/training/submit';
import { jobStatus } from '../../lib/operate';
import { fetchObject, syncTraces, uploadPath } from '../../lib/transfers';
import { OVERLAP } from '../../lib/transfers/sync-traces';
import { partSizeFor } from '../../lib/transfers/upload';
import { uploadFile } from '../../lib/transfers/multipart-upload';
import { runCli, runCommand } from '../helpers/cli';
import { BUCKET, clients } from '../helpers/emulator-data';
import { FaultProxy } from '../helpers/fault-proxy';
import { RecordingProxy } from '../helpers/recording-proxy';
import { makeTrainerRepo, REPO_ROOT, safetensorsWith, tempDir } from '../helpers/fixtures';
import { useEmulator } from '../helpers/emulator-suite';
import { loopbackCertificate } from '../helpers/tls-cert';
import { describeWithPeer, motoAvailable, TEST_REGION } from '../helpers/moto';

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const fileSha = (file: string) => sha256(fs.readFileSync(file));

/** A real safetensors file: 8-byte LE header length, the JSON header, then 2·n bytes of F16 data (cut to `keep` bytes). */
function safetensors(n: number, keep?: number): Buffer {
  const header = Buffer.from(JSON.stringify({ w: { dtype: 'F16', shape: [n], data_offsets: [0, 2 * n] } }));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(header.length));
  const whole = Buffer.concat([length, header, randomBytes(2 * n)]);
  return keep === undefined ? whole : whole.subarray(0, keep);
}

async function tarGz(files: Record<string, string>): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((r) => p.on('end', () => r()));
  for (const [name, body] of Object.entries(files)) p.entry({ name }, body);
  p.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

describeWithPeer('moto_server', motoAvailable())('results and data against a real S3 (moto)', () => {
  const emulator = useEmulator();
  const cliEnv = () => emulator.cliEnv();
  let s3: S3Client;
  let moto: { endpoint: string };
  beforeAll(() => {
    moto = emulator.moto;
    s3 = clients(moto.endpoint).s3;
  });
  const put = (key: string, body: Buffer | string) =>
    s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));

  async function jobWithResults(): Promise<{ job: string; repo: string; weights: Buffer }> {
    const repo = makeTrainerRepo();
    const { jobName: job } = await submit(emulator.submitInput(repo.configPath));
    const ck = `rlvr-experiments/checkpoints/${job}/`;
    const weights = safetensors(1536 * 1024 + 9); // 3 MiB and a bit; whole, as its header says
    await put(`${ck}config.yaml`, 'run: {name: r}\n');
    await put(`${ck}traces/trace.jsonl`, '{"step": 1}\n');
    // The entrypoint's run folder keeps checkpoints in checkpoints/; a trainer that wrote them at the
    // top of the run folder is handled the same way.
    for (const step of ['checkpoints/r_step20', 'r_step40']) {
      await put(`${ck}${step}/model.safetensors`, weights);
      await put(`${ck}${step}/config.json`, '{}');
    }
    // The known trap: one file saved as model.safetensors, the index naming another.
    await put(`${ck}r_final/model.safetensors`, weights);
    await put(`${ck}r_final/config.json`, '{}');
    await put(
      `${ck}r_final/model.safetensors.index.json`,
      JSON.stringify({ weight_map: { a: 'model-00001-of-00001.safetensors' } }),
    );
    await put(
      `rlvr-experiments/output/${job}/output/model.tar.gz`,
      await tarGz({
        'r/run.json': '{"job": 1}',
        'r/RESULTS.md': '# notes\n',
        'r/last_checkpoint.txt': 'r_final\n',
      }),
    );
    return { job, repo: repo.root, weights };
  }

  it('download flattens the artifact, fetches final + traces by default, fixes the index naming, and skips complete files', async () => {
    const { job, weights } = await jobWithResults();
    const out = tempDir();
    const first = await runCli(['download', job, '--results-dir', out], { env: cliEnv() });
    expect(first.stderr).not.toMatch(/^error/m);
    expect(first.code).toBe(0);
    const dir = path.join(out, job);
    const files = (d: string): string[] =>
      fs
        .readdirSync(d, { withFileTypes: true })
        .flatMap((e) =>
          e.isDirectory() ? files(path.join(d, e.name)).map((f) => `${e.name}/${f}`) : [e.name],
        );
    expect(
      files(dir)
        .filter((f) => !f.startsWith('.rlvr'))
        .sort(),
    ).toEqual([
      'RESULTS.md',
      'checkpoints/r_final/config.json',
      'checkpoints/r_final/model-00001-of-00001.safetensors',
      'checkpoints/r_final/model.safetensors.index.json',
      'config.yaml',
      'last_checkpoint.txt',
      'run.json',
      'traces/trace.jsonl',
    ]);
    expect(first.stderr).toMatch(
      /note: r_final: renamed model\.safetensors to model-00001-of-00001\.safetensors/,
    );
    expect(fileSha(path.join(dir, 'checkpoints/r_final/model-00001-of-00001.safetensors'))).toBe(
      sha256(weights),
    );
    expect(first.stdout).toMatch(/checkpoints here: r_final; in S3: step20, step40, final/);

    // A repeat with nothing changed reads the index of the indexed checkpoint from its local copy:
    // no GET at all (the listing and the job's artifact HEAD only).
    const proxy = new FaultProxy(Number(new URL(moto.endpoint).port));
    await proxy.start();
    try {
      const repeat = await runCli(['download', job, '--results-dir', out], {
        env: emulator.cliEnv({ AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${proxy.port}` }),
      });
      expect(repeat.code).toBe(0);
      expect(repeat.stdout).toMatch(/0 downloaded .* 6 already complete/);
      expect(proxy.requests.list).toBeGreaterThan(0); // it went through the proxy
      expect(proxy.requests.get).toBe(0);
    } finally {
      await proxy.stop();
    }

    const again = await runCli(['download', job, '--results-dir', out, '--checkpoints', 'step20'], {
      env: cliEnv(),
    });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/2 downloaded .* 3 already complete/); // artifact, config, trace
    expect(fs.existsSync(path.join(dir, 'checkpoints/r_step20/model.safetensors'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'checkpoints/r_step40'))).toBe(false);
    // --fsync: the same files, each flushed to disk before it is renamed.
    const all = await runCli(['download', job, '--results-dir', out, '--checkpoints', 'all', '--fsync'], {
      env: cliEnv(),
    });
    expect(all.stdout).toMatch(/2 downloaded .* 8 already complete/); // step40 only; the renamed final stays done
    expect(all.stderr).not.toMatch(/renamed/);
    expect(fileSha(path.join(dir, 'checkpoints/r_step40/model.safetensors'))).toBe(sha256(weights));

    const bad = await runCli(['download', job, '--results-dir', out, '--checkpoints', 'step99'], {
      env: cliEnv(),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/has no step99 \(it has: step20, step40, final\)/);
  });

  it('the scripts are thin wrappers: arguments, output and exit codes pass through, from any folder', async () => {
    const { job, weights } = await jobWithResults();
    const out = tempDir();
    const elsewhere = tempDir();
    const script = (name: string) => path.join(REPO_ROOT, 'scripts', name);
    const download = await runCommand(
      'bash',
      [script('download-job-results.sh'), job, '--results-dir', out, '--checkpoints', 'step20', '--json'],
      { env: cliEnv(), cwd: elsewhere },
    );
    expect(download.code).toBe(0);
    expect(JSON.parse(download.stdout).checkpointFolders).toEqual(['r_step20']);
    expect(fileSha(path.join(out, job, 'checkpoints/r_step20/model.safetensors'))).toBe(sha256(weights));
    const traces = await runCommand('bash', [script('sync-traces.sh'), job, '--results-dir', out], {
      env: cliEnv(),
      cwd: elsewhere,
    });
    expect(traces.code).toBe(0);
    expect(fs.readFileSync(path.join(out, job, 'traces/trace.jsonl'), 'utf8')).toBe('{"step": 1}\n');
    const bad = await runCommand(
      'bash',
      [script('download-job-results.sh'), job, '--checkpoints', 'step99'],
      {
        env: cliEnv(),
        cwd: elsewhere,
      },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/has no step99/);
  });

  it('says loudly when a Completed job has no checkpoints (exit 1)', async () => {
    const repo = makeTrainerRepo();
    const { jobName } = await submit(emulator.submitInput(repo.configPath));
    const { code, stdout } = await runCli(['download', jobName, '--results-dir', tempDir()], {
      env: cliEnv(),
    });
    expect(code).toBe(1);
    expect(stdout).toMatch(/!! annotations-adhoc-\S+ has NO CHECKPOINTS in s3:\/\/.* although it Completed/);
  });

  it('resumes after a connection reset mid-object, fetching only what is missing, and ends equal to the source', async () => {
    const body = randomBytes(24 * 1024 * 1024);
    await put('rlvr-experiments/checkpoints/j/big.bin', body);
    const proxy = new FaultProxy(Number(new URL(moto.endpoint).port));
    await proxy.start();
    const aws = createAwsClients({ region: TEST_REGION, s3Endpoint: `http://127.0.0.1:${proxy.port}` });
    const dest = path.join(tempDir(), 'big.bin');
    try {
      const object = (await aws.s3.headObject(BUCKET, 'rlvr-experiments/checkpoints/j/big.bin'))!;
      proxy.resetAfter(13 * 1024 * 1024);
      await expect(
        fetchObject(aws.s3, BUCKET, object, dest, { partSize: 2 * 1024 * 1024, concurrency: 2 }),
      ).rejects.toThrow();
      expect(proxy.resets).toBeGreaterThan(0);
      expect(fs.existsSync(dest)).toBe(false); // never a partial file under the real name
      proxy.heal();
      const resumed = await fetchObject(aws.s3, BUCKET, object, dest, {
        partSize: 2 * 1024 * 1024,
        concurrency: 2,
      });
      expect(resumed.resumed).toBe(true);
      expect(resumed.bytesDownloaded).toBeLessThanOrEqual(body.length - 8 * 1024 * 1024);
      expect(fileSha(dest)).toBe(sha256(body));
      expect(fs.readdirSync(path.dirname(dest))).toEqual(['big.bin']);
    } finally {
      aws.close();
      await proxy.stop();
    }
  });

  it('download over TLS, as from S3: every object on the direct sockets, none through the SDK, byte for byte', async () => {
    const { job, weights } = await jobWithResults();
    const { key, cert, certFile } = loopbackCertificate();
    const proxy = new FaultProxy(Number(new URL(moto.endpoint).port), { key, cert });
    await proxy.start();
    const out = tempDir();
    try {
      // The process trusts the endpoint's certificate as it would a private CA's (the SDK and the
      // sockets alike); nothing else about it is special.
      const result = await runCli(['download', job, '--results-dir', out, '--json'], {
        env: emulator.cliEnv({
          AWS_ENDPOINT_URL_S3: `https://127.0.0.1:${proxy.port}`,
          NODE_EXTRA_CA_CERTS: certFile,
        }),
      });
      expect(result.code).toBe(0);
      const dir = path.join(out, job);
      expect(fileSha(path.join(dir, 'checkpoints/r_final/model-00001-of-00001.safetensors'))).toBe(
        sha256(weights),
      );
      const at = (f: string) => `/${BUCKET}/rlvr-experiments/checkpoints/${job}/${f}`;
      const gets = proxy.gets.filter((g) => g.path.includes('/checkpoints/'));
      // Every file came on the direct sockets (a presigned GET each); the SDK read only the index, for
      // the checkpoint rule before the download.
      expect(
        gets
          .filter((g) => g.presigned)
          .map((g) => g.path)
          .sort(),
      ).toEqual(
        [
          'config.yaml',
          'r_final/config.json',
          'r_final/model.safetensors',
          'r_final/model.safetensors.index.json',
          'traces/trace.jsonl',
        ].map(at),
      );
      expect(gets.filter((g) => !g.presigned).map((g) => g.path)).toEqual([
        at('r_final/model.safetensors.index.json'),
      ]);
    } finally {
      await proxy.stop();
    }
  });

  it('sync-traces: growth fetches only the tail, no change costs one listing and no body, shrink and rewrite fetch whole', async () => {
    const repo = makeTrainerRepo();
    const { jobName: job } = await submit(emulator.submitInput(repo.configPath));
    const key = `rlvr-experiments/checkpoints/${job}/traces/trace.jsonl`;
    const line = (i: number) => `${JSON.stringify({ step: i, reward: i / 10, text: 'y'.repeat(200) })}\n`;
    let content = Array.from({ length: 2000 }, (_, i) => line(i)).join('');
    await put(key, content);
    const out = tempDir();
    const local = path.join(out, job, 'traces', 'trace.jsonl');
    const context = await openJobContext({ settings: {} });
    const poll = async () => (await syncTraces(context, { target: job, resultsDir: out })).stats;
    const remote = async () =>
      sha256(
        Buffer.from(
          await (
            await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))
          ).Body!.transformToByteArray(),
        ),
      );
    try {
      await poll();
      expect(fileSha(local)).toBe(await remote());

      const unchanged = await poll();
      expect(unchanged).toMatchObject({ listRequests: 1, getRequests: 0, bodyBytes: 0 });

      const growth = Array.from({ length: 100 }, (_, i) => line(2000 + i)).join('');
      content += growth;
      await put(key, content);
      const grown = await poll();
      expect(grown.getRequests).toBe(1);
      expect(grown.bodyBytes).toBeLessThanOrEqual(Buffer.byteLength(growth) + OVERLAP);
      expect(fileSha(local)).toBe(await remote());

      content = content.slice(0, 5000);
      await put(key, content); // shrank
      const shrunk = await poll();
      expect(shrunk.bodyBytes).toBe(5000);
      expect(fileSha(local)).toBe(await remote());

      content = `X${content.slice(1)}${line(9999)}`; // rewritten and longer: the overlap check must catch it
      await put(key, content);
      await poll();
      expect(fileSha(local)).toBe(await remote());
      expect(fs.readdirSync(path.dirname(local)).filter((f) => !f.startsWith('.rlvr-sync'))).toEqual([
        'trace.jsonl',
      ]);
    } finally {
      context.close();
    }
  });

  /**
   * A restarted job whose trainer makes its own run folder: attempt 1 wrote step20 and step40 in A,
   * attempt 2 (weights-only resume from step40) wrote step60 (cut off: shorter than its header says)
   * and final in B. Our run.json at the top names both.
   */
  const A = 'gsm8k_20261123-142233';
  const B = 'gsm8k_20261124-010101';
  const RESUME = {
    kind: 'weights',
    from: `${A}_step40`,
    step: 40,
    note: 'weights-only resume: optimizer state and data order restart',
  };
  const traceLines = (from: number, to: number) =>
    Array.from(
      { length: to - from + 1 },
      (_, i) => `${JSON.stringify({ step: from + i, reward: (from + i) / 100 })}\n`,
    ).join('');
  const trainerRun = (folder: string) => ({
    folder,
    runName: folder,
    checkpoints: `${folder}/checkpoints`,
    traces: `${folder}/traces`,
  });
  const runJson = (folders: string[]) =>
    JSON.stringify({
      job: 'j',
      trainer: 'grpo-sft',
      trainerRun: trainerRun(folders[folders.length - 1]),
      attempts: folders.map((f, i) => ({
        startedAt: `2026-11-2${3 + i}T00:00:00Z`,
        host: 'algo-1',
        trainerRun: f,
        ...(i > 0 ? { resume: RESUME } : {}),
      })),
      resume: RESUME,
    });

  async function restartedJob(): Promise<{ job: string; ck: string; weights: Record<string, Buffer> }> {
    const repo = makeTrainerRepo();
    const { jobName: job } = await submit(emulator.submitInput(repo.configPath));
    const ck = `rlvr-experiments/checkpoints/${job}/`;
    await put(`${ck}run.json`, runJson([A, B]));
    await put(`${ck}config.yaml`, 'run: {name: gsm8k}\n');
    const weights: Record<string, Buffer> = {
      [`${A}_step20`]: safetensors(4096),
      [`${A}_step40`]: safetensors(4096),
      [`${B}_step60`]: safetensors(4096, 5000), // half-written: the header says 8 + header + 8192
      [`${B}_final`]: safetensors(4096),
    };
    for (const folder of [A, B]) {
      await put(`${ck}${folder}/run.json`, JSON.stringify({ run_name: folder }));
      await put(`${ck}${folder}/config.yaml`, 'x: 1\n');
      await put(`${ck}${folder}/traces/trace.jsonl`, folder === A ? traceLines(1, 40) : traceLines(41, 60));
      await put(`${ck}${folder}/traces/samples.jsonl`, '{"s": 1}\n');
    }
    for (const [name, body] of Object.entries(weights)) {
      const folder = name.startsWith(A) ? A : B;
      await put(`${ck}${folder}/checkpoints/${name}/model.safetensors`, body);
      await put(`${ck}${folder}/checkpoints/${name}/config.json`, '{}');
    }
    return { job, ck, weights };
  }

  const listFiles = (d: string): string[] =>
    fs
      .readdirSync(d, { withFileTypes: true })
      .flatMap((e) =>
        e.isDirectory() ? listFiles(path.join(d, e.name)).map((f) => `${e.name}/${f}`) : [e.name],
      )
      .filter((f) => !f.split('/').some((part) => part.startsWith('.rlvr')))
      .sort();

  it("status counts every attempt's checkpoints, reads the newest run folder's trace and says how it restarted", async () => {
    const { job, ck } = await restartedJob();
    const context = await openJobContext({ settings: {} });
    try {
      const report = await jobStatus(context, job);
      expect(report.checkpoints).toMatchObject({
        steps: [20, 40, 60],
        latestStep: 60,
        final: true,
        count: 4,
        traceKey: `${ck}${B}/traces/trace.jsonl`,
        runFolders: [A, B],
        resume: { kind: 'weights', from: `${A}_step40`, step: 40, note: RESUME.note },
      });
      expect(report.trace).toMatchObject({ step: 60, reward: 0.6 });
      expect(report.problem).toBeUndefined();
    } finally {
      context.close();
    }
    const cli = await runCli(['status', job], { env: cliEnv() });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/checkpoints: 4 in s3:\/\/.*, latest step 60, final present\n/);
    expect(cli.stdout).toContain(
      `  restarted: weights-only resume: optimizer state and data order restart (from ${A}_step40, step 40)\n`,
    );
    expect(cli.stdout).toMatch(/trace: step 60, reward 0\.6/);
  });

  it("download mirrors the trainer's run folders: final fetches only the final, all leaves out what the listing shows incomplete and checks safetensors sizes", async () => {
    const { job, ck, weights } = await restartedJob();
    const out = tempDir();
    const dir = path.join(out, job);
    const final = await runCli(['download', job, '--results-dir', out, '--checkpoints', 'final', '--json'], {
      env: cliEnv(),
    });
    expect(final.code).toBe(0);
    const finalReport = JSON.parse(final.stdout);
    expect(finalReport.availableCheckpoints).toEqual(['step20', 'step40', 'step60', 'final']);
    expect(finalReport.checkpointFolders).toEqual([`${B}/checkpoints/${B}_final`]);
    expect(finalReport.warnings).toEqual([]);
    expect(listFiles(dir)).toEqual([
      'config.yaml',
      `${A}/config.yaml`,
      `${A}/run.json`,
      `${A}/traces/samples.jsonl`,
      `${A}/traces/trace.jsonl`,
      `${B}/checkpoints/${B}_final/config.json`,
      `${B}/checkpoints/${B}_final/model.safetensors`,
      `${B}/config.yaml`,
      `${B}/run.json`,
      `${B}/traces/samples.jsonl`,
      `${B}/traces/trace.jsonl`,
      'run.json',
    ]);
    expect(fileSha(path.join(dir, `${B}/checkpoints/${B}_final/model.safetensors`))).toBe(
      sha256(weights[`${B}_final`]),
    );

    // A folder whose index names a shard that is not there: the listing rule leaves it out.
    await put(
      `${ck}${B}/checkpoints/${B}_step80/model.safetensors.index.json`,
      JSON.stringify({ weight_map: { w: 'model-00001-of-00001.safetensors' } }),
    );
    const all = await runCli(['download', job, '--results-dir', out, '--checkpoints', 'all', '--json'], {
      env: cliEnv(),
    });
    expect(all.code).toBe(1); // B_step60 is not whole
    const report = JSON.parse(all.stdout);
    const whole = weights[`${B}_final`].length;
    expect(report.warnings).toEqual([
      `${B}_step80: still being written or cut off (model.safetensors.index.json names model-00001-of-00001.safetensors, which the folder does not have): not downloaded`,
      `${B}_step60 is not loadable: model.safetensors has 5000 of its ${whole} bytes`,
    ]);
    expect(report.checkpointFolders).toEqual([
      `${A}/checkpoints/${A}_step20`,
      `${A}/checkpoints/${A}_step40`,
      `${B}/checkpoints/${B}_final`,
      `${B}/checkpoints/${B}_step60`,
    ]);
    const verdicts = Object.fromEntries(
      report.checks.map((c: { folder: string; ok: boolean; problem?: string }) => [
        path.basename(c.folder),
        c.problem ?? c.ok,
      ]),
    );
    expect(verdicts).toEqual({
      [`${A}_step20`]: true,
      [`${A}_step40`]: true,
      [`${B}_final`]: true,
      [`${B}_step60`]: `model.safetensors has 5000 of its ${whole} bytes`,
    });
    expect(fs.existsSync(path.join(dir, `${B}/checkpoints/${B}_step80`))).toBe(false);
    for (const name of [`${A}_step20`, `${A}_step40`]) {
      expect(fileSha(path.join(dir, `${A}/checkpoints/${name}/model.safetensors`))).toBe(
        sha256(weights[name]),
      );
    }
    // Nothing went to the old layout's top-level checkpoints/.
    expect(fs.existsSync(path.join(dir, 'checkpoints'))).toBe(false);
  });

  it("sync-traces keeps every run folder's traces: one listing when nothing changed, run.json read again after a restart", async () => {
    const { job, ck } = await restartedJob();
    const out = tempDir();
    const dir = path.join(out, job);
    const context = await openJobContext({ settings: {} });
    const poll = async () => (await syncTraces(context, { target: job, resultsDir: out })).stats;
    try {
      const first = await poll();
      // run.json (it names the folders), then each folder's trace.jsonl and samples.jsonl.
      expect(first).toMatchObject({ listRequests: 1, getRequests: 5 });
      expect(fs.readFileSync(path.join(dir, `${A}/traces/trace.jsonl`), 'utf8')).toBe(traceLines(1, 40));
      expect(fs.readFileSync(path.join(dir, `${B}/traces/trace.jsonl`), 'utf8')).toBe(traceLines(41, 60));
      expect(fs.existsSync(path.join(dir, 'traces'))).toBe(false); // no old-layout folder
      expect(fs.readFileSync(path.join(dir, 'config.yaml'), 'utf8')).toBe('run: {name: gsm8k}\n');

      expect(await poll()).toMatchObject({ listRequests: 1, getRequests: 0, bodyBytes: 0 });

      await put(`${ck}${B}/traces/trace.jsonl`, traceLines(41, 70));
      const grown = await poll();
      expect(grown).toMatchObject({ listRequests: 1, getRequests: 1 }); // the tail only
      expect(grown.bodyBytes).toBeLessThanOrEqual(Buffer.byteLength(traceLines(41, 70)));
      expect(fs.readFileSync(path.join(dir, `${B}/traces/trace.jsonl`), 'utf8')).toBe(traceLines(41, 70));

      // A second restart: run.json changes and names a third folder.
      const C = 'gsm8k_20261125-020202';
      await put(`${ck}${C}/traces/trace.jsonl`, traceLines(61, 65));
      await put(`${ck}run.json`, runJson([A, B, C]));
      expect(await poll()).toMatchObject({ listRequests: 1, getRequests: 2 }); // run.json, C's trace
      expect(fs.readFileSync(path.join(dir, `${C}/traces/trace.jsonl`), 'utf8')).toBe(traceLines(61, 65));
      expect(await poll()).toMatchObject({ listRequests: 1, getRequests: 0 });
    } finally {
      context.close();
    }
  });

  it('sync-traces by name fragment matches running jobs only, and says so when none matches', async () => {
    const { code, stderr } = await runCli(['sync-traces', '20990101'], { env: cliEnv() });
    expect(code).toBe(2);
    expect(stderr).toMatch(/no running job whose name contains "20990101"/);
  });

  it('upload skips unchanged files, re-uploads changed ones, and prints the config line', async () => {
    const model = path.join(tempDir(), 'Qwen3-0.6B-Base');
    fs.mkdirSync(model);
    fs.writeFileSync(path.join(model, 'config.json'), '{}');
    fs.writeFileSync(
      path.join(model, 'model.safetensors'),
      safetensorsWith(randomBytes(9 * 1024 * 1024 + 5)),
    ); // > one part: multipart
    fs.writeFileSync(path.join(model, 'tokenizer.json'), '{}');
    const first = await runCli(['upload', 'model', model], { env: cliEnv() });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /s3:\/\/sagemaker-us-west-2-123456789012\/rlvr-experiments\/models\/Qwen3-0\.6B-Base\/\n {2}3 uploaded/,
    );
    expect(first.stdout).toMatch(/in a config: model\.path: s3:\/\/.*\/models\/Qwen3-0\.6B-Base\//);
    const second = await runCli(['upload', 'model', model], { env: cliEnv() });
    expect(second.stdout).toMatch(/0 uploaded \(0 B\), 3 unchanged/);
    fs.writeFileSync(path.join(model, 'tokenizer.json'), '{"v": 2}');
    const third = await runCli(['upload', 'model', model], { env: cliEnv() });
    expect(third.stdout).toMatch(/1 uploaded .* 2 unchanged/);
    const weightsKey = 'rlvr-experiments/models/Qwen3-0.6B-Base/model.safetensors';
    const stored = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: weightsKey }));
    expect(sha256(Buffer.from(await stored.Body!.transformToByteArray()))).toBe(
      fileSha(path.join(model, 'model.safetensors')),
    );
    // The tag: SHA-256 over the 8 MiB parts' SHA-256 digests, and the part size.
    const weights = fs.readFileSync(path.join(model, 'model.safetensors'));
    const partDigests = [weights.subarray(0, 8 * 1024 * 1024), weights.subarray(8 * 1024 * 1024)].map((p) =>
      createHash('sha256').update(p).digest(),
    );
    const tags = await s3.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key: weightsKey }));
    expect(tags.TagSet).toEqual([
      { Key: 'rlvr-sha256', Value: `${sha256(Buffer.concat(partDigests))}/${8 * 1024 * 1024}` },
    ]);
    // A whole-file SHA-256 tag (as earlier versions wrote) still counts as unchanged; a wrong one does not.
    const retag = (Value: string) =>
      s3.send(
        new PutObjectTaggingCommand({
          Bucket: BUCKET,
          Key: weightsKey,
          Tagging: { TagSet: [{ Key: 'rlvr-sha256', Value }] },
        }),
      );
    await retag(sha256(weights));
    expect((await runCli(['upload', 'model', model], { env: cliEnv() })).stdout).toMatch(
      /0 uploaded \(0 B\), 3 unchanged/,
    );
    await retag(`${sha256(Buffer.concat(partDigests.reverse()))}/${8 * 1024 * 1024}`);
    expect((await runCli(['upload', 'model', model], { env: cliEnv() })).stdout).toMatch(
      /1 uploaded .* 2 unchanged/,
    );

    const notModel = await runCli(['upload', 'model', path.dirname(model) + '/nothing'], { env: cliEnv() });
    expect(notModel.code).toBe(2);
  });

  /** Makes UploadPart number `part` fail `times` times with `name` (retryable or not). */
  function failPart(part: number, name: string, times: number, seen: number[]) {
    return (client: unknown) =>
      (client as S3Client).middlewareStack.add(
        (next, ctx) => async (args) => {
          if (ctx.commandName === UploadPartCommand.name) {
            const n = (args.input as { PartNumber: number }).PartNumber;
            seen.push(n);
            if (n === part && seen.filter((x) => x === part).length <= times) {
              throw Object.assign(new Error(`${name} injected by the test`), {
                name,
                $fault: name === 'SlowDown' ? 'server' : 'client',
                $metadata: { httpStatusCode: name === 'SlowDown' ? 503 : 403 },
              });
            }
          }
          return next(args);
        },
        { step: 'deserialize', name: 'inject-part-fault' },
      );
  }

  it('multipart upload: a throttled part is retried and the object is intact; a failing part aborts the upload', async () => {
    const dir = path.join(tempDir(), 'weights');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'config.json'), '{}');
    const body = safetensorsWith(randomBytes(20 * 1024 * 1024 + 3)); // three 8 MiB parts
    fs.writeFileSync(path.join(dir, 'model.safetensors'), body);
    const key = 'rlvr-experiments/models/weights/model.safetensors';

    const seen: number[] = [];
    const retried = await openJobContext({
      settings: {},
      configureClients: failPart(2, 'SlowDown', 1, seen),
    });
    try {
      await uploadPath(retried, { kind: 'model', localPath: dir });
    } finally {
      retried.close();
    }
    expect(seen.filter((n) => n === 2)).toHaveLength(2);
    const stored = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(sha256(Buffer.from(await stored.Body!.transformToByteArray()))).toBe(sha256(body));

    fs.writeFileSync(path.join(dir, 'model.safetensors'), safetensorsWith(randomBytes(body.length - 64))); // changed: uploads again
    const failing = await openJobContext({
      settings: {},
      configureClients: failPart(3, 'AccessDenied', 99, []),
    });
    try {
      await expect(uploadPath(failing, { kind: 'model', localPath: dir })).rejects.toThrow(
        /AccessDenied injected/,
      );
    } finally {
      failing.close();
    }
    const open = await s3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }));
    expect(open.Uploads ?? []).toEqual([]);
    const still = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(sha256(Buffer.from(await still.Body!.transformToByteArray()))).toBe(sha256(body)); // the old object stays
  });

  it('a multipart upload signs each part with the SHA-256 of the bytes sent, and returns those digests', async () => {
    const file = path.join(tempDir(), 'weights.safetensors');
    const body = randomBytes(20 * 1024 * 1024 + 3); // three 8 MiB parts
    fs.writeFileSync(file, body);
    const proxy = new RecordingProxy(Number(new URL(moto.endpoint).port));
    await proxy.start();
    const aws = createAwsClients({ region: TEST_REGION, s3Endpoint: `http://127.0.0.1:${proxy.port}` });
    try {
      const digests = await uploadFile(aws.s3, BUCKET, 'signed/weights.safetensors', file, {
        partSize: 8 * 1024 * 1024,
        queueSize: 2,
      });
      const parts = proxy.requests.filter((r) => r.method === 'PUT' && /[?&]partNumber=/.test(r.url));
      expect(parts).toHaveLength(3);
      for (const part of parts) {
        const n = Number(/[?&]partNumber=(\d+)/.exec(part.url)![1]);
        expect(part.headers['x-amz-content-sha256']).toBe(part.bodySha256);
        expect(part.bodySha256).toBe(sha256(body.subarray((n - 1) * 8 * 1024 * 1024, n * 8 * 1024 * 1024)));
        expect(digests[n - 1].toString('hex')).toBe(part.bodySha256);
        expect(part.headers.authorization).toMatch(
          /^AWS4-HMAC-SHA256 .*SignedHeaders=[^,]*x-amz-content-sha256/,
        );
      }
    } finally {
      aws.close();
      await proxy.stop();
    }
    const stored = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'signed/weights.safetensors' }));
    expect(sha256(Buffer.from(await stored.Body!.transformToByteArray()))).toBe(sha256(body));
  });

  it('sizes parts so no file needs more than 10,000', () => {
    for (const size of [1, 80 * 1024 ** 3, 5 * 1024 ** 4]) {
      expect(Math.ceil(size / partSizeFor(size))).toBeLessThanOrEqual(10_000);
      expect(partSizeFor(size)).toBeGreaterThanOrEqual(8 * 1024 * 1024);
    }
  });
});
