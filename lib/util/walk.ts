import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Every entry under `dir` (relative paths, `/`-separated), depth first: `visit` returns whether to go
 * into a folder, and folders deeper than `maxDepth` are not entered. A folder that cannot be read (gone
 * while we looked) is skipped.
 */
export function walkTree(
  dir: string,
  maxDepth: number,
  visit: (rel: string, entry: fs.Dirent, depth: number) => boolean | void,
): void {
  const walk = (rel: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(dir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (visit(r, e, depth) === true && e.isDirectory() && depth < maxDepth) walk(r, depth + 1);
    }
  };
  walk('', 0);
}
