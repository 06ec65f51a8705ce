import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' });
  return stdout;
}

/** The top of the git work tree containing `dir`, or undefined when it is not in one. */
export async function gitRoot(dir: string): Promise<string | undefined> {
  try {
    return (await git(dir, ['rev-parse', '--show-toplevel'])).trim();
  } catch {
    return undefined;
  }
}

/** Files git tracks plus untracked files it does not ignore, relative to `dir`. */
export async function gitListFiles(dir: string): Promise<string[]> {
  const out = await git(dir, ['ls-files', '-z', '--cached', '--others', '--exclude-standard']);
  return out.split('\0').filter(Boolean);
}

/** The source state a run folder keeps in `patches/`, so a run can be traced to the exact code. */
export interface GitState {
  readonly commit: string | undefined;
  readonly branch: string | undefined;
  readonly dirty: boolean;
  readonly status: string;
  readonly diff: string;
  readonly diffCached: string;
  readonly untracked: string;
}

export async function captureGitState(dir: string): Promise<GitState> {
  const optional = async (args: string[]) => {
    try {
      return await git(dir, args);
    } catch {
      return '';
    }
  };
  const [commit, branch, status, diff, diffCached, untracked] = await Promise.all([
    optional(['rev-parse', 'HEAD']),
    optional(['rev-parse', '--abbrev-ref', 'HEAD']),
    optional(['status', '--porcelain=v1', '--untracked-files=all', '--', '.']),
    optional(['diff', '--binary', '--', '.']),
    optional(['diff', '--cached', '--binary', '--', '.']),
    optional(['ls-files', '--others', '--exclude-standard', '--', '.']),
  ]);
  return {
    commit: commit.trim() || undefined,
    branch: branch.trim() || undefined,
    dirty: status.trim() !== '',
    status,
    diff,
    diffCached,
    untracked,
  };
}
