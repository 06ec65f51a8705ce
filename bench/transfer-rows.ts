/**
 * The transfer rows of `npm run bench`: `rlvr download`, `upload` and `sync-traces` against `aws s3` on
 * the same s3rver, and the reads of the curriculum pre-flight and `rlvr eval results`.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createAwsClients } from '../lib/aws';
import { benchCurriculum } from '../test/curriculum/bench-curriculum';
import { FaultProxy } from '../test/helpers/fault-proxy';
import { medianPair, MIB, movedAtLeast, run, RUNS, writeSafetensorsFile, type Timed } from './measure';
import { BUCKET, LAYOUT, type Peers } from './peers';
import { row, type BenchContext, type Row } from './row';

const ROOT = path.resolve(__dirname, '..');
/** The job whose checkpoint folder the folder rows download. */
const FOLDER_JOB = 'annotations-adhoc-20260101-000002';

/** The 1 GiB file the download rows start from and the upload row sends. */
function bigFile(work: string): string {
  return path.join(work, 'src/big/model.safetensors');
}

/**
 * Downloads: one 1 GiB object, a checkpoint folder (4 × 896 MiB), and the folder again with --fsync.
 * Returns the rows and our full folder download's seconds (the repeat row's baseline).
 */
export async function downloadRows(
  { work, log }: BenchContext,
  peers: Peers,
): Promise<{ rows: Row[]; folderSeconds: number }> {
  const { aws, job, ck, fresh, downloadPair } = peers;
  const rows: Row[] = [];
  const big = bigFile(work);
  writeSafetensorsFile(big, 1024 * MIB);
  const J1 = 'annotations-adhoc-20260101-000001';
  await job(J1);
  await aws(['s3', 'cp', big, `${ck(J1)}run_final/model.safetensors`, '--quiet']);
  // A checkpoint is whole with its config.json (their export writes it last).
  fs.writeFileSync(path.join(work, 'src/config.json'), '{}');
  await aws(['s3', 'cp', path.join(work, 'src/config.json'), `${ck(J1)}run_final/config.json`, '--quiet']);
  const {
    baseline: cli1,
    ours: ours1,
    spread: spread1,
  } = await downloadPair('1gib', J1, `${ck(J1)}run_final/model.safetensors`, 1024 * MIB);
  rows.push(row('download 1 GiB object', ours1.seconds, cli1.seconds, 1.0));
  log.push(`download 1 GiB object, ${spread1}`);
  log.push(`1 GiB download moved ${(JSON.parse(ours1.stdout).bytes / MIB).toFixed(0)} MiB`);
  log.push(
    `peak RSS of rlvr download (1 GiB, 8 × 16 MiB ranges in flight): ${Math.round((ours1.maxRssKb ?? 0) / 1024)} MiB`,
  );
  const limit = await serverLimitRow(log, peers, J1, 'run_final/model.safetensors');
  rows.push(limit.row, await pageCacheRow(log, peers, J1, 'run_final/model.safetensors', limit.seconds));
  fresh('ours-1gib');
  fresh('cli-1gib');

  const J2 = FOLDER_JOB;
  await job(J2);
  const folder = path.join(work, 'src/ckpt/run_final');
  // About the size of a Qwen3-1.7B checkpoint exported in fp16 (3.4 GB).
  for (let i = 1; i <= 4; i++)
    writeSafetensorsFile(path.join(folder, `model-0000${i}-of-00004.safetensors`), 896 * MIB);
  fs.writeFileSync(path.join(folder, 'config.json'), '{}');
  fs.writeFileSync(
    path.join(folder, 'model.safetensors.index.json'),
    JSON.stringify({
      weight_map: Object.fromEntries(
        [1, 2, 3, 4].map((i) => [`w${i}`, `model-0000${i}-of-00004.safetensors`]),
      ),
    }),
  );
  await aws(['s3', 'cp', '--recursive', folder, `${ck(J2)}run_final/`, '--quiet']);
  const {
    baseline: cli2,
    ours: ours2,
    spread: spread2,
  } = await downloadPair('folder', J2, `${ck(J2)}run_final/`, 4 * 896 * MIB, { recursive: true });
  log.push(`download checkpoint folder, ${spread2}`);
  rows.push(
    row(
      'download checkpoint folder (4 × 896 MiB + 2 small: a 1.7B fp16 checkpoint)',
      ours2.seconds,
      cli2.seconds,
      1.0,
    ),
  );
  const moved = JSON.parse(ours2.stdout) as { bytes: number; downloaded: number };
  log.push(`folder download moved ${(moved.bytes / MIB).toFixed(0)} MiB in ${moved.downloaded} files`);
  // The same with --fsync (each file on disk before its rename), against the CLI followed by a
  // \`sync\` (the CLI's files on disk too); median of 3 each: informative, no target.
  const {
    baseline: cliDurable,
    ours: durable,
    spread: spreadDurable,
  } = await downloadPair('durable', J2, `${ck(J2)}run_final/`, 4 * 896 * MIB, {
    recursive: true,
    fsync: true,
    runs: 3,
  });
  rows.push({
    name: 'download checkpoint folder with --fsync, vs aws s3 cp followed by sync (both on disk)',
    ours: `${durable.seconds.toFixed(2)} s`,
    baseline: `${cliDurable.seconds.toFixed(2)} s`,
    ratio: durable.seconds / cliDurable.seconds,
    target: 'informative',
    pass: true,
  });
  log.push(`download checkpoint folder with --fsync, ${spreadDurable}`);
  for (const dir of ['ours-durable', 'cli-durable', 'cli-folder']) fresh(dir);
  return { rows, folderSeconds: ours2.seconds };
}

