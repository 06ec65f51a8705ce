import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatKeyPath, type KeyPath, type YamlFile } from '../config';
import type { Problem } from '../errors';
import type { StagedSource } from '../source';

/*
 * The old launcher staged source by .gitignore and silently dropped *.json, *.txt, docs/ and data/.
 * Here every local file the config names must be in what is shipped, or the plan says so as an error.
 */

const FILE_LIKE = /\.(txt|ya?ml|json|jsonl|md|jinja2?|j2|py|csv|tsv|parquet|arrow)$/i;

/** String values that look like paths (relative, no spaces, not URIs), with where they are. */
export function pathLikeValues(value: unknown, at: KeyPath = []): { path: KeyPath; value: string }[] {
  if (typeof value === 'string') {
    if (/\s/.test(value) || value.includes('://') || value === '') return [];
    return FILE_LIKE.test(value) ? [{ path: at, value }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => pathLikeValues(v, [...at, i]));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => pathLikeValues(v, [...at, k]));
  }
  return [];
}

export function checkReferencedFiles(
  config: Record<string, unknown>,
  file: YamlFile,
  source: StagedSource,
  ignore: readonly KeyPath[],
): { problems: Problem[]; warnings: Problem[] } {
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  const shipped = new Set(source.files.map((f) => f.path));
  const ignored = new Set(ignore.map(formatKeyPath));
  const candidates = pathLikeValues(config).filter(
    (c) => !ignored.has(formatKeyPath(c.path)) && c.path[0] !== 'launcher',
  );
  for (const ref of candidates) {
    if (path.isAbsolute(ref.value)) {
      warnings.push(
        file.problem(ref.path, `"${ref.value}" is an absolute local path; it will not exist inside the job`),
      );
      continue;
    }
    const rel = path.posix.normalize(ref.value.replace(/^\.\//, ''));
    const abs = path.join(source.root, rel);
    if (shipped.has(rel)) continue;
    if (fs.existsSync(abs)) {
      problems.push(
        file.problem(
          ref.path,
          `"${ref.value}" exists in ${source.root} but is not shipped with the job (ignored by git or excluded)`,
          `Add it to launcher.include (e.g. include: ["${rel}"]) or track it in git.`,
        ),
      );
    } else {
      problems.push(
        file.problem(
          ref.path,
          `"${ref.value}" is not in the trainer's source (${source.root}); the trainer resolves it from there`,
          'Fix the path (relative to the trainer source root), or put the file in S3 and use its s3:// URI.',
        ),
      );
    }
  }
  return { problems, warnings };
}
