import * as fs from 'node:fs';
import * as path from 'node:path';
import { normalizeName } from './uv-lock';

/** An exact pin (`name==version`) in a requirements file, with where it is. */
export interface RequirementPin {
  readonly name: string;
  readonly version: string;
  readonly file: string;
  readonly line: number;
  /** A `--index-url`/`--extra-index-url` the file names before the pin, if any. */
  readonly indexUrl?: string;
}

/**
 * The exact pins of the trainer's `requirements*.txt` at `root` (ranges are left to the resolver): the
 * pins a build must not contradict when there is no uv.lock.
 */
export function readRequirementPins(root: string): RequirementPin[] {
  if (!fs.existsSync(root)) return [];
  const out: RequirementPin[] = [];
  for (const name of fs
    .readdirSync(root)
    .filter((f) => /^requirements[^/]*\.txt$/.test(f))
    .sort()) {
    const file = path.join(root, name);
    let indexUrl: string | undefined;
    fs.readFileSync(file, 'utf8')
      .split('\n')
      .forEach((raw, i) => {
        const text = raw.replace(/\s+#.*$/, '').trim();
        const index = /^--(?:extra-)?index-url[=\s]+(\S+)/.exec(text);
        if (index) indexUrl = index[1];
        const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*===?\s*([^\s;,]+)\s*(?:;.*)?$/.exec(text);
        if (m) {
          out.push({
            name: normalizeName(m[1]),
            version: m[2],
            file,
            line: i + 1,
            ...(indexUrl ? { indexUrl } : {}),
          });
        }
      });
  }
  return out;
}
