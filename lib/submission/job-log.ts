import * as fs from 'node:fs';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';
import { UserError } from '../errors';
import { CLI_ENV, LOCAL } from '../layout';
import { gitRoot } from '../source';

/**
 * The job log (`docs/job_log.md`): one Markdown table row per submitted job. Appends hold a lock, so
 * concurrent submits never interleave or garble rows, and each row is written with one append.
 */

export const JOB_LOG_COLUMNS = [
  'Job Name',
  'Config',
  'Description',
  'Submitted',
  'Instance',
  'Template',
  'Commit',
];

export interface JobLogRow {
  readonly jobName: string;
  readonly config: string;
  readonly description: string;
  readonly submitted: Date;
  readonly instance: string;
  readonly template: string;
  readonly commit: string;
}

const HEADER = `# Job log

Written by \`rlvr submit\`: one row per job. Edit descriptions freely; keep one row per line.

| ${JOB_LOG_COLUMNS.join(' | ')} |
|${JOB_LOG_COLUMNS.map(() => '---').join('|')}|
`;

/** A table cell: no pipes or line breaks. */
function cell(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|').trim();
}

export function formatJobLogRow(row: JobLogRow): string {
  const submitted = row.submitted
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
  return `| ${[row.jobName, row.config, row.description, submitted, row.instance, row.template, row.commit]
    .map(cell)
    .join(' | ')} |\n`;
}

export async function appendJobLogRow(logPath: string, row: JobLogRow): Promise<void> {
  fs.mkdirSync(path.dirname(logPath), { recursive: true });
  // Lock the folder-level lock file (the log itself may not exist yet).
  const release = await lockfile.lock(path.dirname(logPath), {
    lockfilePath: `${logPath}.lock`,
    retries: { retries: 50, minTimeout: 20, maxTimeout: 200, randomize: true },
    stale: 30000,
  });
  try {
    let prefix = '';
    if (!fs.existsSync(logPath) || fs.statSync(logPath).size === 0) {
      prefix = HEADER;
    } else {
      const fd = fs.openSync(logPath, 'r');
      try {
        const last = Buffer.alloc(1);
        fs.readSync(fd, last, 0, 1, fs.statSync(logPath).size - 1);
        if (last.toString() !== '\n') prefix = '\n';
      } finally {
        fs.closeSync(fd);
      }
    }
    fs.appendFileSync(logPath, prefix + formatJobLogRow(row));
  } finally {
    await release();
  }
}

/** Job name → description, from the log's rows (missing or unreadable log: none). */
export function readJobLogDescriptions(logPath: string): Map<string, string> {
  const out = new Map<string, string>();
  let text: string;
  try {
    text = fs.readFileSync(logPath, 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    if (!line.startsWith('| ') || line.startsWith('| Job Name')) continue;
    const cells = line
      .slice(1, line.endsWith('|') ? -1 : undefined)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim().replace(/\\\|/g, '|'));
    if (cells.length >= 3 && cells[0]) out.set(cells[0], cells[2]);
  }
  return out;
}

/** The job log: an explicit path, else RLVR_JOB_LOG, else `docs/job_log.md` of the repository. */
export function resolveJobLogPath(options: {
  readonly explicit?: string;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly repoRoot: string;
}): string {
  const given = options.explicit ?? options.env[CLI_ENV.jobLog];
  return given ? path.resolve(options.cwd, given) : path.join(options.repoRoot, LOCAL.defaultJobLog);
}

/** Folders of the kernel's and devices' files: a log written there is never a log (and may hang). */
const SYSTEM_FOLDERS = ['/proc', '/sys', '/dev'];

function within(file: string, folder: string): boolean {
  return file === folder || file.startsWith(`${folder}/`);
}

function canWrite(file: string, folder: boolean): boolean {
  try {
    fs.accessSync(file, folder ? fs.constants.W_OK | fs.constants.X_OK : fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The path itself when it exists, else its nearest existing parent. */
function nearestExisting(file: string): string {
  let at = file;
  while (!fs.existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  return at;
}

/**
 * What would stop a submit writing the job log at `logPath` (the file, its folders, and the lock
 * beside it), checked before the job is created; undefined when nothing would.
 */
export function jobLogPathProblem(logPath: string): string | undefined {
  const file = path.resolve(logPath);
  const existing = nearestExisting(file);
  let real: string;
  try {
    real = fs.realpathSync(existing);
  } catch (err) {
    return `${existing} cannot be resolved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  const system = SYSTEM_FOLDERS.find((f) => within(file, f) || within(real, f));
  if (system) return `it is under ${system}, a system folder, not a place for a log`;
  const stat = fs.statSync(real);
  if (existing !== file) {
    if (!stat.isDirectory()) return `${existing} is a file, so the folder the log needs cannot be made`;
    return canWrite(real, true) ? undefined : `the folder ${existing} is not writable`;
  }
  if (stat.isDirectory()) return 'it is a folder: name a file in it, e.g. job_log.md';
  if (!stat.isFile()) return 'it is not a regular file';
  if (!canWrite(real, false)) return 'the file is not writable';
  // The lock is a folder made beside the log.
  return canWrite(path.dirname(real), true) ? undefined : `its folder ${path.dirname(file)} is not writable`;
}

/**
 * The job log a command that submits writes, checked before anything is created: `--job-log` or
 * RLVR_JOB_LOG relative to `cwd`, else docs/job_log.md of the git repository holding `cwd` (or of
 * `cwd`). A path that cannot be written is bad input (exit 2), said with the flag that fixes it.
 */
export async function writableJobLogPath(options: {
  readonly explicit?: string;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}): Promise<string> {
  const file = await defaultedJobLogPath(options);
  const problem = jobLogPathProblem(file);
  if (problem)
    throw new UserError(
      `the job log ${file} cannot be written: ${problem}. Name another with --job-log <file>.`,
      'BadJobLog',
    );
  return file;
}

/** `resolveJobLogPath` with the repository found from `cwd` (the folder itself outside git). */
export async function defaultedJobLogPath(options: {
  readonly explicit?: string;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}): Promise<string> {
  return resolveJobLogPath({ ...options, repoRoot: (await gitRoot(options.cwd)) ?? options.cwd });
}
