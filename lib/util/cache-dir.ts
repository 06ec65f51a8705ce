import * as os from 'node:os';
import * as path from 'node:path';

/** `$XDG_CACHE_HOME/rlvr/<name>` (default ~/.cache): the launcher's local caches, side by side. */
export function rlvrCacheDir(name: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'rlvr', name);
}
