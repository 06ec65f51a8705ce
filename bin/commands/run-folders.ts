import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UserError } from '../../lib/errors';

/**
 * A name that looks like a path is meant as a local run folder: one that is not there, or is a file,
 * is a slip to name, not a job to look up in S3 (nor an empty table).
 */
export function checkRunFolders(names: readonly string[], cwd: string): void {
  for (const name of names) {
    const abs = path.resolve(cwd, name.startsWith('~/') ? path.join(os.homedir(), name.slice(2)) : name);
    const exists = fs.existsSync(abs);
    const pathLike =
      /^(\.{1,2}|~)?\//.test(name) ||
      name === '.' ||
      name === '..' ||
      (!name.startsWith('s3://') && /[/\\]/.test(name));
    if (exists && !fs.statSync(abs).isDirectory())
      throw new UserError(
        `${name} is a file: eval results reads run folders (results/<run>/) and job names`,
        'NotARunFolder',
      );
    if (pathLike && !exists)
      throw new UserError(
        `${name}: no folder at ${abs} (a local run folder; a job is named without a path)`,
        'NoSuchRunFolder',
      );
  }
}