/** The URL of a job's checkpoint object on the bench's s3rver. */
function checkpointUrl(peers: Peers, jobName: string, relative: string): string {
  return `${peers.s3Endpoint}/${BUCKET}/${LAYOUT.checkpointsPrefix(jobName)}${relative}`;
}

/** `size` bytes of `url` in 8 parallel range GETs by curl, range i written to `output(i)`; one shell line. */
function curlRanges(url: string, size: number, output: (i: number) => string): string {
  const part = Math.ceil(size / 8);
  const curls = Array.from(
    { length: 8 },
    (_, i) => `curl -s -f -o '${output(i)}' -r ${i * part}-${Math.min(size, (i + 1) * part) - 1} '${url}' &`,
  );
  return `${curls.join(' ')} wait`;
}

/**
 * The 1 GiB download against what the server gives at most: the same object in 8 parallel range GETs by
 * curl, written to /dev/null (no file, no checks, no start-up), in the same run; with our CPU per GiB
 * (user + sys of the whole command, start-up included).
 */
async function serverLimitRow(
  log: string[],
  peers: Peers,
  jobName: string,
  relative: string,
): Promise<{ row: Row; seconds: number }> {
  const size = 1024 * MIB;
  const curls = curlRanges(checkpointUrl(peers, jobName, relative), size, () => '/dev/null');
  const { baseline, ours, oursCpu, spread } = await medianPair(
    () => run('sh', ['-c', curls], peers.env, { time: true }),
    async () =>
      movedAtLeast(
        await peers.rlvr(['download', jobName, '--results-dir', peers.fresh('ours-limit'), '--json'], {
          time: true,
        }),
        size,
      ),
    RUNS,
    'curl 8 ranges',
  );
  peers.fresh('ours-limit');
  log.push(`download 1 GiB object vs the server's limit, ${spread}`);
  const ratio = ours.seconds / baseline.seconds;
  const cpuPerGib = oursCpu / (size / (1024 * MIB));
  const row = {
    name: "download 1 GiB object vs the server's limit (8 parallel range GETs by curl to /dev/null), and our CPU per GiB",
    ours: `${ours.seconds.toFixed(2)} s, ${cpuPerGib.toFixed(2)} CPU s/GiB`,
    baseline: `${baseline.seconds.toFixed(2)} s`,
    ratio,
    target: '≤ 1.3×, ≤ 1.5 CPU s/GiB',
    pass: ratio <= 1.3 && cpuPerGib <= 1.5,
  };
  return { row, seconds: baseline.seconds };
}

