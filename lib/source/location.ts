import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gitRoot } from './git';

/*
 * Which folders may be a job's trainer source. Everything in the folder is read and, unless withheld,
 * uploaded: a system folder (`/etc` with its `shadow`) or the home folder (keys, tokens) never is, and
 * neither is a folder that has nothing to do with the config.
 */

/** Folders refused with everything below them (except inside the home or temporary folder). */
const SYSTEM_TREES = [
  '/etc',
  '/usr',
  '/bin',
  '/sbin',
  '/proc',
  '/sys',
  '/dev',
  '/boot',
  '/var',
  '/root',
  '/private/etc',
  '/private/var',
  '/System',
  '/Library',
];
/** `/lib`, `/lib32`, `/lib64`, `/libx32`… */
const LIB_TREE = /^\/lib[^/]*(\/|$)/;
/** Folders refused themselves (the folders below them are people's own). */
const SYSTEM_FOLDERS = ['/', '/home', '/Users', '/opt', '/mnt', '/media', '/srv', '/tmp', '/private/tmp'];

function inside(parent: string, p: string): boolean {
  const rel = path.relative(parent, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function realOrSelf(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** Why `folder` (absolute) is a system folder or the home folder, or undefined when it is neither. */
export function systemFolderReason(folder: string): string | undefined {
  const homes = [os.homedir()].filter((h) => h !== '' && h !== '/');
  const homeForms = homes.flatMap((h) => [h, realOrSelf(h)]);
  const tmpForms = [os.tmpdir(), realOrSelf(os.tmpdir())];
  for (const p of new Set([path.resolve(folder), realOrSelf(path.resolve(folder))])) {
    if (homeForms.includes(p)) return 'is your home folder (it holds your keys and tokens)';
    if (SYSTEM_FOLDERS.includes(p) || tmpForms.includes(p)) return 'is a system folder';
    const ownFolder = [...homeForms, ...tmpForms].some((mine) => inside(mine, p));
    if (!ownFolder && (LIB_TREE.test(p) || SYSTEM_TREES.some((s) => inside(s, p)))) {
      return 'is a system folder';
    }
  }
  return undefined;
}

/**
 * Why `root` may not be the trainer source of the config at `configAbs`, or undefined when it may. It
 * must be a folder, neither a system folder nor the home folder, and belong with the config: inside
 * the git repository holding the config, or a git checkout of its own (the trainer's repository beside
 * the config's). When neither the config nor the source is in git, "the repository" is the folder tree
 * the config is in: the config's folder, a folder below it, or a folder that holds it.
 */
export async function refusedSourceFolder(
  root: string,
  context: { readonly configAbs: string; readonly configGitRoot: string | undefined },
): Promise<string | undefined> {
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) return 'is not a folder';
  const system = systemFolderReason(root);
  if (system) return system;
  const real = realOrSelf(root);
  const configGit = context.configGitRoot && realOrSelf(context.configGitRoot);
  if (configGit && inside(configGit, real)) return undefined;
  if ((await gitRoot(real)) !== undefined) return undefined;
  if (configGit) {
    return `is outside the git repository holding the config (${context.configGitRoot}) and is not a git checkout`;
  }
  const configDir = realOrSelf(path.dirname(context.configAbs));
  if (inside(configDir, real) || inside(real, configDir)) return undefined;
  return `is not a git checkout, and neither holds the config nor is inside its folder (${path.dirname(context.configAbs)})`;
}
