import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { openJobContext, type JobContext } from '../../lib/aws';
import {
  buildReport,
  buildWriteup,
  DashboardData,
  jobViews,
  listRunIds,
  readWriteupSpec,
  runFiles,
  startLive,
  startServer,
  type JobView,
} from '../../lib/dashboard';
import { outPathError, UserError } from '../../lib/errors';
import { defaultedJobLogPath } from '../../lib/submission';
import { LOCAL } from '../../lib/layout';
import { isLoopbackHost, prepareOutFile, replaceRegularFile } from '../../lib/util';
import { addSettingsOptions, exits, settingsOf, type SettingsFlagValues } from './common';

interface DashboardFlags extends SettingsFlagValues {
  results: string;
  port?: string;
  host: string;
  token?: string;
  open?: boolean;
  aws: boolean;
  poll: string;
  stallMinutes: string;
}

function positive(flag: string, value: string, integer = false): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new UserError(`${flag} ${value}: a positive ${integer ? 'whole ' : ''}number.`, 'BadFlag');
  return n;
}

function resultsFolder(dir: string): string {
  const abs = path.resolve(dir);
  if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory())
    throw new UserError(
      `--results ${dir}: no such folder. Give the folder \`rlvr download\` and \`submit --local\` write to (default ${LOCAL.resultsDir}/).`,
      'BadFlag',
    );
  return abs;
}

/** Why the server could not listen, as bad input when the address or port is the user's to change. */
function listenError(e: unknown, host: string, port: number): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new UserError(
      `--port ${port} is in use on ${host}: pick another port, or --port 0 (or no --port) for a free one.`,
      'BadFlag',
      { cause: e },
    );
  if (code === 'EACCES')
    return new UserError(
      `--port ${port}: not allowed for this user (ports below 1024 need privileges): pick one above 1023, or --port 0 for a free one.`,
      'BadFlag',
      { cause: e },
    );
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new UserError(`--host ${host}: not an address of this machine.`, 'BadFlag', { cause: e });
  return e;
}

/** SageMaker, when the settings and credentials allow; else the view is local only, and says why. */
async function maybeContext(flags: DashboardFlags): Promise<{ context?: JobContext; why?: string }> {
  if (!flags.aws) return {};
  try {
    return { context: await openJobContext({ settings: settingsOf(flags) }) };
  } catch (e) {
    return { why: `SageMaker not asked: ${(e as Error).message.split('\n')[0]}` };
  }
}

function openBrowser(url: string): void {
  const opener =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
    child.on('error', () => process.stderr.write(`could not start ${opener}; open ${url} yourself\n`));
    child.unref();
  } catch {
    process.stderr.write(`could not start ${opener}; open ${url} yourself\n`);
  }
}

