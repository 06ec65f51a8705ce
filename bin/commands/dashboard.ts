import type { Command } from 'commander';
import {
  openInBrowser,
  readWriteupSpecFile,
  resultsFolder,
  startDashboard,
  writeRunsReport,
  writeWriteupPage,
  type DashboardOptions,
} from '../../lib/dashboard';
import { UserError } from '../../lib/errors';
import { LOCAL } from '../../lib/layout';
import { isLoopbackHost } from '../../lib/util';
import { withInterrupt } from '../interrupt';
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

/** The dashboard's flags, checked, as the library's options. */
function dashboardOptions(flags: DashboardFlags): DashboardOptions {
  const resultsDir = resultsFolder(flags.results);
  // 0 (like no --port) asks the system for a free port
  const port =
    flags.port === undefined || /^\s*0+\s*$/.test(flags.port) ? 0 : positive('--port', flags.port, true);
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
  const aws = flags.aws ? { settings: settingsOf(flags) } : undefined;
  return { resultsDir, host: flags.host, port, token: flags.token, aws, pollSeconds, stallMinutes };
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
        const options = dashboardOptions(flags);
        const dashboard = await startDashboard(options);
        const aws = dashboard.aws
          ? 'SageMaker: listing jobs and syncing running traces'
          : 'local runs only (--no-aws)';
        process.stdout.write(
          `rlvr dashboard: ${dashboard.url}\n  results: ${options.resultsDir}\n  ${dashboard.awsNote ?? aws}\n  Ctrl-C stops it.\n`,
        );
        if (flags.open) openInBrowser(dashboard.url, (line) => process.stderr.write(line));
        // the handlers go in once the dashboard is up: a Ctrl-C while it starts ends the process
        await withInterrupt((signal) => dashboard.closeOn(signal));
      }),
    );
}

interface ReportFlags {
  out?: string;
  results: string;
  spec?: string;
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
      exits(async (ids: string[], flags: ReportFlags) => {
        if (flags.spec !== undefined) return writeupReport(ids, flags);
        if (ids.length === 0)
          throw new UserError(
            'report: name the runs (job names in the results folder), or give --spec writeup.yaml.',
            'BadFlag',
          );
        if (!flags.out)
          throw new UserError('--out <file>: where to write the report, e.g. --out report.html.', 'BadFlag');
        const { html, requests } = await writeRunsReport({ results: flags.results, ids, out: flags.out });
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
async function writeupReport(ids: string[], flags: ReportFlags): Promise<void> {
  if (ids.length)
    throw new UserError(
      `report --spec: the spec names the runs; drop ${ids.join(' ')} (or add them to its runs:).`,
      'BadFlag',
    );
  const { html, answer, out } = await writeWriteupPage({
    spec: readWriteupSpecFile(flags.spec!),
    out: flags.out,
    results: flags.results,
    note: (note) => process.stderr.write(`note: ${note}\n`),
  });
  process.stdout.write(
    `wrote ${out}: ${answer.runs.length} run(s), ${answer.curves.length} training, ${answer.evals.length} eval and ${answer.passk.length} pass@k panel(s), ${(Buffer.byteLength(html) / 1024).toFixed(0)} KiB\n`,
  );
}
