import * as fs from 'node:fs';
import * as path from 'node:path';
import { evaluateMarker, type MarkerEnvironment } from './markers';
import { normalizeName } from './uv-lock';

/** An exact pin (`name==version`) in a requirements file, with where it is. */
export interface RequirementPin {
  readonly name: string;
  readonly version: string;
  readonly file: string;
  readonly line: number;
}

export interface RequirementPins {
  /** The pins that apply on the image's platform (a pin whose marker excludes it is left out). */
  readonly pins: readonly RequirementPin[];
  /** Every `--index-url` / `--extra-index-url` the files name (pip applies them to all packages). */
  readonly indexUrls: readonly string[];
  /** The names of every requirement, pinned or not (PEP 503-normalized). */
  readonly names: readonly string[];
}

/** Logical lines: `\`-continued lines joined, comments and `--hash` options removed, with their first line. */
function logicalLines(text: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let current = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    if (current === '') start = i + 1;
    const line = raw.replace(/(^|\s)#.*$/, '');
    if (/\\\s*$/.test(line)) {
      current += `${line.replace(/\\\s*$/, '')} `;
      return;
    }
    out.push({ text: `${current}${line}`.replace(/\s--hash[=\s]\S+/g, '').trim(), line: start });
    current = '';
  });
  if (current) out.push({ text: current.trim(), line: start });
  return out;
}

/**
 * The exact pins of the trainer's `requirements*.txt` at `root` (ranges are left to the resolver), with
 * their `-r`/`-c` includes inside the folder: the pins a build must not contradict when there is no
 * uv.lock. Pins whose environment marker excludes the image's platform are left out.
 */
export function readRequirementPins(root: string, env: MarkerEnvironment): RequirementPins {
  const pins: RequirementPin[] = [];
  const indexUrls: string[] = [];
  const names = new Set<string>();
  const seen = new Set<string>();
  const read = (file: string) => {
    const real = path.resolve(file);
    if (seen.has(real) || !real.startsWith(path.resolve(root) + path.sep) || !fs.existsSync(real)) return;
    seen.add(real);
    for (const { text, line } of logicalLines(fs.readFileSync(real, 'utf8'))) {
      const include = /^(?:-r|-c|--requirement|--constraint)[=\s]+(\S+)/.exec(text);
      if (include) {
        read(path.join(path.dirname(real), include[1]));
        continue;
      }
      const index = /^(?:-i|--index-url|--extra-index-url)[=\s]+(\S+)/.exec(text);
      if (index) {
        indexUrls.push(index[1]);
        continue;
      }
      const named = /^([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(text);
      if (named) names.add(normalizeName(named[1]));
      const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*===?\s*([^\s;,]+)\s*(?:;\s*(.*))?$/.exec(
        text,
      );
      if (!m) continue;
      let applies = true;
      try {
        applies = m[3] ? evaluateMarker(m[3], env) : true;
      } catch {
        applies = true; // a marker we cannot read: the pin is taken as written
      }
      if (applies) pins.push({ name: normalizeName(m[1]), version: m[2], file: real, line });
    }
  };
  if (!fs.existsSync(root)) return { pins, indexUrls, names: [] };
  for (const name of fs
    .readdirSync(root)
    .filter((f) => /^requirements[^/]*\.txt$/.test(f))
    .sort()) {
    read(path.join(root, name));
  }
  return { pins, indexUrls, names: [...names] };
}