export function registerDashboard(program: Command): void {
  addSettingsOptions(program.command('dashboard'))
    .description('serve a local dashboard: jobs, live training curves, sweeps side by side, evaluations')
    .option('--results <dir>', 'the results folder (downloaded and local runs)', LOCAL.resultsDir)
    .option('--port <n>', 'port (default, or 0: a free one)')
    .option(
      '--host <address>',
      'address to listen on; anything but loopback (127.0.0.0/8, ::1) needs --token',
      '127.0.0.1',
    )
    .option('--token <secret>', 'required in every request (for --host other than loopback)')
    .option('--open', 'open the page in the browser')
    .option('--no-aws', 'local runs only: do not ask SageMaker for jobs or sync running traces')
    .option('--poll <seconds>', 'sync running jobs’ traces every this many seconds', '30')
    .option('--stall-minutes <n>', 'flag a running job whose trace has not grown for this long', '30')
    .action(
      exits(async (flags: DashboardFlags) => {
        const resultsDir = resultsFolder(flags.results);
        // 0 (like no --port) asks the system for a free port
        const port =
          flags.port === undefined || /^\s*0+\s*$/.test(flags.port)
            ? 0
            : positive('--port', flags.port, true);
        if (port > 65535) throw new UserError(`--port ${flags.port}: at most 65535.`, 'BadFlag');
        const pollSeconds = positive('--poll', flags.poll);
        const stallMinutes = positive('--stall-minutes', flags.stallMinutes);
        if (flags.token !== undefined && flags.token.length < 16)
          throw new UserError('--token: at least 16 characters (e.g. `openssl rand -hex 16`).', 'BadFlag');
        if (!isLoopbackHost(flags.host) && !flags.token)
          throw new UserError(
            `--host ${flags.host} is reachable from other machines: give --token too.`,
            'BadFlag',
          );
        const { context, why } = await maybeContext(flags);
        const data = new DashboardData({ resultsDir });
        const jobLogPath = await defaultedJobLogPath({
          explicit: undefined,
          env: process.env,
          cwd: process.cwd(),
        });
        let latest: { jobs: JobView[]; aws: string } = { jobs: [], aws: why ?? 'not asked yet' };
        let listedAt = 0;
        // eslint-disable-next-line prefer-const -- assigned after the server it reports to starts
        let live: ReturnType<typeof startLive> | undefined;
        const jobs = async (): Promise<{ jobs: JobView[]; aws: string }> => {
          if (Date.now() - listedAt < 15_000) return latest;
          const v = await jobViews({
            resultsDir,
            context,
            stallMinutes,
            jobLogPath,
            progress: (id) => data.progress(id).catch(() => undefined),
            grewAt: (job) => live?.grewAt(job),
          });
          latest = { jobs: v.jobs, aws: context ? v.aws : (why ?? v.aws) };
          listedAt = Date.now();
          return latest;
        };
        const server = await startServer({ data, host: flags.host, port, token: flags.token, jobs }).catch(
          (e: unknown) => {
            throw listenError(e, flags.host, port);
          },
        );
        live = startLive({
          resultsDir,
          context,
          pollSeconds,
          running: () =>
            latest.jobs.filter((j) => j.status === 'InProgress' && j.source !== 'local').map((j) => j.name),
          notify: (event, id) => {
            if (event === 'jobs') listedAt = 0;
            server.notify(event, id);
          },
        });
        process.stdout.write(
          `rlvr dashboard: ${server.url}\n  results: ${resultsDir}\n  ${why ?? (context ? 'SageMaker: listing jobs and syncing running traces' : 'local runs only (--no-aws)')}\n  Ctrl-C stops it.\n`,
        );
        if (flags.open) openBrowser(server.url);
        await new Promise<void>((resolve) => {
          const stop = (): void => resolve();
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
        live.stop();
        await server.close();
        context?.close();
      }),
    );
}

/** `--out`'s path, checked before any work: absent or a regular file (else exit 2 naming it). */
function outTarget(out: string): string {
  try {
    return prepareOutFile(out);
  } catch (e) {
    throw outPathError('--out', out, e);
  }
}

/** Writes the report without ever replacing anything but a regular file (see replaceRegularFile). */
function writeReportFile(out: string, html: string): void {
  const abs = outTarget(out);
  try {
    replaceRegularFile(abs, html);
  } catch (e) {
    throw outPathError('--out', out, e);
  }
}

export function registerReport(program: Command): void {
  program
    .command('report')
    .description('write runs’ dashboard views to one self-contained HTML file (no server needed)')
    .argument('[jobs...]', 'run folders in the results folder (job names); optional with --spec')
    .option('--out <file>', 'the HTML file to write (required; with --spec, the spec’s output: *.html too)')
    .option('--results <dir>', 'the results folder', LOCAL.resultsDir)
    .option(
      '--spec <yaml>',
      'a writeup spec (their generate_staleness_plots.py spec, run_dir/run and passk per run, base_model): the writeup page',
    )
    .option('--debug', 'show stack traces')
    .action(
      exits(async (ids: string[], flags: { out?: string; results: string; spec?: string }) => {
        if (flags.spec !== undefined) return writeupReport(ids, flags);
        if (ids.length === 0)
          throw new UserError(
            'report: name the runs (job names in the results folder), or give --spec writeup.yaml.',
            'BadFlag',
          );
        if (!flags.out)
          throw new UserError('--out <file>: where to write the report, e.g. --out report.html.', 'BadFlag');
        const resultsDir = resultsFolder(flags.results);
        // refused before the views are built: the same check runs again just before the write
        outTarget(flags.out);
        const missing = ids.filter((id) => !runFiles(resultsDir, id)?.trace);
        if (missing.length) {
          const have = listRunIds(resultsDir).filter((id) => runFiles(resultsDir, id)?.trace);
          throw new UserError(
            `${missing.join(', ')}: no run with a trace in ${flags.results}/ (have: ${have.join(', ') || 'none'}). Download it first: rlvr download <job>.`,
            'NoSuchRun',
          );
        }
        const data = new DashboardData({ resultsDir });
        const views = await jobViews({
          resultsDir,
          stallMinutes: 30,
          progress: (id) => data.progress(id).catch(() => undefined),
        });
        const { html, requests } = await buildReport(data, ids, views);
        writeReportFile(flags.out, html);
        process.stdout.write(
          `wrote ${flags.out}: ${ids.length} run(s), ${requests} views, ${(Buffer.byteLength(html) / 1024).toFixed(0)} KiB\n`,
        );
      }),
    );
}

/**
 * `report --spec`: the writeup page of the runs a spec names. The spec's runs replace positional ones
 * (both at once would leave one set unshown); `run:` ids are looked up in --results only when the spec
 * has some, so a spec of run folders works without a results folder.
 */
async function writeupReport(
  ids: string[],
  flags: { out?: string; results: string; spec?: string },
): Promise<void> {
  if (ids.length)
    throw new UserError(
      `report --spec: the spec names the runs; drop ${ids.join(' ')} (or add them to its runs:).`,
      'BadFlag',
    );
  const specFile = flags.spec!;
  const st = fs.statSync(specFile, { throwIfNoEntry: false });
  if (!st) throw new UserError(`--spec ${specFile}: no such file.`, 'BadFlag');
  if (!st.isFile())
    throw new UserError(
      `--spec ${specFile}: not a regular file (${st.isDirectory() ? 'a folder' : st.isFIFO() ? 'a FIFO' : 'a device or socket'}): name the spec's YAML file.`,
      'BadFlag',
    );
  const spec = readWriteupSpec(specFile);
  const out = flags.out ?? spec.output;
  if (!out)
    throw new UserError(
      '--out <file>: where to write the writeup page, e.g. --out page.html (or output: page.html in the spec).',
      'BadFlag',
    );
  outTarget(out);
  const needsResults = spec.runs.some((r) => r.run !== undefined) || spec.base?.run !== undefined;
  const resultsDir = needsResults ? resultsFolder(flags.results) : undefined;
  for (const note of spec.notes) process.stderr.write(`note: ${note}\n`);
  const { html, answer } = await buildWriteup(spec, { resultsDir });
  writeReportFile(out, html);
  for (const note of answer.notes.slice(spec.notes.length)) process.stderr.write(`note: ${note}\n`);
  process.stdout.write(
    `wrote ${out}: ${answer.runs.length} run(s), ${answer.curves.length} training, ${answer.evals.length} eval and ${answer.passk.length} pass@k panel(s), ${(Buffer.byteLength(html) / 1024).toFixed(0)} KiB\n`,
  );
}
