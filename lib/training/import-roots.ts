import * as path from 'node:path';
import type { Problem } from '../errors';
import {
  findImportRoots,
  missingRoots,
  readPyproject,
  readUvLock,
  shadowedStdlib,
  unreachableImports,
  type ImportRoot,
} from '../python';
import type { StagedSource } from '../source';
import { readRegularText } from '../util';
import { MAX_MODULE_BYTES } from './platform-env';
import { commandScript, type TrainerProfile } from '../trainers';

export interface ImportRootsPlan {
  readonly roots: readonly ImportRoot[];
  /** The plan's line, e.g. `import roots: src/ (rlvr_experiments) ← pyproject.toml: a package in a src layout`. */
  readonly note: string;
  readonly problems: readonly Problem[];
  readonly warnings: readonly Problem[];
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
  const pyproject = files.includes('pyproject.toml') ? readPyproject(staged.root) : undefined;
  const lock = files.includes('uv.lock') ? readUvLock(staged.root) : undefined;
  // What the image installs, never the project itself (the lock lists it, editable).
  const dependencies = [
    ...(pyproject?.dependencies ?? []),
    ...(lock?.packages.filter((p) => p.source.kind === 'registry').map((p) => p.name) ?? []),
  ];
  const named = profile.runtime.importRoots;
  const roots = findImportRoots({
    files,
    pyproject,
    ...(named ? { named: { paths: named.paths, by: `trainer ${profile.id} (${named.cite})` } } : {}),
  });
  const found = [...missingRoots(roots, files)];
  for (const script of [commandScript(input.trainerCommand), input.evalScript]) {
    if (!script || script.startsWith('/') || !files.includes(script)) continue;
    const text = readRegularText(path.join(staged.root, script), MAX_MODULE_BYTES) ?? '';
    found.push(...unreachableImports(script, text, roots, files, dependencies));
  }
  const asProblem = (p: { message: string; hint: string }): Problem => ({
    where: 'trainer source',
    message: p.message,
    hint: p.hint,
  });
  return {
    roots,
    note: `import roots: ${describeImportRoots(roots)}; first on PYTHONPATH for the trainer, its eval script and Ray on every host`,
    problems: found.map(asProblem),
    warnings: shadowedStdlib(roots).map(asProblem),
  };
}
