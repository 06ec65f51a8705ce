import * as fs from 'node:fs';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';
import { CLI_ENV, LOCAL } from '../layout';

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