/**
 * The same 8 curl ranges written into files instead of /dev/null (removed and synced before each of 3
 * runs): what writing 1 GiB through this host's page cache costs any client. On a VM whose freed memory
 * goes back to the host, that copy alone has measured 0.2 s to over 4 s of system time per GiB.
 */
async function pageCacheRow(
  log: string[],
  peers: Peers,
  jobName: string,
  relative: string,
  limitSeconds: number,
): Promise<Row> {
  const url = checkpointUrl(peers, jobName, relative);
  const runs: Timed[] = [];
  for (let i = 0; i < 3; i++) {
    const dir = peers.fresh('curl-files');
    fs.mkdirSync(dir, { recursive: true });
    spawnSync('sync');
    const curls = curlRanges(url, 1024 * MIB, (k) => path.join(dir, `part${k}`));
    runs.push(await run('sh', ['-c', curls], peers.env, { time: true }));
  }
  peers.fresh('curl-files');
  const median = [...runs].sort((a, b) => a.seconds - b.seconds)[1];
  const cpus = runs.map((r) => r.cpu ?? NaN).sort((a, b) => a - b);
  log.push(
    `curl 8 ranges into files, wall s: ${runs.map((r) => r.seconds.toFixed(2)).join(' ')}; CPU s: ${runs.map((r) => (r.cpu ?? NaN).toFixed(2)).join(' ')}`,
  );
  return {
    name: "the server's limit written into files (the same 8 curl ranges, not /dev/null): the host's page-cache cost, for the row above",
    ours: `${median.seconds.toFixed(2)} s, ${cpus[1].toFixed(2)} CPU s/GiB`,
    baseline: `${limitSeconds.toFixed(2)} s (to /dev/null, the row above)`,
    ratio: median.seconds / limitSeconds,
    target: 'informative',
    pass: true,
  };
}

