import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Problem } from '../errors';
import { findImportRoots, missingRoots, readPyproject, unreachableImports, type ImportRoot } from '../python';
import type { StagedSource } from '../source';
import { commandScript, type TrainerProfile } from '../trainers';

export interface ImportRootsPlan {
  readonly roots: readonly ImportRoot[];
  /** The plan's line, e.g. `import roots: src/ (rlvr_experiments) ← pyproject.toml: a package in a src layout`. */
  readonly note: string;
  readonly problems: readonly Problem[];
}

/** `src/ (rlvr_experiments) ← why; …` */
export function describeImportRoots(roots: readonly ImportRoot[]): string {
  return roots
    .map((r) => {
      const name = r.path === '.' ? 'the source root' : `${r.path}/`;
      const pkgs = r.packages.length
        ? ` (${r.packages.slice(0, 4).join(', ')}${r.packages.length > 4 ? ', …' : ''})`
        : '';
      return `${name}${pkgs} ← ${r.why}`;
    })
    .join('; ');
}

/**
 * Where the trainer's own code is imported from in the job: the import roots of the shipped source (its
 * pyproject.toml's layout, or the profile's), each shipped, and every script the job runs finding the
 * repository's packages it imports at its top.
 */
export function planImportRoots(input: {
  readonly staged: StagedSource;
  readonly profile: TrainerProfile;
  readonly trainerCommand: string;
  /** The eval script, when the job runs the repository's eval watcher. */
  readonly evalScript?: string;
}): ImportRootsPlan {
  const { staged, profile } = input;
  const files = staged.files.map((f) => f.path);
  const shipsPyproject = files.includes('pyproject.toml');
  const named = profile.runtime.importRoots;
  const roots = findImportRoots({
    files,
    pyproject: shipsPyproject ? readPyproject(staged.root) : undefined,
    ...(named ? { named: { paths: named.paths, by: `trainer ${profile.id} (${named.cite})` } } : {}),
  });
  const found = [...missingRoots(roots, files)];
  for (const script of [commandScript(input.trainerCommand), input.evalScript]) {
    if (!script || script.startsWith('/') || !files.includes(script)) continue;
    const text = fs.readFileSync(path.join(staged.root, script), 'utf8');
    found.push(...unreachableImports(script, text, roots, files));
  }
  return {
    roots,
    note: `import roots: ${describeImportRoots(roots)}; first on PYTHONPATH for the trainer, its eval script and Ray on every host`,
    problems: found.map((p) => ({ where: 'trainer source', message: p.message, hint: p.hint })),
  };
}
