/*
 * `npm run bench`: our transfers side by side with `aws s3` (the baseline) against the same local
 * S3 server (s3rver), SageMaker answered by moto. Runs the real `rlvr` commands as a user
 * would, writes the figures with machine and date to bench/results.md. Not a test: it reports.
 *
 * `--dashboard-only`, `--image-only`, `--eval-only`, `--passk-only`: those rows alone, printed, results.md
 * untouched.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startMoto } from '../test/helpers/moto';
import { dashboardRows } from './dashboard';
import { imageRows } from './image';
import { passkRows } from './passk';
import { RUNS } from './measure';
import { startPeers } from './peers';
import type { BenchContext, Row } from './row';
import {
  curriculumRow,
  downloadRows,
  evalResultsRow,
  repeatDownloadRow,
  traceSyncRow,
  uploadRows,
} from './transfer-rows';

const ROOT = path.resolve(__dirname, '..');

/** The full bench: every row, in the order of bench/results.md. */
async function allRows(ctx: BenchContext): Promise<Row[]> {
  const peers = await startPeers(ctx.work);
  try {
    const downloads = await downloadRows(ctx, peers);
    return [
      ...downloads.rows,
      await repeatDownloadRow(ctx, peers, downloads.folderSeconds),
      ...(await uploadRows(ctx, peers)),
      await traceSyncRow(ctx, peers),
      await curriculumRow(ctx, peers),
      await evalResultsRow(ctx, peers),
      ...(await passkRows(ctx)),
      ...(await dashboardRows(ctx.work, ctx.log)),
      ...(await imageRows(ctx, peers.motoEnv)),
    ];
  } finally {
    await peers.stop();
  }
}

/** One group of rows alone, for a quick look. */
const ONLY: Record<string, (ctx: BenchContext) => Promise<Row[]>> = {
  '--dashboard-only': (ctx) => dashboardRows(ctx.work, ctx.log),
  '--image-only': async (ctx) => {
    const moto = await startMoto();
    try {
      return await imageRows(ctx, moto.env);
    } finally {
      await moto.stop();
    }
  },
  '--passk-only': (ctx) => passkRows(ctx),
  '--eval-only': async (ctx) => {
    const peers = await startPeers(ctx.work);
    try {
      return [await evalResultsRow(ctx, peers)];
    } finally {
      await peers.stop();
    }
  },
};

async function main(): Promise<void> {
  const ctx: BenchContext = { work: fs.mkdtempSync(path.join(os.tmpdir(), 'rlvr-bench-')), log: [] };
  const only = Object.keys(ONLY).find((flag) => process.argv.includes(flag));
  try {
    if (only) {
      const rows = await ONLY[only](ctx);
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n${ctx.log.join('\n')}\n`);
      return;
    }
    writeResults(await allRows(ctx), ctx.log);
  } finally {
    // Several GiB of test data: removed whether the run finished or not.
    fs.rmSync(ctx.work, { recursive: true, force: true });
  }
}

function writeResults(rows: readonly Row[], log: readonly string[]): void {
  const cpu =
    (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) ?? [])[1] ?? os.cpus()[0]?.model;
  const awsVersion = spawnSync('aws', ['--version'], { encoding: 'utf8' });
  const text = `# Benchmark results

Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 1024 ** 3)} GiB RAM, Node ${process.version}, ${(awsVersion.stdout || awsVersion.stderr).trim()}.
Both sides talk to the same s3rver on loopback (SageMaker answered by moto). Times are wall time of the
whole command as a user runs it (our CLI's start-up included); the two downloads and the 1 GiB upload
are the median of ${RUNS} runs of each side (alternating who goes first, \`sync\` before each run), the
--fsync row the median of 3, the repeat download of 5, the image dependency change of 3, the
other rows one run.

| what | rlvr | baseline | ratio | target | met |
|---|---|---|---|---|---|
${rows.map((r) => `| ${r.name} | ${r.ours} | ${r.baseline} | ${r.ratio.toFixed(3)} | ${r.target} | ${r.target === 'informative' ? '–' : r.pass ? 'yes' : 'NO'} |`).join('\n')}

${log.map((l) => `- ${l}`).join('\n')}
`;
  fs.writeFileSync(path.join(ROOT, 'bench', 'results.md'), text);
  process.stdout.write(text);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exitCode = 1;
});