/** The folder download again with nothing changed: five runs through a request-counting proxy. */
export async function repeatDownloadRow(
  { work, log }: BenchContext,
  { env, s3Port, rlvr }: Peers,
  folderSeconds: number,
): Promise<Row> {
  const rows: Row[] = [];
  // Five runs through a request-counting proxy; the median one stands for the row, and every run
  // must have made zero GETs.
  const proxy = new FaultProxy(s3Port);
  await proxy.start();
  spawnSync('sync');
  const repeats: { run: Timed; requests: { get: number; list: number; head: number } }[] = [];
  for (let i = 0; i < 5; i++) {
    const before = { ...proxy.requests };
    const r = await run(
      process.execPath,
      [
        path.join(ROOT, 'bin/rlvr.js'),
        'download',
        FOLDER_JOB,
        '--results-dir',
        path.join(work, 'ours-folder'),
        '--json',
      ],
      { ...env, AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${proxy.port}` },
      { cwd: work },
    );
    repeats.push({
      run: r,
      requests: {
        get: proxy.requests.get - before.get,
        list: proxy.requests.list - before.list,
        head: proxy.requests.head - before.head,
      },
    });
  }
  await proxy.stop();
  const median = [...repeats].sort((a, b) => a.run.seconds - b.run.seconds)[2];
  const repeat = median.run;
  const requests = median.requests;
  const anyGets = repeats.some((r) => r.requests.get > 0);
  log.push(`repeat download, wall s: ${repeats.map((r) => r.run.seconds.toFixed(2)).join(' ')}`);
  const startups: number[] = [];
  for (let i = 0; i < 5; i++) startups.push((await rlvr(['--help'])).seconds);
  const startup = [...startups].sort((a, b) => a - b)[2];
  log.push(
    `CLI start-up alone (rlvr --help, median of 5): ${startup.toFixed(2)} s of the ${repeat.seconds.toFixed(2)} s repeat download`,
  );
  const report = JSON.parse(repeat.stdout);
  log.push(
    `repeat download: ${report.downloaded} files downloaded, ${report.skipped} skipped; S3 requests seen: ${JSON.stringify(requests)}`,
  );
  const repeatRatio = repeat.seconds / folderSeconds;
  rows.push({
    name: `repeat folder download, nothing changed (per run: ${requests.get} GETs, ${requests.list} LISTs, ${requests.head} HEADs)`,
    ours: `${repeat.seconds.toFixed(2)} s`,
    baseline: `${folderSeconds.toFixed(2)} s (our full download)`,
    ratio: repeatRatio,
    target: '≤ 0.05×, zero GETs',
    pass: repeatRatio <= 0.05 && !anyGets,
  });
  return rows[0];
}

/** Uploads: the 1 GiB file (median of a timed pair) and a folder of 1,000 small files. */
export async function uploadRows({ work, log }: BenchContext, { aws, rlvr }: Peers): Promise<Row[]> {
  const rows: Row[] = [];
  const big = bigFile(work);
  if (!fs.existsSync(big)) writeSafetensorsFile(big, 1024 * MIB);
  fs.writeFileSync(path.join(work, 'src/big/config.json'), '{}');
  // A fresh name each run: an unchanged file under the same name is (rightly) skipped.
  // (Each side counts its own runs: with alternating order a shared counter gave two of our runs one
  // name, and the second was a skip, not an upload.)
  let cliUploads = 0;
  let ourUploads = 0;
  const {
    baseline: cli3,
    ours: ours3,
    spread: spread3,
  } = await medianPair(
    () =>
      aws(['s3', 'cp', big, `s3://${BUCKET}/cli-up/${++cliUploads}/model.safetensors`, '--quiet'], {
        time: true,
      }),
    async () =>
      movedAtLeast(
        await rlvr(
          ['upload', 'model', path.join(work, 'src/big'), '--name', `BenchModel${++ourUploads}`, '--json'],
          { time: true },
        ),
        1024 * MIB,
      ),
  );
  rows.push(row('upload 1 GiB file', ours3.seconds, cli3.seconds, 1.0));
  log.push(`upload 1 GiB file, ${spread3}`);

  const small = path.join(work, 'src/small');
  fs.mkdirSync(small, { recursive: true });
  fs.writeFileSync(path.join(small, 'dataset_info.json'), '{}');
  for (let i = 0; i < 999; i++)
    fs.writeFileSync(path.join(small, `part-${String(i).padStart(4, '0')}.arrow`), randomBytes(4096));
  const cli4 = await aws(['s3', 'cp', '--recursive', small, `s3://${BUCKET}/cli-small/`, '--quiet']);
  const ours4 = await rlvr(['upload', 'dataset', small, '--name', 'small_train', '--json']);
  rows.push(row('upload folder of 1,000 small files', ours4.seconds, cli4.seconds, 1.0));
  return rows;
}

/** A 200 MB trace growing 1 MB per poll: the bytes each `sync-traces` poll fetches. */
export async function traceSyncRow({ work }: BenchContext, { aws, rlvr, job, ck }: Peers): Promise<Row> {
  const rows: Row[] = [];
  const J3 = 'annotations-adhoc-20260101-000003';
  await job(J3);
  const trace = path.join(work, 'src/trace.jsonl');
  const line = (i: number) => `${JSON.stringify({ step: i, reward: 0.5, completion: 'z'.repeat(400) })}\n`;
  const fd = fs.openSync(trace, 'w');
  let i = 0;
  while (fs.fstatSync(fd).size < 200 * MIB)
    fs.writeSync(fd, Array.from({ length: 1000 }, () => line(i++)).join(''));
  fs.closeSync(fd);
  const traceKey = `${ck(J3)}traces/trace.jsonl`;
  await aws(['s3', 'cp', trace, traceKey, '--quiet']);
  await rlvr(['sync-traces', J3, '--results-dir', path.join(work, 'ours5'), '--json']);
  const polls: { ours: number; growth: number; cli: number }[] = [];
  for (let p = 0; p < 5; p++) {
    const growth = Array.from({ length: Math.ceil(MIB / line(0).length) }, () => line(i++)).join('');
    fs.appendFileSync(trace, growth);
    await aws(['s3', 'cp', trace, traceKey, '--quiet']);
    const synced = await rlvr(['sync-traces', J3, '--results-dir', path.join(work, 'ours5'), '--json']);
    const stats = JSON.parse(synced.stdout).stats;
    polls.push({ ours: stats.bodyBytes, growth: Buffer.byteLength(growth), cli: fs.statSync(trace).size });
  }
  const worst = Math.max(...polls.map((p) => p.ours - p.growth));
  rows.push({
    name: 'trace sync, 200 MB file growing 1 MB per poll (bytes per poll, worst of 5)',
    ours: `${(Math.max(...polls.map((p) => p.ours)) / MIB).toFixed(2)} MiB`,
    baseline: `${(polls[polls.length - 1].cli / MIB).toFixed(0)} MiB (aws s3 cp, whole file)`,
    ratio: Math.max(...polls.map((p) => p.ours / p.cli)),
    target: '≤ growth + 64 KiB',
    pass: worst <= 64 * 1024,
  });
  return rows[0];
}

/**
 * The curriculum pre-flight's id check of a 100,000-row dataset copy on the same S3 server: cold (it
 * reads the Arrow files once, only the columns the rule needs) and the cached repeat (the listing only).
 */
export async function curriculumRow({ log }: BenchContext, { env, s3Endpoint }: Peers): Promise<Row> {
  // In this process the SDK reads its credentials and checksum settings from process.env.
  const saved = { ...process.env };
  for (const k of [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_REQUEST_CHECKSUM_CALCULATION',
    'AWS_RESPONSE_CHECKSUM_VALIDATION',
  ])
    process.env[k] = env[k];
  const clients = createAwsClients({ region: 'us-west-2', s3Endpoint }, env);
  try {
    const b = await benchCurriculum(clients.s3, BUCKET, LAYOUT.datasetPrefix('math_train'));
    const mib = (n: number) => `${(n / MIB).toFixed(1)} MiB`;
    log.push(
      `curriculum id check: ${b.rows} rows, copy ${mib(b.copyBytes)}; cold ${b.cold.seconds.toFixed(2)} s, ${mib(b.cold.bytesRead)} read in ${b.cold.gets} GETs; cached ${b.cached.seconds.toFixed(3)} s, ${b.cached.gets} GETs`,
    );
    return {
      name: 'curriculum id check, 100,000-row dataset copy: cold, then the cached repeat',
      ours: `${b.cold.seconds.toFixed(2)} s, ${mib(b.cold.bytesRead)} read; repeat ${b.cached.seconds.toFixed(3)} s, ${b.cached.gets} GETs`,
      baseline: `the copy: ${mib(b.copyBytes)}`,
      ratio: b.cold.bytesRead / b.copyBytes,
      target: 'cold ≤ 2 s and ≤ the copy; repeat ≤ 0.05 s, 0 GETs',
      pass:
        b.cold.seconds <= 2 &&
        b.cold.bytesRead <= b.copyBytes &&
        b.cached.seconds <= 0.05 &&
        b.cached.gets === 0,
    };
  } finally {
    clients.close();
    process.env = saved;
  }
}

/**
 * `rlvr eval results` over an eval job of 250 units (500 result files: each unit's record and the
 * harness's results JSON) against `aws s3 cp --recursive` of the same files, the first step of the
 * team's gathering script; then the repeat, which the local cache answers without a GET.
 */
export async function evalResultsRow({ work, log }: BenchContext, { aws, rlvr, ck }: Peers): Promise<Row> {
  const job = 'annotations-adhoc-eval-20261123-000000';
  const local = path.join(work, 'eval-results-src');
  const tasks = ['gsm8k_cot', 'minerva_math', 'ifeval', 'mbpp', 'humaneval'];
  for (let c = 0; c < 50; c++)
    for (const task of tasks) {
      const dir = path.join(local, `ck${c}`, `${task}_0shot`);
      const id = `${c.toString(16).padStart(8, '0')}${tasks.indexOf(task).toString(16).padStart(8, '0')}`;
      fs.mkdirSync(path.join(dir, 'harness', 'model'), { recursive: true });
      fs.writeFileSync(
        path.join(dir, `unit-${id}.json`),
        JSON.stringify({
          id,
          checkpoint: { label: `ck${c}`, id: `ck${c}`, from: 's3://x/' },
          task,
          numFewshot: 0,
          harness: 'lm_eval',
          argv: [],
          deviations: [],
          host: 'algo-1',
          gpu: 0,
          startedAt: '2026-11-23T00:00:00Z',
          wallS: 300 + c,
          exitCode: 0,
        }),
      );
      fs.writeFileSync(
        path.join(dir, 'harness', 'model', 'results_2026-11-23T00-00-00.json'),
        JSON.stringify({
          results: { [task]: { alias: task, 'acc,none': 0.5, 'acc_stderr,none': 0.01 } },
          configs: { [task]: { description: 'x'.repeat(2000) } },
        }),
      );
    }
  await aws(['s3', 'cp', '--recursive', '--quiet', local, `${ck(job)}evals/`]);
  const cache = path.join(work, 'eval-cache');
  const ours = () => rlvr(['eval', 'results', job, '--format', 'csv'], {}, { XDG_CACHE_HOME: cache });
  const fetchedOf = (r: Timed) => Number(/(\d+) from S3/.exec(r.stderr)?.[1] ?? NaN);
  const baselineDir = path.join(work, 'eval-results-aws');
  const baseline = await aws(['s3', 'cp', '--recursive', '--quiet', `${ck(job)}evals/`, baselineDir]);
  const cold = await ours();
  const warm = await ours();
  const lines = cold.stdout.trim().split('\n').length - 1;
  log.push(
    `eval results: 250 units, 500 files; cold ${cold.seconds.toFixed(2)} s (${fetchedOf(cold)} GETs), cached repeat ${warm.seconds.toFixed(2)} s (${fetchedOf(warm)} GETs); ${lines} table cells; aws s3 cp --recursive ${baseline.seconds.toFixed(2)} s`,
  );
  return {
    name: 'eval results table, eval job of 250 units (500 result files): cold, then the cached repeat',
    ours: `${cold.seconds.toFixed(2)} s; repeat ${warm.seconds.toFixed(2)} s, ${fetchedOf(warm)} GETs`,
    baseline: `${baseline.seconds.toFixed(2)} s (aws s3 cp --recursive, files only)`,
    ratio: cold.seconds / baseline.seconds,
    // Both sides make the same 500 GETs of a server that answers one at a time (s3rver: concurrency 8,
    // 32 or 64 measured the same), so the cold read can at best match the copy; the repeat is the point.
    target: 'cold ≤ 1.1×; repeat 0 GETs, ≤ 0.25× the copy',
    pass:
      cold.seconds <= 1.1 * baseline.seconds &&
      fetchedOf(warm) === 0 &&
      warm.seconds <= 0.25 * baseline.seconds &&
      lines === 250,
  };
}
